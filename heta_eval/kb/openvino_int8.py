"""int8 encoding through OpenVINO: the model's transformer (the float32 ONNX export shared
with the ONNX Runtime route) quantized statically by NNCF (int8 weights per output channel,
int8 activations with scales calibrated once on a fixed set of English passages, SmoothQuant
and bias correction as NNCF's transformer preset applies them), run by OpenVINO's CPU plugin
(VNNI or AMX integer kernels where the CPU has them, AVX2 otherwise); pooling and
normalization stay the model's own torch modules. Each layer's FFN output projection stays in
float32, as in the ONNX Runtime route (its input, the GELU outputs, quantizes worst: on 96
SciFact abstracts mean cosine to float32 0.9964 -> 0.9982, min 0.9937 -> 0.9967), and
everything not quantized runs in float32 on every CPU (OpenVINO would otherwise pick bfloat16
where the CPU has it, so vectors would differ from CPU to CPU).

The quantized model is cached on disk (``openvino-int8-<key>`` next to the knowledge-base
cache), keyed by the model's weights, the OpenVINO and NNCF versions and the calibration
passages, so only the first use on a machine quantizes it (tens of seconds on 2 cores).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval.kb.cache import cache_key
from heta_eval.kb.calibration_texts import CALIBRATION_TEXTS
from heta_eval.kb.onnx_int8 import (
    Int8Transformer,
    cached_folder,
    float_onnx,
    is_ffn_output,
    model_digest,
    quieted,
)
from heta_eval.kb.optional import importable
from heta_eval.kb.tokenization import BatchTokenizer

__all__ = ["SCHEME", "OpenVinoInt8Transformer", "openvino_available"]

#: Part of the cache key and of the embedding identity: bump when the quantization changes.
SCHEME = "openvino-nncf-static-int8-ffn-output-float-v2"
#: Passages a calibration batch holds (NNCF collects activation statistics batch by batch).
_CALIBRATION_BATCH = 4


def openvino_available() -> bool:
    """Whether OpenVINO, NNCF (to quantize) and onnx (to export) are importable.

    >>> isinstance(openvino_available(), bool)
    True
    """
    return importable("nncf", "onnx", "openvino")


class OpenVinoInt8Transformer(Int8Transformer):
    """Runs a sentence-transformers model with its transformer in int8 under OpenVINO:
    ``__call__(features) -> sentence embeddings`` (a float32 torch tensor), on ``threads``
    CPU threads, one inference at a time (the encoder's batches are its parallelism).
    """

    def __init__(self, model: Any, *, threads: int) -> None:
        import openvino as ov

        core = ov.Core()
        config = {
            "INFERENCE_NUM_THREADS": max(1, threads),
            "PERFORMANCE_HINT": "LATENCY",
            "NUM_STREAMS": 1,
            "INFERENCE_PRECISION_HINT": "f32",
        }
        compiled = core.compile_model(core.read_model(str(_quantized_model(model))), "CPU", config)
        self.request = compiled.create_infer_request()
        super().__init__(model, [port.get_any_name() for port in compiled.inputs])

    def hidden(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        # The output tensor is reused by the next inference: copy it out.
        return np.array(self.request.infer(feeds)[0], dtype=np.float32, copy=True)


def _quantized_model(model: Any) -> Path:
    import nncf
    import openvino

    key = cache_key(
        SCHEME, model_digest(model), openvino.__version__, nncf.__version__, CALIBRATION_TEXTS
    )
    folder = cached_folder("openvino-int8", key, lambda path: _quantize(model, path))
    return folder / "model_int8.xml"


def _calibration_batches(model: Any) -> list[dict[str, np.ndarray]]:
    tokenizer = BatchTokenizer(model.tokenizer, model.max_seq_length)
    texts = sorted(CALIBRATION_TEXTS, key=len, reverse=True)
    step = _CALIBRATION_BATCH
    batches = [tokenizer(texts[i : i + step]) for i in range(0, len(texts), step)]
    return [{k: v.astype(np.int64, copy=False) for k, v in b.items()} for b in batches]


def _quantize(model: Any, folder: Path) -> None:
    import nncf
    import openvino as ov

    float_model = ov.Core().read_model(str(float_onnx(model)))
    batches = _calibration_batches(model)
    ffn_output = [
        op.get_friendly_name() for op in float_model.get_ops()
        if op.get_type_name() == "MatMul" and is_ffn_output(op.get_friendly_name())
    ]  # fmt: skip
    with quieted(logging.getLogger("nncf")):  # NNCF logs its progress bars and hints at INFO
        quantized = nncf.quantize(
            float_model,
            nncf.Dataset(batches),
            model_type=nncf.ModelType.TRANSFORMER,
            subset_size=len(batches),
            ignored_scope=nncf.IgnoredScope(names=ffn_output),
        )
    ov.save_model(quantized, str(folder / "model_int8.xml"))
