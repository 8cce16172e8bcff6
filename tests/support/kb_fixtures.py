"""Small, real knowledge bases and benchmarks for runner tests (no mocks of the runner)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from heta_eval.adapters.scifact_claims import SciFactClaimsBenchmark
from heta_eval.evaluation import (
    AnswerExactMatch,
    BenchmarkCase,
    Document,
    EvidenceRecallAtK,
    QueryResponse,
    beir_default_metrics,
)

DOCS = {
    "cats": "Cats purr when they are content. Cats sleep most of the day.",
    "dogs": "Dogs bark at strangers. Dogs are loyal companions.",
    "birds": "Birds sing at dawn. Many birds migrate south in winter.",
    "fish": "Fish breathe through gills. Some fish live in salt water.",
    "q5": "A document whose id equals a query id: a self-hit the metrics must drop.",
}


class AnimalBenchmark:
    """A tiny benchmark with relevance, evidence and answers."""

    name = "animals"

    def __init__(self, n_cases: int = 8, *, numbered: bool = False) -> None:
        topics = [
            ("cats", "do cats purr", "yes"),
            ("dogs", "why do dogs bark", "strangers"),
            ("birds", "when do birds sing", "dawn"),
            ("fish", "how do fish breathe", "gills"),
        ]
        self._cases = []
        for i in range(n_cases):
            doc, query, answer = topics[i % len(topics)]
            self._cases.append(
                BenchmarkCase(
                    id=f"q{i}",
                    query=f"{query} #{i}" if numbered else query,
                    expected={
                        "relevance": {doc: 1, "fish": 0} if doc != "fish" else {doc: 2},
                        "answers": [answer],
                        "evidence": [{"locator": {"document_id": doc}}],
                    },
                )
            )

    def documents(self):
        return [Document(id=doc_id, text=text) for doc_id, text in DOCS.items()]

    def cases(self):
        return self._cases

    def evaluators(self):
        return (
            *beir_default_metrics(k_values=(1, 3, 10)),
            EvidenceRecallAtK(1),
            AnswerExactMatch(),
        )


class KeywordOverlapKB:
    """Ranks documents by word overlap with the query; answers with the top doc's last word.

    Queries can be logged to a file (one line per call) and slowed down, and chosen
    queries can fail or hang: the runner tests use this to kill, fail and resume runs.
    """

    modes = ("keyword_search",)

    def __init__(
        self,
        *,
        log: Path | None = None,
        delay: float = 0.0,
        fail_on: tuple[str, ...] = (),
        hang_on: tuple[str, ...] = (),
    ) -> None:
        self.log = log
        self.delay = delay
        self.fail_on = fail_on
        self.hang_on = hang_on

    async def query(self, text: str, *, mode: str, top_k: int) -> QueryResponse:
        if self.log is not None:
            with self.log.open("a", encoding="utf-8") as handle:
                handle.write(text + "\n")
                handle.flush()
                os.fsync(handle.fileno())
        if self.delay:
            time.sleep(self.delay)  # a CPU-bound system: blocks like a real in-process index
        if text in self.fail_on:
            raise ConnectionError(f"backend refused {text!r}")
        if text in self.hang_on:
            await asyncio.sleep(3600)
        words = set(text.lower().split())
        scored = sorted(
            (
                (len(words & set(body.lower().replace(".", "").split())), doc)
                for doc, body in DOCS.items()
            ),
            reverse=True,
        )
        results = []
        for score, doc in scored[:top_k]:
            for part, sentence in enumerate(DOCS[doc].split(". ")):
                results.append(
                    {
                        "text": sentence,
                        "score": float(score) - part * 0.5,
                        "source": {"document_id": doc, "chunk_id": f"{doc}#{part}"},
                    }
                )
        results.sort(key=lambda r: -r["score"])
        answer = results[0]["text"].rstrip(".").split()[-1] if results else None
        return QueryResponse(query=text, mode=mode, results=results, answer=answer)


class FirstClaims(SciFactClaimsBenchmark):
    """The first ``n`` dev claims over the whole corpus (keeps the test fast)."""

    def __init__(self, n: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.n = n

    def cases(self):
        return super().cases()[: self.n]
