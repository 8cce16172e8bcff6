"""The evaluator protocol: anything with a ``name`` and an async ``evaluate`` is an evaluator."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from heta_eval.models.records import BenchmarkCase, EvaluationScore, QueryResponse

__all__ = ["BenchmarkEvaluatorProtocol"]


@runtime_checkable
class BenchmarkEvaluatorProtocol(Protocol):
    """Scores one response to one benchmark case. No base class needed:

    >>> class MyEvaluator:
    ...     name = "my_score"
    ...     async def evaluate(self, *, case, response):
    ...         return EvaluationScore(name=self.name, value=1.0)
    >>> isinstance(MyEvaluator(), BenchmarkEvaluatorProtocol)
    True
    """

    @property
    def name(self) -> str: ...

    async def evaluate(
        self,
        *,
        case: BenchmarkCase,
        response: QueryResponse,
    ) -> EvaluationScore: ...
