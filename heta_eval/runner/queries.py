"""One mode's queries: every pending case asked of the knowledge base (concurrently, each with
its timeout), scored by the per-case evaluators as it finishes, journaled, and then scored by
the retrieval metrics in one batch; and records journaled before their batch was scored (an
interrupted run) scored again from their stored documents."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Any

from tqdm.auto import tqdm

from heta_eval._runtime import return_free_memory
from heta_eval.models.protocol import BenchmarkEvaluatorProtocol
from heta_eval.models.records import BenchmarkCase, QueryResponse
from heta_eval.models.report import EvaluationFailure
from heta_eval.rag.aggregate import score_case
from heta_eval.retrieval.batch import score_retrieval_batch
from heta_eval.retrieval.collapse import collapse_to_documents
from heta_eval.retrieval.metric import BeirRetrievalMetric
from heta_eval.runner.checks import name_documents, reply_problem
from heta_eval.runner.hits import chunk_hits
from heta_eval.runner.ranking import Ranking
from heta_eval.runner.results import Journal, QueryRecord
from heta_eval.systems.protocol import member

__all__ = ["QueryLoop", "by_config", "rescore_incomplete"]


@dataclass(frozen=True)
class QueryLoop:
    """How queries are run: at most ``concurrency`` at once, each query and each evaluator
    within its timeout (``None``: none), with a progress bar or without."""

    concurrency: int
    query_timeout: float | None
    evaluation_timeout: float | None
    progress: bool

    async def run_mode(
        self,
        kb: Any,
        mode: str,
        cases: Sequence[BenchmarkCase],
        pending: Sequence[BenchmarkCase],
        evaluators: Sequence[BenchmarkEvaluatorProtocol],
        retrieval: Sequence[BeirRetrievalMetric],
        top_k: int,
        journal: Journal | None,
        document_ids: Container[str],
    ) -> list[QueryRecord]:
        """The records of the ``pending`` cases of ``mode`` (``cases``: all of them).

        A knowledge base with ``query_batch`` is asked ``batch_size`` cases at a time (one
        batch at a time: it spreads each batch over the machine itself); a batch that fails
        is asked again case by case, so that a failure costs only its own case.
        """
        if not pending:
            return []
        bar = tqdm(
            total=len(cases),
            initial=len(cases) - len(pending),
            desc=mode,
            unit="case",
            disable=not self.progress,
            dynamic_ncols=True,
        )
        finished: list[QueryRecord] = []
        # Replies kept until scored: never every reply of a deep run at once (SCORE_EVERY).
        unscored: list[QueryRecord] = []
        responses: dict[str, QueryResponse] = {}
        held = 0
        ask = _Ask(self, kb, mode, evaluators, retrieval, top_k, document_ids)

        def score_held() -> None:
            nonlocal held
            if retrieval and responses:
                # The retrieval metrics in one batch, through the one evaluator: a query's
                # scores do not depend on which others share its batch.
                order = [evaluator.name for evaluator in evaluators]
                score_batch(unscored, cases, responses, order, retrieval)
                if journal is not None:
                    for record in unscored:
                        if record.ok:
                            journal.append(record)  # the last record of a case wins on resume
            unscored.clear()
            responses.clear()
            if held >= SCORE_EVERY // 5:  # many replies let go: their memory for the next ones
                return_free_memory()
            held = 0

        def done(record: QueryRecord, response: QueryResponse | None) -> None:
            nonlocal held
            if journal is not None:
                journal.append(record)  # without retrieval scores yet: see score_held
            if response is not None:
                responses[record.case_id] = response
                unscored.append(record)
                held += len(response.results)
            finished.append(record)
            bar.update(1)
            if held >= SCORE_EVERY:
                score_held()

        try:
            if member(kb, "query_batch") is not None:
                size = member(kb, "batch_size")
                for first in range(0, len(pending), size):
                    for record, response in await ask.batch(pending[first : first + size]):
                        done(record, response)
            else:
                semaphore = asyncio.Semaphore(self.concurrency)

                async def one(case: BenchmarkCase) -> None:
                    async with semaphore:
                        record, response = await ask.one(case)
                    done(record, response)

                await asyncio.gather(*(one(case) for case in pending))
        finally:
            bar.close()
        score_held()
        return finished

    async def score_reply(
        self,
        case: BenchmarkCase,
        mode: str,
        raw: Any,
        latency_ms: float,
        evaluators: Sequence[BenchmarkEvaluatorProtocol],
        retrieval: Sequence[BeirRetrievalMetric],
        document_ids: Container[str],
    ) -> tuple[QueryRecord, QueryResponse | None]:
        """One case's reply checked and scored by the per-case evaluators; a reply that
        cannot be kept is a failed record with the reason (and no response)."""
        resolver = retrieval[0].resolver if retrieval else None
        try:
            response = raw if isinstance(raw, QueryResponse) else QueryResponse.model_validate(raw)
            response = name_documents(response, document_ids)
            # The documents kept for the TREC run: the system's own output, self-hits
            # included (the metrics remove them), mapped like the first retrieval metric.
            ranking = collapse_to_documents(
                response, query_id=case.id, resolver=resolver, ignore_identical_ids=False
            )
            collapse = [m.collapse(case, response).metadata() for m in by_config(retrieval)]
            problem = reply_problem(response, list(ranking.scores))
            if problem is not None:
                raise ReplyError(f"reply not kept: {problem}")
            # The chunk hits behind the shown documents, mapped as the ranking was.
            hits = chunk_hits(response.results, list(ranking.scores), resolver)
        except Exception as error:  # any bad reply is recorded against its case
            return _failed(case, mode, f"{type(error).__name__}: {error}", latency_ms), None

        started = time.perf_counter()
        scores = {}
        failures: list[EvaluationFailure] = []
        for evaluator in evaluators:
            if isinstance(evaluator, BeirRetrievalMetric):
                continue  # scored per mode, in one batch (score_batch)
            outcome = await score_case(evaluator, case, response, timeout=self.evaluation_timeout)
            if isinstance(outcome, EvaluationFailure):
                failures.append(outcome)
            else:
                scores[evaluator.name] = outcome
        return QueryRecord(
            case_id=case.id,
            mode=mode,
            query=case.query,
            documents=Ranking.of(ranking.scores, ranking.scores.values()),
            answer=response.answer,
            scores=scores,
            collapse=collapse,
            failures=failures,
            latency_ms=latency_ms,
            evaluation_ms=round((time.perf_counter() - started) * 1000, 3),
            results=len(response.results),
            unmapped_results=ranking.unmapped,
            hits=hits,
        ), response


#: Results held in replies before their retrieval metrics are scored and the replies let go:
#: every reply of SciFact at 1,000 hits (300,000 results) in one batch, MS MARCO's 6,980 at
#: 1,000 in 14.
SCORE_EVERY = 500_000


@dataclass(frozen=True)
class _Ask:
    """How one mode's cases are asked of one knowledge base: one at a time, or in batches."""

    loop: QueryLoop
    kb: Any
    mode: str
    evaluators: Sequence[BenchmarkEvaluatorProtocol]
    retrieval: Sequence[BeirRetrievalMetric]
    top_k: int
    document_ids: Container[str]

    async def one(self, case: BenchmarkCase) -> tuple[QueryRecord, QueryResponse | None]:
        """One case asked (within the query timeout) and scored."""
        started = time.perf_counter()
        try:
            # A knowledge base that answers by id (run files, given vectors) gets the id too.
            by_id = {"query_id": case.id} if member(self.kb, "takes_query_id") else {}
            raw = await asyncio.wait_for(
                self.kb.query(case.query, mode=self.mode, top_k=self.top_k, **by_id),
                self.loop.query_timeout,
            )
        except asyncio.TimeoutError:
            error = f"query timed out after {self.loop.query_timeout}s"
            return _failed(case, self.mode, error, _since(started)), None
        except Exception as error:  # any knowledge-base failure is recorded against its case
            reason = f"{type(error).__name__}: {error}"
            return _failed(case, self.mode, reason, _since(started)), None
        return await self.score(case, raw, _since(started))

    async def batch(
        self, cases: Sequence[BenchmarkCase]
    ) -> list[tuple[QueryRecord, QueryResponse | None]]:
        """Cases asked in one ``query_batch`` call (each case's latency is its share of the
        call); a call that fails or times out asks its cases again one by one."""
        started = time.perf_counter()
        # The batch may take as long as its cases would, ``concurrency`` at a time.
        timeout = self.loop.query_timeout
        if timeout is not None:
            timeout *= -(-len(cases) // self.loop.concurrency)
        try:
            raws = await asyncio.wait_for(
                self.kb.query_batch(
                    [case.query for case in cases],
                    mode=self.mode,
                    top_k=self.top_k,
                    query_ids=[case.id for case in cases],
                ),
                timeout,
            )
            if len(raws) != len(cases):
                raise ValueError(f"{len(raws)} replies to {len(cases)} queries")
        except Exception:  # each case asked alone: a failure is charged to its own case
            return [await self.one(case) for case in cases]
        share = _since(started) / len(cases)
        return [await self.score(case, raw, share) for case, raw in zip(cases, raws, strict=True)]

    async def score(
        self, case: BenchmarkCase, raw: Any, latency_ms: float
    ) -> tuple[QueryRecord, QueryResponse | None]:
        return await self.loop.score_reply(
            case,
            self.mode,
            raw,
            round(latency_ms, 3),
            self.evaluators,
            self.retrieval,
            self.document_ids,
        )


def _since(started: float) -> float:
    """Milliseconds since ``started``."""
    return (time.perf_counter() - started) * 1000


class ReplyError(ValueError):
    """A reply that cannot be kept (a bad id, text that is not text): its query fails."""


def _failed(case: BenchmarkCase, mode: str, error: str, latency_ms: float) -> QueryRecord:
    latency_ms = round(latency_ms, 3)
    return QueryRecord(
        case_id=case.id, mode=mode, query=case.query, error=error, latency_ms=latency_ms
    )


def score_batch(
    records: Sequence[QueryRecord],
    cases: Sequence[BenchmarkCase],
    responses: dict[str, QueryResponse],
    order: Sequence[str],
    retrieval: Sequence[BeirRetrievalMetric],
) -> None:
    """Score one mode's responses with every retrieval metric in one batch and put the
    scores into the records, in evaluator order; the batch time is shared among them."""
    started = time.perf_counter()
    answered = [case for case in cases if case.id in responses]
    # Every case, answered or not: Hole@k counts against every document the cases judge.
    batch = score_retrieval_batch(retrieval, cases, responses)
    share_ms = (time.perf_counter() - started) * 1000 / max(1, len(answered))
    for record in records:
        if record.case_id not in responses:
            continue
        merged = {**batch.get(record.case_id, {}), **record.scores}
        record.scores = {name: merged[name] for name in order if name in merged}
        record.evaluation_ms = round((record.evaluation_ms or 0.0) + share_ms, 3)


def rescore_incomplete(
    done: dict[tuple[str, str], QueryRecord],
    cases: Sequence[BenchmarkCase],
    retrieval: Sequence[BeirRetrievalMetric],
    order: Sequence[str],
) -> None:
    """Records journaled before their mode's batch was scored (an interrupted run) get
    their retrieval scores from their stored documents, mode by mode."""
    names = [metric.name for metric in retrieval]
    # Failed queries (kept for the modes not asked this time) have nothing to score.
    incomplete = [r for r in done.values() if r.ok and any(n not in r.scores for n in names)]
    # The stored documents are already resolved, with self-hits kept: score them as such.
    plain = [
        BeirRetrievalMetric(m.metric, m.k, ignore_identical_ids=m.ignore_identical_ids)
        for m in retrieval
    ]
    for mode in dict.fromkeys(r.mode for r in incomplete):
        records = [r for r in incomplete if r.mode == mode]
        responses = {
            r.case_id: QueryResponse(
                query=r.query,
                results=[{"score": s, "source": {"document_id": d}} for d, s in r.documents],
            )
            for r in records
        }
        score_batch(records, cases, responses, order, plain)
        configs = [m.config for m in by_config(retrieval)]
        for record in records:
            for metric in retrieval:
                stored = record.collapse[configs.index(metric.config)]
                score = record.scores[metric.name]
                if not score.skipped:
                    record.scores[metric.name] = score.model_copy(update={"metadata": stored})


def by_config(retrieval: Sequence[BeirRetrievalMetric]) -> list[BeirRetrievalMetric]:
    """One metric per document-mapping config, in order."""
    return list({metric.config: metric for metric in retrieval}.values())
