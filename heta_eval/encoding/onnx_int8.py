"""int8 encoding for CPUs without native bfloat16: the model's transformer exported to ONNX
once, its weights quantized to int8 per output channel (ONNX Runtime dynamic quantization:
activations quantized per tensor at run time, integer matrix products on AVX2/AVX-512/VNNI),
run by ONNX Runtime, one text at a time and single-threaded (so a text's vector never depends
on its batch; the encoder runs texts side by side);
pooling and normalization stay the model's own torch modules. The FFN output projections stay
in float32: with every linear layer in int8, SciFact's nDCG@10 moved past the 0.002 bound
(docs/encoding.md).

The same export and quantization serve cross-encoders (:func:`classifier_source`,
:mod:`heta_eval.rerank.cross_encoder`): the whole sequence-classification model is exported,
its encoder quantized as a bi-encoder's transformer is, its pooler and classification head
kept in float32 (excluded from quantization), so a pair's logits come out of one graph.

The exported and quantized model is cached on disk (next to the knowledge-base cache), keyed
by the model's files and the torch/ONNX Runtime versions, so only the first use exports it.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval.cache.store import ArtifactCache, cache_key, default_cache_dir
from heta_eval.encoding.optional import importable

__all__ = [
    "FFN_OUTPUT_NAMES",
    "FirstCallAlone",
    "Int8Transformer",
    "OnnxInt8Session",
    "OnnxInt8Transformer",
    "OnnxSource",
    "bi_encoder_source",
    "cached_folder",
    "classifier_source",
    "ffn_names",
    "ffn_rule",
    "float_onnx",
    "is_ffn_output",
    "model_digest",
    "onnxruntime_available",
    "quieted",
]

#: Part of the cache key of the quantized model: bump when the export or quantization changes.
SCHEME = "ort-dynamic-int8-per-channel-v1"
#: Part of the embeddings' identity: each text is run alone (:meth:`OnnxInt8Transformer.hidden`),
#: so its vector does not depend on the texts batched with it.
ACTIVATION_SCALES = "per-text"
#: Keep each layer's FFN output projection in float32: its input (GELU outputs, 4x wider)
#: quantizes worst with one scale per tensor (kept in float32, vectors come closer to float32's:
#: docs/encoding.md).
FLOAT_FFN_OUTPUT = True
#: How each family names a layer's FFN output projection in the exported graph's node names:
#: the BERT family's ``output.dense`` (BERT, MiniLM, MPNet, RoBERTa, XLM-R, ELECTRA, DeBERTa)
#: and DistilBERT's ``ffn.lin2`` (TAS-B). Part of the caches' keys (:func:`ffn_rule`): a name
#: added here keeps another family's projections in float32, so its old vectors must not serve.
FFN_OUTPUT_NAMES = ("/output/dense/", "/ffn/lin2/")


def onnxruntime_available() -> bool:
    """Whether ONNX Runtime and onnx (to export and quantize) are importable.

    >>> isinstance(onnxruntime_available(), bool)
    True
    """
    return importable("onnx", "onnxruntime")


# A runtime's Python binding (pybind11) sets up its numpy bindings on its first call, under a
# C++ static guard and the GIL: two threads making that first call at once can wait on each
# other forever (pybind/pybind11#4877; seen with OpenVINO, both encoding threads stuck in their
# first inference). So each runtime's first call is made alone; later calls run side by side.
_FIRST_CALL = threading.Lock()


class FirstCallAlone:
    """One runtime's guard: its first call is made alone (see ``_FIRST_CALL``), later calls
    side by side.

    >>> FirstCallAlone()(lambda x: x + 1, 1)
    2
    """

    def __init__(self) -> None:
        self.called = False

    def __call__(self, call: Callable[..., Any], *args: Any) -> Any:
        if self.called:
            return call(*args)
        with _FIRST_CALL:
            out = call(*args)
            self.called = True
        return out


def is_ffn_output(name: str) -> bool:
    """Whether a graph node (by name) is a layer's FFN output projection, which stays in
    float32: its input (GELU outputs, 4x wider) quantizes worst.

    >>> is_ffn_output("/encoder/layer.0/output/dense/MatMul")  # BERT, RoBERTa, ...
    True
    >>> is_ffn_output("/transformer/layer.0/ffn/lin2/MatMul")  # DistilBERT
    True
    >>> is_ffn_output("/encoder/layer.0/attention/output/dense/MatMul")
    False
    """
    return "/attention/" not in name and any(part in name for part in FFN_OUTPUT_NAMES)


def _ffn_output_in_float(name: str) -> bool:
    """A transformer's nodes kept in float32 by :data:`FLOAT_FFN_OUTPUT`."""
    return FLOAT_FFN_OUTPUT and is_ffn_output(name)


