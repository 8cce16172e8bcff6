"""The result objects of ``evaluate_responses``: per-evaluator summaries, failures, and the
per-case score table built on first read."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, GetCoreSchemaHandler
from pydantic_core import core_schema

from heta_eval._runtime import paused_gc
from heta_eval.io.tables import Table
from heta_eval.models.cells import counts_cell, value_cell
from heta_eval.models.records import EvaluationScore

__all__ = ["EvaluationFailure", "EvaluationReport", "MetricSummary", "ScoreTable"]


class MetricSummary(BaseModel):
    """One evaluator's aggregate over the cases.

    ``value`` is the headline number: the BEIR mean (rounded to 5 decimals) for retrieval
    metrics, the mean for numeric scores, the pass rate for booleans, None for strings
    (see ``counts``). ``partial`` is True when some case failed or had no response.
    """

    name: str
    kind: Literal["retrieval", "numeric", "boolean", "categorical", "empty"]
    value: float | None
    beir: float | None = None
    beir_unrounded: float | None = None
    strict: float | None = None
    strict_unrounded: float | None = None
    mean: float | None = None
    pass_rate: float | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    scored: int = 0
    skipped: int = 0
    failed: int = 0
    missing: int = 0
    partial: bool = False


class EvaluationFailure(BaseModel):
    """An evaluator that raised or timed out on one case."""

    case_id: str
    evaluator: str
    error: str


class ScoreTable(Mapping[str, dict[str, EvaluationScore]]):
    """Per-case scores, ``{case id: {evaluator name: EvaluationScore}}``, built on first read.

    At MS MARCO size the retrieval metrics alone give 175k per-case scores (7k cases x 25
    metrics); building them costs more than computing them, so a report keeps the metric
    arrays and builds the score objects only when someone reads them (all at once, then
    kept). Behaves as a read-only mapping; serializes as a plain dict.

    >>> table = ScoreTable(lambda: {"q1": {}})
    >>> list(table), table == {"q1": {}}
    (['q1'], True)
    """

    __slots__ = ("_build", "_data")

    def __init__(
        self,
        data: Mapping[str, dict[str, EvaluationScore]]
        | Callable[[], dict[str, dict[str, EvaluationScore]]]
        | None = None,
    ) -> None:
        self._build = data if callable(data) else None
        self._data: dict[str, dict[str, EvaluationScore]] | None = (
            None if callable(data) else dict(data or {})
        )

    def _scores(self) -> dict[str, dict[str, EvaluationScore]]:
        if self._data is None:
            assert self._build is not None
            with paused_gc():
                self._data = self._build()
            self._build = None
        return self._data

    def __getitem__(self, case_id: str) -> dict[str, EvaluationScore]:
        return self._scores()[case_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._scores())

    def __len__(self) -> int:
        return len(self._scores())

    def __repr__(self) -> str:
        return f"ScoreTable({self._scores()!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (ScoreTable, (self._scores(),))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> Any:
        plain = handler.generate_schema(dict[str, dict[str, EvaluationScore]])

        def validate(value: Any, inner: Any) -> ScoreTable:
            return value if isinstance(value, ScoreTable) else cls(inner(value))

        def serialize(value: Any, inner: Any) -> Any:
            return inner(value._scores() if isinstance(value, ScoreTable) else value)

        return core_schema.no_info_wrap_validator_function(
            validate,
            plain,
            serialization=core_schema.wrap_serializer_function_ser_schema(serialize, schema=plain),
        )


class EvaluationReport(BaseModel):
    """Aggregates per evaluator, every per-case score (see :class:`ScoreTable`), and the
    failures."""

    metrics: dict[str, MetricSummary]
    scores: ScoreTable = Field(default_factory=ScoreTable)
    failures: list[EvaluationFailure] = Field(default_factory=list)
    cases: int = 0
    responses: int = 0

    @property
    def partial(self) -> bool:
        return any(summary.partial for summary in self.metrics.values())

    def table(self) -> str:
        """A markdown table of the aggregates."""
        rows = []
        for s in self.metrics.values():
            value = value_cell(s.value) if s.kind != "categorical" else counts_cell(s.counts)
            rows.append(
                [
                    f"{s.name}{' (partial)' if s.partial else ''}",
                    value,
                    value_cell(s.beir),
                    value_cell(s.strict),
                    s.scored,
                    s.skipped,
                    s.failed,
                    s.missing,
                ]
            )
        header = ["evaluator", "value", "BEIR", "strict", "scored", "skipped", "failed", "missing"]
        return Table(header, rows, align="lrrrrrrr").markdown().rstrip("\n")
