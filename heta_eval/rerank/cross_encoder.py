"""A cross-encoder loaded once per process and checked: what makes a model folder or name a
reranker, and the model that scores (query, document) pairs on the encoder's routes.

A cross-encoder is a sequence-classification model that ``sentence-transformers`` loads as a
``CrossEncoder`` and that gives one score per pair: one output, or one of several named by
``label``. A bi-encoder (a ``SentenceTransformer`` folder with a pooling module) or a model of
several outputs without a label is refused with one line naming what was found
(:class:`CrossEncoderError`), before any weights load.

The score is what ``CrossEncoder.predict`` returns: the logit, widened to float32, through the
model's activation (``Sigmoid`` unless its configuration names another). Routes are the
encoder's (:mod:`heta_eval.encoding.routes`): ``torch-float32``, ``torch-bfloat16`` (the
classification head kept in float32, so scores are not rounded to bfloat16's 8 bits, where
100 candidates would tie), ``torch-float16`` on CUDA and ``onnxruntime-int8`` on the CPU (the
bi-encoder's export and quantization, :mod:`heta_eval.encoding.onnx_int8`: the encoder in
int8, the pooler and classification head in float32; each pair alone).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval.encoding.cpu import this_cpu
from heta_eval.encoding.route_defaults import RouteChoice, default_route
from heta_eval.encoding.routes import route_choice
from heta_eval.encoding.runners import default_model_path

__all__ = [
    "INT8_KINDS",
    "INT8_SCORE_TOLERANCE",
    "RERANK_VERSION",
    "CrossEncoderError",
    "PairModel",
    "check_cross_encoder",
    "demo_cross_encoder",
    "load_pair_model",
    "model_fingerprint",
    "rerank_route",
    "route_scheme",
]

#: Bumped whenever the scores a route gives change (part of the pair cache's key).
RERANK_VERSION = 1
#: The routes a cross-encoder runs on.
ROUTES = ("torch-float32", "torch-bfloat16", "torch-float16", "onnxruntime-int8")
#: The largest difference from float32's score (after the model's activation) the int8 route
#: is held to: the tests bound it on SciFact pairs, and ``auto`` takes int8 for
#: cross-encoders only where it was measured within it, or where the CPU runs the same int8
#: kernels as the CPU it was measured on (docs/rerank.md).
INT8_SCORE_TOLERANCE = 0.075
#: The CPU kinds (:data:`heta_eval.encoding.cpu.KINDS`) whose ``auto`` scores cross-encoders
#: with ``onnxruntime-int8`` (where the encoder's default is that route too), and the evidence;
#: on the other kinds whose encoder default is int8, ``auto`` scores in float32
#: (docs/rerank.md says why for each).
INT8_KINDS: dict[str, str] = {
    "vnni": (
        "inferred, not measured on this kind: on a 2-core AMD EPYC (Zen 4, AVX-512 VNNI) "
        "2026-12, 1,000 SciFact BM25 top-100 pairs, int8 scored 1.66x torch-float32's pairs/s, "
        "largest score difference 0.0435 (bench/rerank_int8_agreement.py; 0.0547 on make "
        "bench's 192 pairs); the bi-encoder's "
        "int8 over float32 there 2.24x, on a VNNI Xeon 2.06x, so about 1.5x expected here, "
        "with the same VNNI int8 kernels"
    ),
}


class CrossEncoderError(ValueError):
    """A model that cannot rerank (not a cross-encoder, several outputs without a label, not
    found): the message names the model and what was found, in one line."""


def _config(model: str) -> dict[str, Any] | None:
    """A local folder's ``config.json`` (``None`` for a name resolved by the Hub)."""
    folder = Path(model)
    if not folder.is_dir():
        return None
    path = folder / "config.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CrossEncoderError(f"{model}: no config.json, not a Hugging Face model") from None
    except (OSError, ValueError) as error:
        raise CrossEncoderError(f"{path}: not readable as JSON ({error})") from None