def ffn_names() -> str:
    """The FFN output projections' names, as the caches' keys carry them (OpenVINO's static
    scheme leaves those projections out of its static quantization).

    >>> ffn_names()
    'ffn-names=/output/dense/|/ffn/lin2/'
    """
    return f"ffn-names={'|'.join(FFN_OUTPUT_NAMES)}"


def ffn_rule() -> str:
    """Which projections stay in float32, as the caches' keys carry it (export, embeddings,
    cross-encoder scores).

    >>> ffn_rule()
    'float-ffn-output=True:ffn-names=/output/dense/|/ffn/lin2/'
    """
    return f"float-ffn-output={FLOAT_FFN_OUTPUT}:{ffn_names()}"


@dataclass(frozen=True)
class OnnxSource:
    """What is exported to ONNX and quantized: a torch ``module`` called with its
    ``tokenizer``'s inputs, its first output named ``output`` with ``output_axes`` (the
    dynamic ones); ``keep_float(node name)``: graph nodes left in float32. ``kind`` tells
    sources of one model apart in the cache keys (empty for a bi-encoder's transformer, whose
    keys predate it)."""

    module: Any
    tokenizer: Any
    output: str = "hidden"
    output_axes: tuple[str, ...] = ("batch", "tokens")
    kind: str = ""
    keep_float: Callable[[str], bool] = field(default=_ffn_output_in_float, compare=False)


def bi_encoder_source(model: Any) -> OnnxSource:
    """A ``SentenceTransformer``'s transformer (its first module): token embeddings out
    (``hidden``), each layer's FFN output projection in float32."""
    return OnnxSource(model[0].auto_model, model.tokenizer)


def classifier_source(model: Any, tokenizer: Any) -> OnnxSource:
    """A sequence-classification model (a cross-encoder's): ``logits`` out; its encoder
    quantized as a bi-encoder's transformer is, everything outside the encoder (the pooler,
    the classification head) kept in float32, so scores keep their digits.

    >>> from heta_eval.encoding.runners import default_model_path
    >>> from transformers import AutoTokenizer, BertForSequenceClassification
    >>> path = default_model_path()
    >>> source = classifier_source(BertForSequenceClassification.from_pretrained(path),
    ...                            AutoTokenizer.from_pretrained(path))
    >>> [source.keep_float(name) for name in ("/transformer/bert/encoder/layer.0/attention/"
    ...     "self/query/MatMul", "/transformer/bert/pooler/dense/Gemm",
    ...     "/transformer/classifier/Gemm")]
    [False, True, True]
    """
    body = f"/transformer/{model.base_model_prefix}/"
    pooler = f"{body}pooler/"

    def keep_float(name: str) -> bool:
        inside = name.startswith(body) and not name.startswith(pooler)
        return not inside or _ffn_output_in_float(name)

    return OnnxSource(model, tokenizer, "logits", ("batch",), "sequence-classification", keep_float)


