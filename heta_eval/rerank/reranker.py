"""``CrossEncoderReranker``: BEIR's second stage, scored the way the encoder encodes.

Pairs are sorted by length and handed out in units; a pair's score depends on the pair and
the route only (:mod:`heta_eval.encoding.shapes`): on the CPU each pair runs alone, cut to its
own tokens, on one of the encoder's single-threaded workers
(:func:`~heta_eval.encoding.runners.cpu_workers`); on a GPU in fixed-shape batches. Scores
are kept by (model identity, query, text) (:mod:`heta_eval.rerank.pair_scores`), so a rerun,
another depth or an interrupted rerank reuses every pair scored before.

:meth:`CrossEncoderReranker.rerank` is BEIR's ``Rerank.rerank`` (``beir.reranking``): the
same pairs (query, ``(title + " " + text).strip()``), the same cut (a query's ``top_k`` best
first-stage documents, sorted by score, ties in the order given; all of them in the order
given when there are no more than ``top_k``), the same result (the reranked documents only,
with the model's scores; every query of ``results``, an empty one included).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from heta_eval import interrupts
from heta_eval.cache.store import default_cache_dir
from heta_eval.encoding.precision import device_kind, resolve_device
from heta_eval.encoding.routes import route_precision
from heta_eval.encoding.runners import cpu_workers, run_alone
from heta_eval.encoding.shapes import FixedShapes, alone, shapes
from heta_eval.rerank.cross_encoder import (
    RERANK_VERSION,
    PairModel,
    check_cross_encoder,
    load_pair_model,
    model_fingerprint,
    rerank_route,
    route_scheme,
)
from heta_eval.rerank.pair_scores import PairScores, pair_keys

__all__ = ["CPU_UNIT", "GPU_BATCH", "CrossEncoderReranker", "document_text", "top_documents"]

#: Pairs handed to the CPU workers at a time (the unit of progress and of the cache's writes).
CPU_UNIT = 16
#: Rows of a fixed-shape GPU batch.
GPU_BATCH = 256


def document_text(document: Mapping[str, Any]) -> str:
    """The text BEIR pairs with a query: ``(title + " " + text).strip()``.

    >>> document_text({"title": "Cats", "text": "purr."}), document_text({"text": "x "})
    ('Cats purr.', 'x')
    """
    return (document.get("title", "") + " " + document.get("text", "")).strip()


def top_documents(scores: Mapping[str, float], top_k: int) -> list[str]:
    """The documents BEIR reranks: the ``top_k`` best by score (ties in the order given)
    when there are more, else all of them in the order given.

    >>> top_documents({"a": 1.0, "b": 3.0, "c": 3.0}, 2), top_documents({"a": 1, "b": 3}, 2)
    (['b', 'c'], ['a', 'b'])
    """
    if len(scores) > top_k:
        ranked = sorted(scores.items(), key=lambda item: item[1], reverse=True)
        return [doc for doc, _ in ranked[:top_k]]
    return list(scores)


class CrossEncoderReranker:
    """A cross-encoder that scores (query, text) pairs: load once, call :meth:`score` or
    :meth:`rerank` (BEIR's ``Rerank.rerank``) as often as needed.

    ``model``: a ``sentence-transformers`` ``CrossEncoder`` name or folder (a bi-encoder, or a
    model of several outputs without ``label``, is refused: :class:`CrossEncoderError`).
    ``precision="auto"``: the encoder's route on this device (bfloat16 where the CPU's
    default is bfloat16, float16 on CUDA; where the CPU's default is an int8 route, int8 on
    the kinds :data:`~heta_eval.rerank.cross_encoder.INT8_KINDS` names, else float32);
    ``"int8"``: ONNX Runtime's int8 route; :attr:`route_choice` says why. ``cache_dir``:
    where scores are kept (``None``: the knowledge-base cache folder; ``False``: nowhere).

    >>> import tempfile
    >>> from heta_eval.rerank.cross_encoder import CrossEncoderError
    >>> try:
    ...     CrossEncoderReranker(tempfile.mkdtemp())
    ... except CrossEncoderError as error:
    ...     print(str(error).split(": ", 1)[1])
    no config.json, not a Hugging Face model
    """

    def __init__(
        self,
        model: str,
        *,
        precision: str = "auto",
        device: str = "auto",
        label: str | int | None = None,
        batch_size: int | None = None,
        workers: int | None = None,
        cache_dir: str | Path | Literal[False] | None = None,
    ) -> None:
        self.model_name = str(model)
        self.column = check_cross_encoder(self.model_name, label)
        self.device = resolve_device(device)
        self.route_choice = rerank_route(precision, self.device, self.model_name)
        self.route = self.route_choice.route
        self.precision = route_precision(self.route)
        on_cpu = device_kind(self.device) == "cpu"
        self.batch_size = batch_size or (CPU_UNIT if on_cpu else GPU_BATCH)
        self.shapes = shapes(device_kind(self.device), self.batch_size)
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self._workers = workers
        self._cache_dir = cache_dir
        self._cache: PairScores | None = None
        self._fingerprint: str | None = None
        self._lock = threading.Lock()
        #: Pairs scored by the model, and pairs served from the cache, since it was made.
        self.scored = self.reused = 0

    @property
    def model(self) -> PairModel:
        """The loaded cross-encoder (once per process)."""
        return load_pair_model(self.model_name, self.precision, self.device, self.column)

    @property
    def workers(self) -> int:
        """CPU threads that score pairs side by side, each single-threaded."""
        if self._workers is None:
            import torch

            return max(1, torch.get_num_threads())
        return self._workers

    def identity(self) -> dict[str, Any]:
        """What, besides the pair, shapes a score: the model (a folder by its files' SHA-256),
        the output scored, the route (int8: with its quantization scheme), the device kind,
        the shapes and the score version."""
        if self._fingerprint is None:
            self._fingerprint = model_fingerprint(self.model_name)
        return {
            "model": self._fingerprint,
            "label": self.column,
            "route": self.route,
            "device": device_kind(self.device),
            "shapes": self.shapes,
            "rerank": RERANK_VERSION,
            # int8: its quantization scheme too (torch's routes: no key, so theirs stay)
            **({"scheme": scheme} if (scheme := route_scheme(self.route)) else {}),
        }

    def describe(self) -> dict[str, Any]:
        """The model and route as a results folder records them."""
        choice = self.route_choice
        return {"model": self.model_name, **self.identity(), "route_reason": choice.reason}

    def score(self, pairs: Sequence[tuple[str, str]], *, progress: bool = False) -> np.ndarray:
        """The scores of ``(query, text)`` pairs (float32), as ``CrossEncoder.predict`` gives
        them; pairs kept in the cache are not scored again."""
        from tqdm.auto import tqdm

        pairs = [(str(query), str(text)) for query, text in pairs]
        out = np.empty(len(pairs), dtype=np.float32)
        with self._lock:
            cache = self._pair_cache()
            keys = pair_keys(pairs)
            held = cache.get(keys) if cache is not None else {}
            for index, value in held.items():
                out[index] = value
            todo = [i for i in range(len(pairs)) if i not in held]
            self.reused += len(held)
            lengths = [len(pairs[i][0]) + len(pairs[i][1]) for i in todo]
            order = [todo[i] for i in np.argsort([-n for n in lengths], kind="stable")]
            size = self.batch_size
            units = [np.array(order[i : i + size]) for i in range(0, len(order), size)]
            bar = tqdm(
                total=len(todo),
                desc=f"reranking ({self.route})",
                unit="pair",
                disable=not progress or not todo,
                dynamic_ncols=True,
                smoothing=0.1,
            )

            def finish(rows: np.ndarray, scores: np.ndarray) -> None:
                out[rows] = scores
                if cache is not None:
                    cache.put([keys[i] for i in rows], scores)
                self.scored += len(rows)
                bar.update(len(rows))
                interrupts.check()

            try:
                if self.shapes == "alone":
                    self._score_alone(pairs, units, finish)
                else:
                    self._score_fixed(pairs, units, finish)
            finally:
                bar.close()
                if cache is not None:
                    cache.commit()
        return out

    def rerank(
        self,
        corpus: Mapping[str, Mapping[str, str]],
        queries: Mapping[str, str],
        results: Mapping[str, Mapping[str, float]],
        top_k: int,
        *,
        progress: bool = False,
    ) -> dict[str, dict[str, float]]:
        """BEIR's ``Rerank(model).rerank(corpus, queries, results, top_k)``: each query's
        ``top_k`` best documents of ``results`` rescored (module docstring)."""
        pair_ids = [(q, doc) for q in results for doc in top_documents(results[q], top_k)]
        pairs = [(queries[q], document_text(corpus[doc])) for q, doc in pair_ids]
        scores = self.score(pairs, progress=progress).tolist()
        reranked: dict[str, dict[str, float]] = {q: {} for q in results}
        for (q, doc), value in zip(pair_ids, scores, strict=True):
            reranked[q][doc] = value
        return reranked

    def _pair_cache(self) -> PairScores | None:
        if self._cache_dir is False:
            return None
        if self._cache is None:
            folder = Path(self._cache_dir) if self._cache_dir else default_cache_dir()
            self._cache = PairScores(folder, self.identity())
            cache = self._cache
            interrupts.keep("rerank", lambda: _kept_note(cache))
        return self._cache

    def _score_alone(
        self,
        pairs: list[tuple[str, str]],
        units: list[np.ndarray],
        finish: Callable[[np.ndarray, np.ndarray], None],
    ) -> None:
        """The CPU: each pair alone on one single-threaded worker; the next unit is queued
        while the current one runs; units finish in order."""
        model = self.model

        def split(rows: np.ndarray) -> list[Any]:
            return alone(model.tokenize([pairs[i] for i in rows]))

        run_alone(units, split, model, cpu_workers(self.workers), finish)

    def _score_fixed(
        self,
        pairs: list[tuple[str, str]],
        units: list[np.ndarray],
        finish: Callable[[np.ndarray, np.ndarray], None],
    ) -> None:
        """A GPU: batches of one fixed shape per length bucket."""
        model = self.model
        shaper = FixedShapes(self.batch_size, model.max_length, model.pad_id, model.left_padding)
        for rows in units:
            for batch_rows, features in shaper.add(rows, model.tokenize([pairs[i] for i in rows])):
                finish(batch_rows, model(features)[: len(batch_rows)])
        for batch_rows, features in shaper.flush():
            finish(batch_rows, model(features)[: len(batch_rows)])


def _kept_note(cache: PairScores) -> str | None:
    """What an interrupted rerank keeps (for :mod:`heta_eval.interrupts`)."""
    if not cache.written:
        return None
    return f"{cache.written:,} cross-encoder scores, in {cache.path}"
