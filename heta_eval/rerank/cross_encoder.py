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
100 candidates would tie) and ``torch-float16`` on CUDA.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval.encoding.route_defaults import RouteChoice, default_route
from heta_eval.encoding.routes import route_choice
from heta_eval.encoding.runners import default_model_path

__all__ = [
    "RERANK_VERSION",
    "CrossEncoderError",
    "PairModel",
    "check_cross_encoder",
    "demo_cross_encoder",
    "load_pair_model",
    "model_fingerprint",
    "rerank_route",
]

#: Bumped whenever the scores a route gives change (part of the pair cache's key).
RERANK_VERSION = 1
_TORCH_ROUTES = ("torch-float32", "torch-bfloat16", "torch-float16")


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
    torch routes: where ``auto`` names an int8 route for this CPU (not built for
    cross-encoders), float32; an int8 route asked for is refused.

    >>> rerank_route("float32", "cpu", "m").route
    'torch-float32'
    """
    if precision != "auto" and "int8" in precision:
        raise CrossEncoderError(
            f"precision {precision!r}: the int8 routes encode with a "
            "bi-encoder only; a cross-encoder runs float32, bfloat16 or "
            "float16"
        )
    choice = route_choice(precision, device, model)
    if choice.route in _TORCH_ROUTES:
        return choice
    fallback = default_route()
    return RouteChoice(
        "torch-float32",
        f"{fallback.reason} names {choice.route}, which scores bi-encoders only: float32",
        fallback.evidence,
    )


class PairModel:
    """A cross-encoder on one route: :meth:`tokenize` pairs into padded numpy arrays as
    ``CrossEncoder.predict`` does, ``model(features)`` their scores (float32, numpy).
    Safe to call from several threads at once."""

    def __init__(self, model: Any, device: str, column: int | None) -> None:
        self.model = model
        self.device = device
        self.column = column
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

    def __call__(self, features: dict[str, np.ndarray]) -> np.ndarray:
        import torch

        inputs = {
            key: torch.from_numpy(np.asarray(value)).to(self.device)
            for key, value in features.items()
        }
        with torch.inference_mode():
            scores = self.model(inputs)["scores"].float()  # as predict: widened, then activated
            scores = self.model.activation_fn(scores)
            column = scores[:, self.column] if self.column is not None else scores.reshape(-1)
            return column.float().cpu().numpy()


@lru_cache(maxsize=2)
def load_pair_model(model: str, precision: str, device: str, column: int | None) -> PairModel:
    """``model`` loaded as a ``CrossEncoder`` in ``precision`` (float32, bfloat16, float16) on
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
    return PairModel(loaded, device, column)


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