def check_cross_encoder(model: str, label: str | int | None = None) -> int | None:
    """Refuse a local folder that is not a one-score cross-encoder; the output column to
    score by (``None``: the one output). A Hub name is checked when it loads.

    >>> from heta_eval.encoding.runners import default_model_path
    >>> check_cross_encoder(default_model_path())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    heta_eval.rerank.cross_encoder.CrossEncoderError: ...: not a cross-encoder: config.json names \
BertModel and modules.json a Pooling module (a sentence-transformers bi-encoder); a reranker \
is a ...ForSequenceClassification model
    """
    config = _config(model)
    if config is None:
        return None if label is None else label if isinstance(label, int) else None
    architectures = [str(name) for name in config.get("architectures") or []]
    if not any(name.endswith("ForSequenceClassification") for name in architectures):
        found = ", ".join(architectures) or "no architecture"
        modules = Path(model) / "modules.json"
        pooling = modules.is_file() and "Pooling" in modules.read_text(encoding="utf-8")
        also = " and modules.json a Pooling module (a sentence-transformers bi-encoder)"
        raise CrossEncoderError(
            f"{model}: not a cross-encoder: config.json names {found}{also if pooling else ''}; "
            "a reranker is a ...ForSequenceClassification model"
        )
    from transformers import AutoConfig

    read = AutoConfig.from_pretrained(model)  # its defaults: 2 outputs where none is written
    labels = {str(k): str(v) for k, v in (read.id2label or {}).items()}
    outputs = int(read.num_labels)
    if outputs == 1:
        if label not in (None, 0, "0") and label not in labels.values():
            raise CrossEncoderError(f"{model}: has one output; label {label!r} names none")
        return None
    if label is None:
        names = ", ".join(labels.get(str(i), str(i)) for i in range(outputs))
        raise CrossEncoderError(
            f"{model}: has {outputs} outputs ({names}) and no label was given to score by; "
            "name one (--rerank-label)"
        )
    for index in range(outputs):
        if label in (index, str(index), labels.get(str(index))):
            return index
    raise CrossEncoderError(f"{model}: label {label!r} is not one of its {outputs} outputs")


def model_fingerprint(model: str) -> str:
    """What the model is, for the cache: a local folder by the SHA-256 of its files (so an
    edited or retrained folder never reuses scores), a Hub name by its name.

    >>> model_fingerprint("cross-encoder/ms-marco-MiniLM-L-6-v2")
    'cross-encoder/ms-marco-MiniLM-L-6-v2'
    """
    folder = Path(model)
    if not folder.is_dir():
        return model
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def rerank_route(precision: str, device: str, model: str) -> RouteChoice:
    """The encoder's route for ``precision`` on ``device`` (:func:`route_choice`), kept to the
    cross-encoder's :data:`ROUTES`: ``int8`` (or ``onnxruntime-int8``) asked for runs
    ONNX Runtime's int8; ``openvino-int8`` is refused. Where ``auto`` names an int8 route for
    this CPU, int8 on the :data:`INT8_KINDS`, float32 elsewhere.

    >>> rerank_route("float32", "cpu", "m").route
    'torch-float32'
    >>> rerank_route("openvino-int8", "cpu", "m")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    heta_eval.rerank.cross_encoder.CrossEncoderError: precision 'openvino-int8': ...
    """
    if precision == "openvino-int8":
        raise CrossEncoderError(
            "precision 'openvino-int8': OpenVINO encodes with a bi-encoder only; a "
            "cross-encoder runs float32, bfloat16, float16 or int8 (ONNX Runtime)"
        )
    choice = route_choice(precision, device, model)
    if choice.route == "onnxruntime-int8" and precision == "auto":
        kind = this_cpu().kind
        if kind in INT8_KINDS:
            evidence = f"{INT8_KINDS[kind]}; the encoder's: {choice.evidence}"
            reason = f"{choice.reason}, for cross-encoders too (docs/rerank.md)"
            return RouteChoice(choice.route, reason, evidence)
    elif choice.route in ROUTES:
        return choice
    fallback = default_route()
    return RouteChoice(
        "torch-float32",
        f"{fallback.reason} names {choice.route}, not taken for cross-encoders on this kind "
        "(no measurement that it is faster there within INT8_SCORE_TOLERANCE): float32",
        fallback.evidence,
    )


def route_scheme(route: str) -> str | None:
    """How a route's numbers are made beyond its name, for the pair cache's key: the int8
    quantization scheme (``None`` for torch's routes).

    >>> route_scheme("torch-bfloat16") is None, route_scheme("onnxruntime-int8")[:12]
    (True, 'ort-dynamic-')
    """
    if route != "onnxruntime-int8":
        return None
    from heta_eval.encoding import onnx_int8

    return f"{onnx_int8.SCHEME}:{onnx_int8.ffn_rule()}:head=float32:scales=per-pair"


