"""``BeirRetrievalMetric``: the per-case retrieval evaluator. It collapses a chunk-level
``QueryResponse`` to documents (:mod:`heta_eval.retrieval.collapse`) and scores it with
:func:`~heta_eval.retrieval.run.evaluate_run`; ``evaluate_responses`` and the runner score many
cases in one batch (:mod:`heta_eval.retrieval.batch`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from heta_eval.measures.measure import BEIR_K_VALUES, METRICS, Measure, legacy_measure, measure_key
from heta_eval.retrieval.collapse import DocumentRanking, DocumentResolver, collapse_to_documents
from heta_eval.retrieval.plan import validate_k_values, validate_metrics
from heta_eval.retrieval.run import evaluate_run

if TYPE_CHECKING:  # pydantic's models load with the evaluator, not for a run file
    from heta_eval.models.records import BenchmarkCase, EvaluationScore, QueryResponse

__all__ = ["BeirRetrievalMetric", "beir_default_metrics"]


class BeirRetrievalMetric:
    """A BEIR retrieval metric (``ndcg``, ``map``, ``recall``, ``precision``, ``mrr``,
    ``r_cap``, ``hole`` or ``accuracy``) at k.

    Chunk hits are mapped to benchmark documents (see ``collapse_to_documents``); ``k`` counts
    documents after deduplication. The per-case value is the pytrec_eval (or BEIR
    ``evaluate_custom``) value of that query; aggregated with ``evaluate_responses`` the means
    equal BEIR's. ``hole`` counts the documents that no case judges, so it needs every case:
    ``evaluate_responses`` and the runner score it, a lone ``evaluate`` call refuses it.

    >>> import asyncio
    >>> metric = BeirRetrievalMetric(metric="ndcg", k=10)
    >>> from heta_eval.evaluation import BenchmarkCase, QueryResponse
    >>> case = BenchmarkCase(id="q1", query="?", expected={"relevance": {"d1": 1}})
    >>> response = QueryResponse(query="?", results=[
    ...     {"score": 2.0, "source": {"document_id": "d2"}},
    ...     {"score": 1.0, "source": {"document_id": "d1"}}])
    >>> score = asyncio.run(metric.evaluate(case=case, response=response))
    >>> score.name, round(score.value, 5)
    ('ndcg@10', 0.63093)
    """

    def __init__(
        self,
        metric: str = "ndcg",
        k: int = 10,
        *,
        resolver: DocumentResolver | None = None,
        ignore_identical_ids: bool = True,
    ) -> None:
        validate_metrics([metric])
        validate_k_values([k])
        self.metric = metric
        self.k = k
        self.resolver = resolver
        self.ignore_identical_ids = ignore_identical_ids

    @property
    def name(self) -> str:
        """The evaluator's name, e.g. ``ndcg@10`` (:attr:`Measure.evaluator_name`)."""
        return self.measure.evaluator_name or ""

    @property
    def key(self) -> str:
        """BEIR's key for this measure, e.g. ``NDCG@10``."""
        return measure_key(self.metric, self.k)

    @property
    def measure(self) -> Measure:
        """This metric as a :class:`~heta_eval.measures.measure.Measure`."""
        return legacy_measure(self.metric, self.k)

    @property
    def config(self) -> tuple[Any, ...]:
        """Evaluators with equal configs share their document mapping (one batch pass)."""
        return (self.resolver, self.ignore_identical_ids)

    def __repr__(self) -> str:
        return f"BeirRetrievalMetric(metric={self.metric!r}, k={self.k})"

    def collapse(self, case: BenchmarkCase, response: QueryResponse) -> DocumentRanking:
        return collapse_to_documents(
            response,
            query_id=case.id,
            resolver=self.resolver,
            ignore_identical_ids=self.ignore_identical_ids,
        )

    async def evaluate(self, *, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
        """One case, through the one evaluator (``evaluate_responses`` batches many)."""
        from heta_eval.models.records import EvaluationScore  # heavy (pydantic)

        if not case.expected.relevance:
            return EvaluationScore.skip(self.name, "case has no relevance judgments")
        if self.metric == "hole":
            raise ValueError(
                f"{self.name} counts documents that no case judges: score it over all the "
                f"cases with evaluate_responses (or the runner), not one case at a time"
            )
        ranking = self.collapse(case, response)
        result = evaluate_run(
            {case.id: dict(case.expected.relevance)},
            {case.id: ranking.scores},
            [self.k],
            metrics=[self.metric],
            ignore_identical_ids=False,
            engine="pytrec",
        )
        return self.score_from(result.per_query[case.id][self.key], ranking)

    def score_from(self, value: float, ranking: DocumentRanking) -> EvaluationScore:
        """The case's score: ``value`` with the document mapping's counts as metadata."""
        from heta_eval.models.records import EvaluationScore  # heavy (pydantic)

        return EvaluationScore(name=self.name, value=value, metadata=ranking.metadata())


def beir_default_metrics(
    k_values: Iterable[int] = BEIR_K_VALUES,
    *,
    metrics: Iterable[str] = METRICS,
    resolver: DocumentResolver | None = None,
    ignore_identical_ids: bool = True,
) -> tuple[BeirRetrievalMetric, ...]:
    """One ``BeirRetrievalMetric`` per metric and k (25 with the defaults).

    >>> evaluators = beir_default_metrics(k_values=(1, 3, 5, 10, 100))
    >>> len(evaluators), evaluators[3].name
    (25, 'ndcg@10')
    """
    ks = validate_k_values(k_values)
    return tuple(
        BeirRetrievalMetric(metric, k, resolver=resolver, ignore_identical_ids=ignore_identical_ids)
        for metric in validate_metrics(metrics)
        for k in ks
    )
