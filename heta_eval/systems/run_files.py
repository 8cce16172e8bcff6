"""Run files as a knowledge base: each mode answers a case with its query's ranking in a run
file (a fused run, another toolkit's run), so ``heta-eval run --kb-run MODE=FILE`` writes a
results folder of it that ``report``, ``compare`` and ``leaderboard`` read like any other.

A run answers by query id, not by text: the runner passes each case's id (the knowledge base
says so with ``takes_query_id``). Documents are ranked by score, equal scores by document id
from the highest, as trec_eval ranks them (and as ``heta-eval fuse`` writes them). A case the
run has no line for is answered with an empty ranking (it scores 0, as in ``trec_eval -c``);
:attr:`RunFileKnowledgeBase.unanswered` counts those per mode, and ``heta-eval run`` says how
many there were.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from heta_eval.io.run import read_run
from heta_eval.models.records import QueryResponse, QueryResult

__all__ = ["RunFileKnowledgeBase"]


class RunFileKnowledgeBase:
    """One mode per run file, read once (any format ``heta-eval evaluate --run`` reads).

    >>> import tempfile, asyncio
    >>> path = Path(tempfile.mkdtemp()) / "run.trec"
    >>> _ = path.write_text("q1 Q0 d1 1 0.5 t\\nq1 Q0 d2 2 0.5 t\\nq1 Q0 d3 3 0.9 t\\n")
    >>> kb = RunFileKnowledgeBase({"fused": path})
    >>> reply = asyncio.run(kb.query("any text", mode="fused", top_k=2, query_id="q1"))
    >>> [r.source["document_id"] for r in reply.results]
    ['d3', 'd2']
    """

    #: The runner passes each case's id to :meth:`query`.
    takes_query_id = True

    def __init__(self, runs: Mapping[str, str | Path]) -> None:
        self.modes: tuple[str, ...] = tuple(runs)
        self._rankings = {mode: read_run(Path(path)) for mode, path in runs.items()}
        #: Which file each mode is, by content: part of the results folder's identity.
        self.identity = {
            mode: {"file": str(path), "sha256": _sha256(Path(path))} for mode, path in runs.items()
        }
        self._unanswered: dict[str, set[str]] = {mode: set() for mode in self.modes}

    @property
    def unanswered(self) -> dict[str, int]:
        """Per mode, the queries asked that the run has no line for (each counted once, also
        when a second stage asks it again)."""
        return {mode: len(ids) for mode, ids in self._unanswered.items()}

    async def query(
        self, text: str, *, mode: str, top_k: int, query_id: str | None = None
    ) -> QueryResponse:
        if query_id is None:
            raise ValueError("a run file answers by query id; the runner passes it")
        if mode not in self._rankings:
            raise ValueError(f"no run file for mode {mode!r}; there are {', '.join(self.modes)}")
        scores = self._rankings[mode].get(query_id)
        if scores is None:
            self._unanswered[mode].add(query_id)
            scores = {}
        ranked = sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)
        results = [
            QueryResult(score=score, source={"document_id": doc}) for doc, score in ranked[:top_k]
        ]
        return QueryResponse(query=text, mode=mode, results=results)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