class PairModel:
    """A cross-encoder on one route: :meth:`tokenize` pairs into padded numpy arrays as
    ``CrossEncoder.predict`` does, ``model(features)`` their scores (float32, numpy).
    Safe to call from several threads at once."""

    def __init__(self, model: Any, device: str, column: int | None, int8: Any = None) -> None:
        self.model = model
        self.device = device
        self.column = column
        self.int8 = int8  # an OnnxInt8Session of the model: its logits, in place of torch's
        self._first = None if int8 is None else _first_call()
        self.tokenizer = model.tokenizer
        self.max_length = int(model.max_seq_length)
        self.pad_id = int(self.tokenizer.pad_token_id or 0)
        self.left_padding = getattr(self.tokenizer, "padding_side", "right") == "left"

    def tokenize(self, pairs: list[tuple[str, str]]) -> dict[str, np.ndarray]:
        return dict(
            self.tokenizer(
                [query for query, _ in pairs],
                [text for _, text in pairs],
                padding=True,
                truncation="longest_first",
                max_length=self.max_length,
                return_tensors="np",
            )
        )

    def _int8_logits(self, features: dict[str, np.ndarray]) -> np.ndarray:
        """The logits of ONNX Runtime's int8 model, each pair alone."""
        names = self.int8.input_names
        feeds = {name: np.asarray(features[name]).astype(np.int64, copy=False) for name in names}
        return np.stack([logits for _, _, logits in self.int8.rows(feeds)])

    def __call__(self, features: dict[str, np.ndarray]) -> np.ndarray:
        import torch

        with torch.inference_mode():
            if self.int8 is not None:  # the first call alone (onnx_int8.FirstCallAlone)
                scores = torch.from_numpy(self._first(self._int8_logits, features)).float()
            else:
                inputs = {
                    key: torch.from_numpy(np.asarray(value)).to(self.device)
                    for key, value in features.items()
                }
                scores = self.model(inputs)["scores"].float()  # as predict: widened
            scores = self.model.activation_fn(scores)
            column = scores[:, self.column] if self.column is not None else scores.reshape(-1)
            return column.float().cpu().numpy()


@lru_cache(maxsize=2)
def load_pair_model(model: str, precision: str, device: str, column: int | None) -> PairModel:
    """``model`` loaded as a ``CrossEncoder`` in ``precision`` (float32, bfloat16, float16;
    int8: exported and quantized by :mod:`heta_eval.encoding.onnx_int8`, cached on disk) on
    ``device``, once per process (its head in float32).

    >>> load_pair_model("/no/such/model", "float32", "cpu", None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    heta_eval.rerank.cross_encoder.CrossEncoderError: cannot load the cross-encoder '/no/such/...
    """
    import torch
    from sentence_transformers import CrossEncoder

    dtype = {"bfloat16": torch.bfloat16, "float16": torch.float16}.get(precision, torch.float32)
    try:
        loaded = CrossEncoder(model, device=device, model_kwargs={"torch_dtype": dtype})
    except (OSError, ValueError) as error:  # no such path or name, not downloadable
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise CrossEncoderError(f"cannot load the cross-encoder {model!r}: {first}") from None
    if not hasattr(loaded, "activation_fn") or loaded.model is None:
        raise CrossEncoderError(f"{model}: loaded, but not as a sequence-classification model")
    outputs = int(loaded.num_labels)
    if outputs > 1 and column is None:
        raise CrossEncoderError(
            f"{model}: has {outputs} outputs and no label was given to "
            "score by; name one (--rerank-label)"
        )
    if dtype != torch.float32:  # the head in float32: scores keep their digits
        heads = [
            name
            for name, module in loaded.named_modules()
            if isinstance(module, torch.nn.Linear) and module.out_features == outputs
        ]
        loaded.set_keep_in_fp32_modules(heads[-1:])
    loaded.eval()
    if precision != "int8":
        return PairModel(loaded, device, column)
    from heta_eval.encoding.onnx_int8 import OnnxInt8Session, classifier_source

    return PairModel(
        loaded, device, column, OnnxInt8Session(classifier_source(loaded.model, loaded.tokenizer))
    )


def _first_call() -> Any:
    from heta_eval.encoding.onnx_int8 import FirstCallAlone

    return FirstCallAlone()


def demo_cross_encoder(folder: str | Path, *, seed: int = 0, outputs: int = 1) -> str:
    """Save an untrained but real cross-encoder in ``folder`` and return its path: the bundled
    all-MiniLM-L6-v2 weights under a ``BertForSequenceClassification`` head of ``outputs``
    outputs drawn from ``seed``. Its scores rank nothing well; it is for examples and tests
    offline (a trained one, e.g. ``cross-encoder/ms-marco-MiniLM-L-6-v2``, is downloaded).

    >>> import tempfile
    >>> path = demo_cross_encoder(tempfile.mkdtemp())
    >>> check_cross_encoder(path) is None  # one output: scored by it
    True
    """
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification
    from transformers.utils import logging as transformers_logging

    source = default_model_path()
    verbosity = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()  # "newly initialized": the head, as meant
    try:
        model = BertForSequenceClassification.from_pretrained(source, num_labels=outputs)
    finally:
        transformers_logging.set_verbosity(verbosity)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer, scale in ((model.bert.pooler.dense, 1.0), (model.classifier, 4.0)):
            shape = layer.weight.shape  # logits spread over a few units
            layer.weight.copy_(torch.randn(shape, generator=generator) * scale / shape[1] ** 0.5)
            layer.bias.zero_()
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(source).save_pretrained(folder)
    return str(folder)
