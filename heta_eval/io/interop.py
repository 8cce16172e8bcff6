"""Runs and qrels from other tools, as the plain dicts :func:`evaluate_run` scores.

Accepted besides ``{query id: {doc id: value}}`` mappings (returned unchanged):

* a pandas ``DataFrame`` with a query column (``query_id``, or ranx's ``q_id``), a
  ``doc_id`` column and a value column: ``score`` for a run; ``relevance`` (ir_datasets'
  qrels) or ``score`` (ranx's qrels frames) for qrels. Other columns (ir_datasets'
  ``iteration``) are ignored;
* a ranx ``Run`` or ``Qrels``.

Ids become strings; labels must be whole numbers; scores must be finite; a cell holding text
is read by the file readers' grammar (:mod:`heta_eval.io.grammar`: ASCII digits only); a
repeated (query, doc) pair is refused. Each refusal is a :class:`FrameFormatError` naming the column
and row. pandas and ranx are never imported here: objects are recognised by their shape.

>>> import pandas as pd
>>> as_run(pd.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"], "score": [0.5, 0.2]}))
{'1': {'a': 0.5, 'b': 0.2}}
>>> as_qrels(pd.DataFrame({"q_id": ["1"], "doc_id": ["a"], "relevance": [2.0]}))
{'1': {'a': 2}}
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from heta_eval.io.grammar import TrecFormatError, parse_label, parse_score

__all__ = ["FrameFormatError", "as_qrels", "as_run"]

_QUERY_COLUMNS = ("query_id", "q_id")
_RUN_VALUES = ("score",)
_QRELS_VALUES = ("relevance", "score")


class FrameFormatError(ValueError):
    """A DataFrame (or ranx object) cannot be read as a run or qrels; the message says why."""


def as_run(run: Any) -> Mapping[str, Mapping[str, float]]:
    """``run`` as ``{query id: {doc id: float score}}``."""
    return _convert(run, "run", _RUN_VALUES, _score)


def as_qrels(qrels: Any) -> Mapping[str, Mapping[str, int]]:
    """``qrels`` as ``{query id: {doc id: int label}}``."""
    return _convert(qrels, "qrels", _QRELS_VALUES, _label)


def _convert(obj: Any, what: str, value_columns: tuple[str, ...], cast: Any) -> Any:
    if isinstance(obj, Mapping):
        return obj
    package = type(obj).__module__.split(".")[0]
    if package == "ranx" and hasattr(obj, "to_dict"):
        return obj.to_dict()
    if package == "pandas" and hasattr(obj, "columns"):
        return _from_frame(obj, what, value_columns, cast)
    raise TypeError(
        f"{what}: expected a mapping of query id to {{doc id: value}}, a pandas DataFrame or "
        f"a ranx {what.capitalize()}, got {type(obj).__name__}"
    )


def _pick(columns: list[str], wanted: tuple[str, ...], what: str, role: str) -> str:
    found = [name for name in wanted if name in columns]
    if not found:
        raise FrameFormatError(
            f"{what} DataFrame: no {role} column (one of {', '.join(wanted)}); "
            f"it has {', '.join(map(str, columns))}"
        )
    return found[0]


def _from_frame(frame: Any, what: str, value_columns: tuple[str, ...], cast: Any) -> dict:
    columns = [str(name) for name in frame.columns]
    query = _pick(columns, _QUERY_COLUMNS, what, "query id")
    doc = _pick(columns, ("doc_id",), what, "document id")
    value = _pick(columns, value_columns, what, "value")
    out: dict[str, dict[str, Any]] = {}
    rows = zip(frame[query].tolist(), frame[doc].tolist(), frame[value].tolist(), strict=True)
    for row, (qid, doc_id, raw) in enumerate(rows):
        if _missing(qid) or _missing(doc_id):
            raise FrameFormatError(f"{what} DataFrame row {row}: a missing query or doc id")
        docs = out.setdefault(str(qid), {})
        key = str(doc_id)
        if key in docs:
            raise FrameFormatError(
                f"{what} DataFrame row {row}: ({qid}, {doc_id}) repeats an earlier row"
            )
        docs[key] = cast(raw, what, value, row)
    return out


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _score(raw: Any, what: str, column: str, row: int) -> float:
    score = _number(raw, what, column, row, parse_score)
    if not math.isfinite(score):
        raise FrameFormatError(f"{what} DataFrame row {row}: {column} {raw!r} is not finite")
    return score


def _label(raw: Any, what: str, column: str, row: int) -> int:
    label = _number(raw, what, column, row, parse_label)
    if not math.isfinite(label) or label != int(label):
        raise FrameFormatError(
            f"{what} DataFrame row {row}: {column} {raw!r} is not a whole number"
        )
    return int(label)


def _number(raw: Any, what: str, column: str, row: int, parse: Any) -> float:
    """A cell as a number: text by the readers' grammar (ASCII digits only, so ``"١"`` is
    refused as it is in a file), numbers as they are."""
    if isinstance(raw, str | bytes):
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        try:
            return parse(text, f"{what} DataFrame", row)
        except TrecFormatError as error:
            raise FrameFormatError(
                f"{what} DataFrame row {row}: {column} {raw!r}: {error.reason}"
            ) from None
    try:
        return float(raw)
    except (TypeError, ValueError, OverflowError):
        return math.nan
