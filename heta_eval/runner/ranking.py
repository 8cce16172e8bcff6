"""A record's ranked documents, held compactly, and a mode's run read from them.

A run keeps every answered query's documents until its run files and report are written:
MS MARCO's 6,980 queries at 1,000 hits are 7M ``(document id, score)`` pairs, about 1 GB as
a list of tuples (a tuple, a ``str`` and a ``float`` each, ~150 bytes a pair). A
:class:`Ranking` keeps the same pairs as one string of all ids, their end offsets and the
scores as doubles (~20 bytes a pair for ids of ten characters) and reads as the list it
stands for: it iterates, indexes, slices, compares equal to and serializes as that list.

>>> ranking = Ranking([("d3", 2.5), ("d1", 1.0)])
>>> list(ranking), ranking[0], ranking[-1], len(ranking)
([('d3', 2.5), ('d1', 1.0)], ('d3', 2.5), ('d1', 1.0), 2)
>>> ranking[:1], dict(ranking), ranking == [("d3", 2.5), ("d1", 1.0)]
([('d3', 2.5)], {'d3': 2.5, 'd1': 1.0}, True)
>>> Ranking([("d1", "high")])
Traceback (most recent call last):
...
ValueError: document 0: score 'high' is not a number
"""

from __future__ import annotations

import numbers
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate, chain
from typing import Any, overload

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic_core import core_schema

__all__ = ["ModeRun", "Ranking"]


class Ranking(Sequence[tuple[str, float]]):
    """``(document id, score)`` pairs, best first, in about a seventh of a list's memory."""

    __slots__ = ("_ends", "_ids", "_scores")

    def __init__(self, pairs: Iterable[Sequence[Any]] = ()) -> None:
        ids: list[str] = []
        scores = array("d")
        for position, pair in enumerate(pairs):
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
                raise ValueError(
                    f"document {position}: {pair!r} is not a [document id, score] pair"
                )
            doc_id, score = pair
            if not isinstance(doc_id, str):
                raise ValueError(f"document {position}: id {doc_id!r} is not a string")
            if isinstance(score, bool) or not isinstance(score, numbers.Real):
                raise ValueError(f"document {position}: score {score!r} is not a number")
            ids.append(doc_id)
            scores.append(float(score))
        self._set(ids, scores)

    @classmethod
    def of(cls, ids: Iterable[str], scores: Iterable[float]) -> Ranking:
        """From ids and their scores, already checked (a collapse's output): no per-pair
        checks beyond the scores being numbers."""
        ranking = cls.__new__(cls)
        ranking._set(list(ids), array("d", scores))
        if len(ranking._scores) != len(ranking._ends):
            raise ValueError(f"{len(ranking._ends)} ids but {len(ranking._scores)} scores")
        return ranking

    def _set(self, ids: list[str], scores: array[float]) -> None:
        # Joined by newlines, which no valid id holds, so that one split gives them back
        # (faster than slicing each); the offsets say where each ends whatever the ids hold.
        self._ids = "\n".join(ids)
        self._ends = array("I", accumulate(len(i) + 1 for i in ids))  # 4 bytes: < 4 GB
        self._scores = scores

    @property
    def ids(self) -> list[str]:
        """The document ids, in order."""
        text, ends = self._ids, self._ends
        if not ends:
            return []
        if text.count("\n") == len(ends) - 1:  # no id holds a newline: split
            return text.split("\n")
        starts = chain((0,), ends)  # one longer than ends: zip stops with ends
        return [text[a : b - 1] for a, b in zip(starts, ends, strict=False)]

    @property
    def scores(self) -> list[float]:
        """The scores, in order."""
        return self._scores.tolist()

    def __len__(self) -> int:
        return len(self._ends)

    def __iter__(self) -> Iterator[tuple[str, float]]:
        return zip(self.ids, self._scores, strict=True)

    @overload
    def __getitem__(self, index: int) -> tuple[str, float]: ...
    @overload
    def __getitem__(self, index: slice) -> list[tuple[str, float]]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return list(zip(self.ids[index], self._scores[index], strict=True))
        position = range(len(self))[index]  # IndexError as a list's
        start = self._ends[position - 1] if position else 0
        return self._ids[start : self._ends[position] - 1], self._scores[position]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Ranking):
            return (self._ids, self._ends, self._scores) == (other._ids, other._ends, other._scores)
        if isinstance(other, (list, tuple)):
            return list(self) == [tuple(pair) for pair in other]
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a list's stand-in: unhashable

    def __repr__(self) -> str:
        shown = ", ".join(map(repr, self[:3])) + (", ..." if len(self) > 3 else "")
        return f"Ranking([{shown}])  # {len(self)} documents"

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuilt, (self._ids, self._ends, self._scores)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        # Validated from a list of pairs (JSON or Python) or taken as is; written as that list.
        pairs = core_schema.list_schema(
            core_schema.tuple_schema([core_schema.str_schema(), core_schema.float_schema()])
        )
        return core_schema.no_info_plain_validator_function(
            _validated,
            serialization=core_schema.plain_serializer_function_ser_schema(
                list, return_schema=pairs
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        return handler(
            core_schema.list_schema(
                core_schema.tuple_schema([core_schema.str_schema(), core_schema.float_schema()])
            )
        )


def _validated(value: Any) -> Ranking:
    if isinstance(value, Ranking):
        return value
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, Iterable):
        kind = type(value).__name__
        raise ValueError(f"expected a list of [document id, score] pairs, got {kind}")
    return Ranking(value)


def _rebuilt(ids: str, ends: array[int], scores: array[float]) -> Ranking:
    ranking = Ranking.__new__(Ranking)
    ranking._ids, ranking._ends, ranking._scores = ids, ends, scores
    return ranking


class ModeRun(Mapping[str, Mapping[str, float]]):
    """One mode's run, ``{case id: {document id: score}}``, read from its records on demand:
    a query's documents become a dict only while they are written (every query's at once
    would double a deep run's memory). The last record of a case wins.

    >>> from types import SimpleNamespace as Record
    >>> run = ModeRun([Record(case_id="q1", documents=Ranking([("d2", 2.0), ("d1", 1.0)]))])
    >>> dict(run)
    {'q1': {'d2': 2.0, 'd1': 1.0}}
    """

    def __init__(self, records: Iterable[Any]) -> None:
        self._records = {record.case_id: record for record in records}

    def __getitem__(self, case_id: str) -> dict[str, float]:
        return dict(self._records[case_id].documents)

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)
