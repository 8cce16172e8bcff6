"""int8 encoding for CPUs without native bfloat16: the model's transformer exported to ONNX
once, its weights quantized to int8 per output channel (ONNX Runtime dynamic quantization:
activations quantized per tensor at run time, integer matrix products on AVX2/AVX-512/VNNI),
run by ONNX Runtime, one text at a time and single-threaded (so a text's vector never depends
on its batch; the encoder runs texts side by side);
pooling and normalization stay the model's own torch modules. The FFN output projections stay
in float32: with every linear layer in int8, SciFact's nDCG@10 moved past the 0.002 bound
(docs/encoding.md).

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
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval.cache.store import ArtifactCache, cache_key, default_cache_dir
from heta_eval.encoding.optional import importable

__all__ = [
    "Int8Transformer",
    "OnnxInt8Transformer",
    "cached_folder",
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


class Int8Transformer:
    """What the int8 routes share: the model's transformer run by an int8 runtime
    (:meth:`hidden`: the token embeddings), then the model's own torch modules after it
    (pooling, normalization); ``__call__(features) -> sentence embeddings`` (float32 torch)."""

    def __init__(self, model: Any, input_names: list[str]) -> None:
        self.input_names = input_names
        self.model = model  # the SentenceTransformer: tokenizer and modules
        self.after = list(model)[1:]  # pooling, normalization...
        self._called = False

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
        if self._called:
            return self.hidden(feeds)
        with _FIRST_CALL:  # the first call alone (see _FIRST_CALL)
            hidden = self.hidden(feeds)
            self._called = True
        return hidden


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
        import onnxruntime as ort

        path = _quantized_model(model)
        options = ort.SessionOptions()
        # One thread a run: the encoder runs texts side by side, each on its own thread
        # (several runs of one session at once are safe).
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        super().__init__(model, [i.name for i in self.session.get_inputs()])

    def hidden(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        """One text per call, cut to its own tokens: dynamic quantization scales each
        activation tensor by its maximum, so a batch would give a text's vector a scale set by
        its neighbours and their padding (SciFact nDCG@10 moved by 0.005 between two
        batchings of the same corpus). Alone, a text's vector depends on the text only."""
        mask = feeds["attention_mask"]
        lengths = mask.sum(axis=1)
        out: np.ndarray | None = None
        for row, length in enumerate(lengths.tolist()):
            prefix = bool(mask[row, :length].all())  # right padding: the tokens come first
            cut = slice(0, length) if prefix else slice(None)
            single = {name: value[row : row + 1, cut] for name, value in feeds.items()}
            hidden = self.session.run(None, single)[0]
            if out is None:
                out = np.zeros((len(lengths), mask.shape[1], hidden.shape[2]), hidden.dtype)
            out[row, cut] = hidden[0]
        if out is None:
            raise ValueError("an empty batch: nothing to encode")
        return out


def is_ffn_output(name: str) -> bool:
    """Whether a graph node (by name) is a layer's FFN output projection, which stays in
    float32: its input (GELU outputs, 4x wider) quantizes worst."""
    return "/output/dense/" in name and "/attention/" not in name


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


def model_digest(model: Any) -> str:
    """A digest of the model's weights (part of the cache keys of its exports): the weights
    themselves, so an edited model folder never reuses another's export."""
    digest = hashlib.sha256()
    for name, tensor in model[0].auto_model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().float().cpu().numpy().tobytes())
    return digest.hexdigest()[:16]


def _quantized_model(model: Any) -> Path:
    import onnxruntime
    import torch

    scheme = (SCHEME, FLOAT_FFN_OUTPUT)
    key = cache_key(scheme, model_digest(model), torch.__version__, onnxruntime.__version__)
    path = cached_folder("onnx-int8", key, lambda folder: _export_and_quantize(model, folder))
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


def float_onnx(model: Any) -> Path:
    """The model's transformer exported to ONNX in float32 (``model.onnx`` in a cached folder;
    inputs as the tokenizer names them, output ``hidden``, the token embeddings). The int8
    routes of ONNX Runtime and OpenVINO both start from it, so it is exported once per machine.
    """
    import torch

    key = cache_key("onnx-float32-v1", model_digest(model), torch.__version__)
    return cached_folder("onnx-float32", key, lambda folder: _export(model, folder)) / "model.onnx"


def _export(model: Any, folder: Path) -> None:
    import copy

    import torch

    transformer = copy.deepcopy(model[0].auto_model).float().eval()
    # The eager attention exports to plain ONNX ops that ONNX Runtime fuses.
    transformer.config._attn_implementation = "eager"
    names = [n for n in model.tokenizer.model_input_names if n != "position_ids"]
    sample = model.tokenizer(["a b c", "a b c d e"], padding=True, return_tensors="pt")
    args = tuple(sample[name] for name in names)
    dynamic = {name: {0: "batch", 1: "tokens"} for name in [*names, "hidden"]}
    # The tracer's warnings (data-dependent branches of the attention mask code) do not apply
    # to an encoder whose masks come from the tokenizer.
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Wrapper.build(transformer, names),
            args,
            str(folder / "model.onnx"),
            input_names=names,
            output_names=["hidden"],
            dynamic_axes=dynamic,
            opset_version=17,
            dynamo=False,
        )


def _export_and_quantize(model: Any, folder: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    float_path, int8_path = float_onnx(model), folder / "model_int8.onnx"
    keep_float = []
    if FLOAT_FFN_OUTPUT:
        import onnx

        graph = onnx.load(str(float_path)).graph
        keep_float = [
            node.name
            for node in graph.node
            if node.op_type == "MatMul" and is_ffn_output(node.name)
        ]
    # The quantizer logs a pre-processing hint on the root logger.
    with quieted(logging.getLogger()):
        quantize_dynamic(
            str(float_path),
            str(int8_path),
            per_channel=True,
            weight_type=QuantType.QInt8,
            nodes_to_exclude=keep_float,
        )