class Int8Transformer:
    """What the int8 routes share: the model's transformer run by an int8 runtime
    (:meth:`hidden`: the token embeddings), then the model's own torch modules after it
    (pooling, normalization); ``__call__(features) -> sentence embeddings`` (float32 torch)."""

    def __init__(self, model: Any, input_names: list[str]) -> None:
        self.input_names = input_names
        self.model = model  # the SentenceTransformer: tokenizer and modules
        self.after = list(model)[1:]  # pooling, normalization...
        self._first = FirstCallAlone()

    def prepare(self, features: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Host-side preparation ahead of :meth:`__call__`: none (the runtimes read numpy)."""
        return features

    def hidden(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        """The transformer's output for ``feeds`` (int64 inputs, as the runtime names them)."""
        raise NotImplementedError

    def __call__(self, features: dict[str, np.ndarray]) -> Any:
        import torch

        feeds = {name: features[name].astype(np.int64, copy=False) for name in self.input_names}
        state = {key: torch.from_numpy(value) for key, value in features.items()}
        state["token_embeddings"] = torch.from_numpy(self._hidden(feeds))
        for module in self.after:
            state = module(state)
        return state["sentence_embedding"]

    def _hidden(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        return self._first(self.hidden, feeds)  # the first call alone (see _FIRST_CALL)


class OnnxInt8Session:
    """``source`` exported, quantized (cached on disk) and run by ONNX Runtime, one thread a
    run (the callers run inputs side by side, each on its own thread; several runs of one
    session at once are safe). :meth:`rows` runs each row of a batch alone, cut to its own
    tokens: dynamic quantization scales each activation tensor by its maximum, so a batch
    would give a row's output a scale set by its neighbours and their padding (SciFact
    nDCG@10 moved between two batchings of the same corpus: docs/encoding.md). Alone, a
    row's output depends on that row only."""

    def __init__(self, source: OnnxSource) -> None:
        import onnxruntime as ort

        path = _quantized_model(source)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self.session.get_inputs()]

    def rows(self, feeds: dict[str, np.ndarray]) -> Iterator[tuple[int, slice, np.ndarray]]:
        """Each row of ``feeds`` (int64 inputs, as the session names them) run alone: its
        index, its tokens' span and its first output without the batch axis."""
        mask = feeds["attention_mask"]
        for row, length in enumerate(mask.sum(axis=1).tolist()):
            prefix = bool(mask[row, :length].all())  # right padding: the tokens come first
            cut = slice(0, length) if prefix else slice(None)
            single = {name: value[row : row + 1, cut] for name, value in feeds.items()}
            yield row, cut, self.session.run(None, single)[0][0]


class OnnxInt8Transformer(Int8Transformer):
    """Runs a sentence-transformers model with its first (transformer) module in int8 under
    ONNX Runtime: ``__call__(features) -> sentence embeddings`` (a float32 torch tensor).

    >>> from heta_eval.encoding.runners import load_runner
    >>> runner = load_runner("all-MiniLM-L6-v2", "int8", "cpu")
    >>> runner({"input_ids": np.array([[101, 4937, 102]]),
    ...         "token_type_ids": np.zeros((1, 3), dtype=np.int64),
    ...         "attention_mask": np.ones((1, 3), dtype=np.int64)}).shape
    torch.Size([1, 384])
    """

    def __init__(self, model: Any) -> None:
        self.runtime = OnnxInt8Session(bi_encoder_source(model))
        super().__init__(model, self.runtime.input_names)

    def hidden(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        """One text per call, cut to its own tokens (:meth:`OnnxInt8Session.rows`), so a
        text's vector depends on the text only."""
        mask = feeds["attention_mask"]
        out: np.ndarray | None = None
        for row, cut, hidden in self.runtime.rows(feeds):
            if out is None:
                out = np.zeros((len(mask), mask.shape[1], hidden.shape[-1]), hidden.dtype)
            out[row, cut] = hidden
        if out is None:
            raise ValueError("an empty batch: nothing to encode")
        return out


@contextmanager
def quieted(logger: logging.Logger) -> Iterator[None]:
    """``logger`` at ERROR for the block (the quantizers log progress and hints at INFO)."""
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def cached_folder(kind: str, key: str, build: Callable[[Path], None]) -> Path:
    """The folder ``build`` fills, cached as ``kind`` under ``key`` (built on first use); with
    an unwritable cache, built into a temporary folder for this process."""
    try:
        path, _ = ArtifactCache(default_cache_dir()).get_or_build(kind, key, build)
    except OSError:
        path = Path(tempfile.mkdtemp(prefix=f"heta-eval-{kind}-"))
        build(path)
    return path


def model_digest(module: Any) -> str:
    """A digest of a torch module's weights (part of the cache keys of its exports): the
    weights themselves, so an edited model folder never reuses another's export."""
    digest = hashlib.sha256()
    for name, tensor in module.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().float().cpu().numpy().tobytes())
    return digest.hexdigest()[:16]


def _kind(source: OnnxSource) -> tuple[str, ...]:
    """The source's kind in its cache keys (none for a bi-encoder: its keys stay as they were)."""
    return (source.kind,) if source.kind else ()


def _quantized_model(source: OnnxSource) -> Path:
    import onnxruntime
    import torch

    scheme = (SCHEME, ffn_rule())
    versions = (torch.__version__, onnxruntime.__version__)
    key = cache_key(scheme, model_digest(source.module), *versions, *_kind(source))
    path = cached_folder("onnx-int8", key, lambda folder: _export_and_quantize(source, folder))
    return path / "model_int8.onnx"


class _Wrapper:  # built lazily: torch is imported only when an export happens
    @staticmethod
    def build(transformer: Any, names: list[str]) -> Any:
        import torch

        class Wrapper(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.transformer = transformer

            def forward(self, *inputs: Any) -> Any:
                return self.transformer(**dict(zip(names, inputs, strict=True)))[0]

        return Wrapper()


def float_onnx(source: OnnxSource) -> Path:
    """``source`` exported to ONNX in float32 (``model.onnx`` in a cached folder; inputs as the
    tokenizer names them, one output as the source names it: ``hidden``, a bi-encoder's token
    embeddings). The int8 routes of ONNX Runtime and OpenVINO both start from it, so it is
    exported once per machine."""
    import torch

    key = cache_key(
        "onnx-float32-v1", model_digest(source.module), torch.__version__, *_kind(source)
    )
    folder = cached_folder("onnx-float32", key, lambda folder: _export(source, folder))
    return folder / "model.onnx"


def _export(source: OnnxSource, folder: Path) -> None:
    import copy

    import torch

    transformer = copy.deepcopy(source.module).float().eval()
    # The eager attention exports to plain ONNX ops that ONNX Runtime fuses.
    transformer.config._attn_implementation = "eager"
    tokenizer = source.tokenizer
    names = [n for n in tokenizer.model_input_names if n != "position_ids"]
    sample = tokenizer(["a b c", "a b c d e"], padding=True, return_tensors="pt")
    args = tuple(sample[name] for name in names)
    dynamic = {name: {0: "batch", 1: "tokens"} for name in names}
    dynamic[source.output] = dict(enumerate(source.output_axes))
    # The tracer's warnings (data-dependent branches of the attention mask code) do not apply
    # to an encoder whose masks come from the tokenizer.
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Wrapper.build(transformer, names),
            args,
            str(folder / "model.onnx"),
            input_names=names,
            output_names=[source.output],
            dynamic_axes=dynamic,
            opset_version=17,
            dynamo=False,
        )


def _export_and_quantize(source: OnnxSource, folder: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    float_path, int8_path = float_onnx(source), folder / "model_int8.onnx"
    graph = onnx.load(str(float_path)).graph
    # The nodes to quantize named, not the ones to keep: the quantizer rewrites each Gemm (a
    # classification head's) into a MatMul of another name before it reads an exclusion list.
    quantize = [node.name for node in graph.node if not source.keep_float(node.name)]
    # The quantizer logs a pre-processing hint on the root logger.
    with quieted(logging.getLogger()):
        quantize_dynamic(
            str(float_path),
            str(int8_path),
            per_channel=True,
            weight_type=QuantType.QInt8,
            nodes_to_quantize=quantize,
        )
