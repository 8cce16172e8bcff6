"""int8 encoding through OpenVINO: the model's transformer (the float32 ONNX export shared
with the ONNX Runtime route) in int8 throughout, run by OpenVINO's CPU plugin (VNNI or AMX
integer kernels where the CPU has them); pooling and normalization stay the model's own torch
modules. Two schemes, chosen by what each layer tolerates:

* every linear layer but the FFN output projections, and the attention's products: quantized
  **statically** by NNCF (int8 weights per output channel, int8 activations with scales
  calibrated once, each calibration passage alone as the encoder runs it, on a fixed set of
  English passages; SmoothQuant and bias correction as NNCF's transformer preset applies
  them);
* each layer's FFN output projection, whose input (the GELU outputs, 4x wider) quantizes worst
  with one scale per tensor (every layer static fell under the 0.99 cosine bound on SciFact
  abstracts): int8 weights per output channel, activations quantized at run time by OpenVINO
  per token in groups of :data:`GROUP` channels. A token's scales depend on that token only,
  so a text's vector still depends on the text only. In float32 instead, these products took
  a large share of the time (docs/encoding.md).

Everything not quantized runs in float32 on every CPU (OpenVINO would otherwise pick bfloat16
where the CPU has it, so vectors would differ from CPU to CPU).

The quantized model is cached on disk (``openvino-int8-<key>`` next to the knowledge-base
cache), keyed by the model's weights, the OpenVINO and NNCF versions and the calibration
passages, so only the first use on a machine quantizes it (slow: docs/encoding.md).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval.cache.store import cache_key
from heta_eval.encoding.calibration_texts import CALIBRATION_TEXTS
from heta_eval.encoding.onnx_int8 import (
    Int8Transformer,
    bi_encoder_source,
    cached_folder,
    ffn_names,
    float_onnx,
    is_ffn_output,
    model_digest,
    quieted,
)
from heta_eval.encoding.optional import importable
from heta_eval.encoding.tokenization import BatchTokenizer

__all__ = ["SCHEME", "OpenVinoInt8Transformer", "openvino_available"]

#: Part of the cache key and of the embedding identity: bump when the quantization changes.
SCHEME = "openvino-nncf-static-int8-ffn-output-dynamic-int8-g128-v3"
#: Input channels that share one activation scale, per token, in the FFN output projections
#: (OpenVINO's dynamic quantization; 32 gave the same cosines and ran slower).
GROUP = 128


def openvino_available() -> bool:
    """Whether OpenVINO, NNCF (to quantize) and onnx (to export) are importable.

    >>> isinstance(openvino_available(), bool)
    True
    """
    return importable("nncf", "onnx", "openvino")


class OpenVinoInt8Transformer(Int8Transformer):
    """Runs a sentence-transformers model with its transformer in int8 under OpenVINO:
    ``__call__(features) -> sentence embeddings`` (a float32 torch tensor). ``streams``
    inferences run at once, each on one thread (the encoder runs texts side by side, each
    calling from its own thread, which gets its own inference request).
    """

    def __init__(self, model: Any, *, streams: int) -> None:
        import openvino as ov

        core = ov.Core()
        config = {
            "INFERENCE_NUM_THREADS": max(1, streams),
            "NUM_STREAMS": max(1, streams),
            "INFERENCE_PRECISION_HINT": "f32",
            "DYNAMIC_QUANTIZATION_GROUP_SIZE": GROUP,
        }
        path = str(_quantized_model(model))
        self.compiled = core.compile_model(core.read_model(path), "CPU", config)
        self._requests = threading.local()
        super().__init__(model, [port.get_any_name() for port in self.compiled.inputs])

    def hidden(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        request = getattr(self._requests, "request", None)
        if request is None:
            request = self._requests.request = self.compiled.create_infer_request()
        # The output tensor is reused by the next inference: copy it out.
        return np.array(request.infer(feeds)[0], dtype=np.float32, copy=True)


def _quantized_model(model: Any) -> Path:
    import nncf
    import openvino

    key = cache_key(
        SCHEME,
        ffn_names(),
        model_digest(model[0].auto_model),
        openvino.__version__,
        nncf.__version__,
        CALIBRATION_TEXTS,
    )
    folder = cached_folder("openvino-int8", key, lambda path: _quantize(model, path))
    return folder / "model_int8.xml"


def _calibration_batches(model: Any) -> list[dict[str, np.ndarray]]:
    """Each calibration passage alone, as the encoder runs texts (no padding in the ranges)."""
    tokenizer = BatchTokenizer(model.tokenizer, model.max_seq_length)
    batches = [tokenizer([text]) for text in CALIBRATION_TEXTS]
    return [{k: v.astype(np.int64, copy=False) for k, v in b.items()} for b in batches]


def _quantize(model: Any, folder: Path) -> None:
    import nncf
    import openvino as ov

    float_model = ov.Core().read_model(str(float_onnx(bi_encoder_source(model))))
    batches = _calibration_batches(model)
    ffn_output = [
        op.get_friendly_name()
        for op in float_model.get_ops()
        if op.get_type_name() == "MatMul" and is_ffn_output(op.get_friendly_name())
    ]
    with quieted(logging.getLogger("nncf")):  # NNCF logs its progress bars and hints at INFO
        quantized = nncf.quantize(
            float_model,
            nncf.Dataset(batches),
            model_type=nncf.ModelType.TRANSFORMER,
            subset_size=len(batches),
            ignored_scope=nncf.IgnoredScope(names=ffn_output),
        )
        # What static quantization left in float: the FFN output projections (not the
        # embeddings' lookups). Their weights become int8; OpenVINO quantizes their
        # activations per token when it runs them (DYNAMIC_QUANTIZATION_GROUP_SIZE).
        quantized = nncf.compress_weights(
            quantized,
            mode=nncf.CompressWeightsMode.INT8_SYM,
            ignored_scope=nncf.IgnoredScope(types=["Gather"]),
        )
    ov.save_model(quantized, str(folder / "model_int8.xml"))
