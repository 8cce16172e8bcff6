"""What an engine that computes retrieval measures offers: the :class:`Provider` interface.

Each engine is one module: :mod:`heta_eval.providers.pytrec` (pytrec_eval, every measure) and
:mod:`heta_eval.providers.compiled` (the compiled engine, BEIR's families on columnar runs).
Which one serves a call is decided in one place,
:func:`heta_eval.providers.backends.choose_provider`.

Input reaches a provider validated (:mod:`heta_eval.io.validate`): ``str`` ids without NUL,
``int`` labels, finite ``float`` scores. ``evaluate`` scores the run as given (a caller that
drops self-hits does so before) and returns ``{qid: {measure: value}}`` for the run's queries
with non-empty qrels and, for BEIR's ``evaluate_custom`` families, every run query with a
qrels entry. Every provider gives the same numbers for the measures it supports (tested).

>>> from heta_eval.measures.measure import Measure
>>> from heta_eval.providers.pytrec import PYTREC
>>> isinstance(PYTREC, Provider), PYTREC.name
(True, 'pytrec')
>>> m = Measure.parse("P@1")
>>> PYTREC.supports([m]), PYTREC.evaluate({"q": {"a": 1}}, {"q": {"a": 2.0, "b": 1.0}}, [m])
(True, {'q': {Measure(family='P', param='1'): 1.0}})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from heta_eval.measures.measure import Measure

__all__ = ["PerQuery", "Provider", "Qrels", "Run"]

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]
#: Per-query values: ``{qid: {measure: value}}``.
PerQuery = dict[str, dict[Measure, float]]


@runtime_checkable
class Provider(Protocol):
    """An engine behind the one retrieval evaluator.

    ``name`` is the ``engine=`` value that selects it; ``columnar`` says whether it also
    takes a :class:`~heta_eval.io.columnar.ColumnarRun` (a run held as arrays, never as
    Python objects), which is how large runs are scored."""

    name: str
    columnar: bool

    def supports(self, measures: Iterable[Measure]) -> bool:
        """Whether it computes every one of ``measures``."""
        ...

    def evaluate(self, qrels: Qrels, run: Run | Any, measures: Sequence[Measure]) -> PerQuery:
        """Per-query values of ``measures`` (all supported) on a validated ``run``."""
        ...
