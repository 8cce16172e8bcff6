"""Dense encoder (a ``sentence-transformers`` model) and exact inner-product search.

One pipeline on every device: texts sorted by length, tokenized by
:class:`~heta_eval.encoding.tokenization.BatchTokenizer` straight into arrays, shaped so that a
text's vector depends on the text and the route only (:mod:`heta_eval.encoding.shapes`: on the CPU
each text alone, single-threaded, texts spread over the cores; on a GPU fixed-shape batches,
tokenized ahead in threads so the host keeps the GPU fed), run through the model's modules in
the chosen precision, L2-normalized in float32. See ``docs/encoding.md``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from heta_eval import config
from heta_eval.encoding.precision import (
    Precision,
    choose_precision,
    device_kind,
    resolve_device,
    resolve_precision,
)
from heta_eval.encoding.routes import route_choice, route_precision
from heta_eval.encoding.runners import (
    DEFAULT_MODEL,
    ModelLoadError,
    cpu_workers,
    default_model_path,
    load_runner,
    run_alone,
)
from heta_eval.encoding.shapes import FixedShapes, alone, shapes
from heta_eval.encoding.tokenization import BatchTokenizer, ahead_threads, tokenized_ahead

__all__ = [
    "CPU_BATCH",
    "DEFAULT_MODEL",
    "ENCODING_VERSION",
    "GPU_BATCH",
    "DenseEncoder",
    "ModelLoadError",
    "default_model_path",
    "embedding_identity",
    "native_bfloat16",
    "resolve_precision",
]

#: Bumped whenever the numbers an encoding produces change (e.g. the int8 scheme): part of
#: the cache key, so vectors of an older scheme are never served. 3: every text shaped on its
#: own (:mod:`heta_eval.encoding.shapes`), no longer batched with its neighbours.
ENCODING_VERSION = 3
#: Texts the CPU hands out to its workers at a time (each runs alone): the unit of progress
#: and of ``on_batch``, which keeps finished work when an encode is interrupted. The vectors
#: do not depend on it.
CPU_BATCH = 16
#: Rows of a GPU batch (its shape is fixed: :class:`~heta_eval.encoding.shapes.FixedShapes`).
GPU_BATCH = 512


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
    *,
    model: str,
    precision: str,
    device: str,
    route: str | None = None,
    batch_size: int | None = None,
) -> dict[str, Any]:
    """What, besides the texts, shapes a corpus's vectors: the model, the resolved precision
    (int8 with its quantization scheme), the device kind, how texts are shaped for the model
    there (:func:`heta_eval.encoding.shapes.shapes`: alone on the CPU; on a GPU fixed batches of
    ``batch_size`` rows, default :data:`GPU_BATCH`) and the encoding version. Caches of
    embeddings key on it, so vectors of one precision or device kind are never served for
    another.

    >>> identity = embedding_identity(model="m", precision="float32", device="cuda:1")
    >>> identity["device"], identity["shapes"]
    ('cuda', 'fixed:512x32')
    """
    if precision == "auto":
        raise ValueError("embedding_identity needs the resolved precision, not 'auto'")
    if precision == "int8" and route == "openvino-int8":  # another engine and scheme
        from heta_eval.encoding import onnx_int8, openvino_int8

        precision = f"int8:{openvino_int8.SCHEME}:{onnx_int8.ffn_names()}"
    elif precision == "int8":  # the quantization scheme shapes the vectors too
        from heta_eval.encoding import onnx_int8

        precision = (
            f"int8:{onnx_int8.SCHEME}:{onnx_int8.ffn_rule()}:scales={onnx_int8.ACTIVATION_SCALES}"
        )
    kind = device_kind(device)
    return {
        "model": model,
        "precision": precision,
        "device": kind,
        "shapes": shapes(kind, batch_size or GPU_BATCH),
        "encoding": ENCODING_VERSION,
    }


_LOAD_LOCK = threading.Lock()
_LOADED: set[tuple[str, str, str]] = set()

#: ``on_batch(rows, vectors)``: a finished batch's row numbers and their vectors.
OnBatch = Callable[[np.ndarray, np.ndarray], None]


class DenseEncoder:
    """Encodes texts into L2-normalized float32 vectors: load the model once, call
    :meth:`encode` as often as needed (calls are serialized; the model is shared).

    ``device`` is ``"auto"`` (CUDA when visible, else the CPU), ``"cpu"`` or ``"cuda[:N]"``.
    ``precision="auto"`` (the default) picks float16 on CUDA; on the CPU its kind of CPU's
    default route (:mod:`heta_eval.encoding.routes`); :attr:`route`, :attr:`route_choice` (why) and
    :attr:`precision` hold the choice. A route name (``"openvino-int8"``,
    ``"onnxruntime-int8"``) may be given too.

    A text's vector depends on the text and the route only, never on the texts encoded with
    it, their order or the batch size (:attr:`shapes`, :mod:`heta_eval.encoding.shapes`). On the CPU
    each text runs alone on one of ``workers`` threads (default: torch's thread count), each
    single-threaded, so the vectors do not depend on the thread count either; ``batch_size``
    (default :data:`CPU_BATCH`, 16) texts are handed out at a time. On a GPU batches have a
    fixed shape: ``batch_size`` rows (default :data:`GPU_BATCH`, 512), part of the vectors'
    identity there, and ``tokenizer_workers`` threads tokenize that many units ahead of the
    model (default 3, or CPUs − 1 where the Rust tokenizer runs single-threaded).

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
        workers: int | None = None,
    ) -> None:
        self.model_name = model
        #: The resolved device, e.g. ``"cpu"`` or ``"cuda"`` (never ``"auto"``).
        self.device = resolve_device(device)
        #: The route (engine and precision, :mod:`heta_eval.encoding.routes`), e.g.
        #: ``openvino-int8``, and why (:class:`~heta_eval.encoding.route_defaults.RouteChoice`:
        #: reason, evidence).
        self.route_choice = route_choice(precision, self.device, model, DenseEncoder)
        self.route = self.route_choice.route
        #: The resolved precision: float32, bfloat16, float16 or int8 (never ``"auto"``).
        self.precision = route_precision(self.route)
        on_cpu = device_kind(self.device) == "cpu"
        self.batch_size = batch_size or (CPU_BATCH if on_cpu else GPU_BATCH)
        #: How texts are shaped for the model (:func:`heta_eval.encoding.shapes.shapes`): ``alone``
        #: on the CPU, ``fixed:<rows>x<bucket>`` on a GPU.
        self.shapes = shapes(device_kind(self.device), self.batch_size)
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self._workers = workers
        # On a GPU the host side is the bottleneck: tokenize ahead in threads. On a CPU the
        # cores are busy with the forward pass, so each unit is tokenized just before it runs.
        self.tokenizer_workers = (
            tokenizer_workers
            if tokenizer_workers is not None
            else (0 if on_cpu else ahead_threads())
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
            runner = load_runner(*self._load_key)
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

    @property
    def workers(self) -> int:
        """CPU threads that encode texts side by side, each single-threaded (default: torch's
        intra-op thread count, e.g. 1 in a Ray actor of one CPU)."""
        if self._workers is None:
            import torch

            return max(1, torch.get_num_threads())
        return self._workers

    def identity(self) -> dict[str, Any]:
        """:func:`embedding_identity` of this encoder (what a cache of its vectors keys on)."""
        identity = embedding_identity(
            model=self.model_name,
            precision=self.precision,
            device=self.device,
            route=self.route,
            batch_size=self.batch_size,
        )
        return {**identity, "shapes": self.shapes}

    def encode(
        self, texts: Sequence[str], *, progress: bool = False, on_batch: OnBatch | None = None
    ) -> np.ndarray:
        """Normalized embeddings of ``texts``, shape ``(len(texts), dim)``, float32.

        ``progress=True`` shows a bar over passages with rate and ETA (on stderr).
        ``on_batch(rows, vectors)`` is called after each unit with its row numbers into
        ``texts`` and their vectors: a caller keeps finished batches there, so that an
        interrupted encode loses at most the batch it was in.
        """
        texts = list(texts)
        # Longest first: on a GPU the length buckets then fill one after the other, and an
        # out-of-memory batch shows up at once.
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
        """Like :meth:`encode`, with the units of work given: ``batches`` are arrays of row
        numbers into ``texts`` that cover each row once. A text's vector does not depend on
        them (:mod:`heta_eval.encoding.shapes`); they set what :meth:`encode`'s ``on_batch`` and
        progress report at a time (on a GPU, the fixed-shape batches, which may mix units).

        >>> encoder = DenseEncoder(device="cpu")
        >>> encoder.encode_batches(["a", "b", "c"], [np.array([2]), np.array([0, 1])]).shape
        (3, 384)
        """
        import torch
        from tqdm.auto import tqdm

        texts = list(texts)
        batches = [np.asarray(rows) for rows in batches if len(rows)]
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        with (
            self._lock,
            tqdm(
                total=len(texts),
                desc=f"encoding ({self.route})",
                unit="passage",
                disable=not progress,
                dynamic_ncols=True,
                smoothing=0.1,
            ) as bar,
        ):
            self.calls += 1
            pause = config.encode_batch_pause()

            def finish(rows: np.ndarray, vectors: np.ndarray) -> None:
                out[rows] = vectors
                bar.update(len(rows))
                if on_batch is not None:
                    on_batch(rows, out[rows])
                if pause:
                    time.sleep(pause)

            if self.shapes == "alone":
                self._encode_alone(texts, batches, finish)
            else:
                with torch.inference_mode():
                    self._encode_fixed(texts, batches, finish)
        return out

    def _encode_alone(self, texts: list[str], batches: list[np.ndarray], finish: OnBatch) -> None:
        """The CPU: each text alone (cut to its own tokens), on one single-threaded worker;
        the next unit's texts are queued while the current one runs. Units finish in order."""
        tokenizer, runner = self._batch_tokenizer(), self.runner
        pool = cpu_workers(self.workers)

        def one(features: dict[str, np.ndarray]) -> np.ndarray:
            import torch

            with torch.inference_mode():  # per thread
                vector = runner(runner.prepare(features))
                # Normalized in float32: a bfloat16 norm is off by up to ~0.2%. For a float32
                # model this is exactly what normalize_embeddings=True computes.
                return torch.nn.functional.normalize(vector.float(), p=2, dim=-1).numpy()

        def split(rows: np.ndarray) -> list[dict[str, np.ndarray]]:
            return alone(tokenizer([texts[i] for i in rows]))

        run_alone(batches, split, one, pool, finish)

    def _encode_fixed(self, texts: list[str], batches: list[np.ndarray], finish: OnBatch) -> None:
        """A GPU: batches of one fixed shape per length bucket, tokenized ahead in threads; a
        batch's vectors are copied back only once the next batch is queued on the device."""
        import torch

        tokenizer, runner = self._batch_tokenizer(), self.runner
        shaper = FixedShapes(
            self.batch_size, tokenizer.max_length, tokenizer.pad_id, tokenizer.left_padding
        )

        def shaped() -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
            for rows, features in self._tokenized(texts, batches):
                yield from shaper.add(rows, features)
            yield from shaper.flush()

        pending: tuple[np.ndarray, Any] | None = None
        # One batch per step: a signal is acted on between two batches (a batch's forward
        # pass runs in native code, which Python does not interrupt).
        for rows, features in shaped():
            vectors = runner(runner.prepare(features))[: len(rows)]
            vectors = torch.nn.functional.normalize(vectors.float(), p=2, dim=-1)
            if pending is not None:
                finish(pending[0], pending[1].cpu().numpy())
            pending = (rows, vectors)
        if pending is not None:
            finish(pending[0], pending[1].cpu().numpy())

    def _tokenized(
        self, texts: list[str], batches: list[np.ndarray]
    ) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
        """(rows, padded token arrays) per unit, in order, ``tokenizer_workers`` units ahead."""
        yield from tokenized_ahead(self._batch_tokenizer(), texts, batches, self.tokenizer_workers)

    def _batch_tokenizer(self) -> BatchTokenizer:
        if self._tokenizer is None:
            model = self.model
            self._tokenizer = BatchTokenizer(model.tokenizer, model.max_seq_length)
        return self._tokenizer

    def close(self) -> None:
        """Nothing to release any more (tokenizer threads end with each :meth:`encode`); kept
        so that callers written for the worker processes of earlier versions keep working."""
