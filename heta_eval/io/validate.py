"""Validate qrels and runs once, before any backend sees them.

Both backends (pytrec_eval and the compiled engine) get the same, already-checked input, so
a result never depends on which one runs. The rules:

* ids are ``str`` without NUL (trec_eval's C strings end at NUL: ``"d\\x00x"`` would match
  ``"d"`` in one backend and not the other) and without lone surrogates (``"\\ud800"``: not
  text, and pytrec_eval's C code ends the interpreter on one), checked once per call with
  :func:`heta_eval.io.ids.unscorable_id` over the joined ids;
* labels are integers from int64's lowest up to 1,000,000 (:data:`~heta_eval.io.grammar.MAX_LABEL`,
  the largest every backend scores exactly): ``int``, ``bool``, numpy integers and integral floats
  (``1.0``) are taken as that integer; ``0.5`` is an error. Negative labels are non-relevant,
  as trec_eval 10 treats them: they become 0 before a backend runs (trec_eval 9.0.8 inside
  pytrec_eval crashes on labels of -2 and below), and the document stays judged;
* scores are real numbers (``float``, ``int``, numpy scalars) and finite: NaN has no rank.

The checked dicts are returned; the caller's dicts are never modified, and a query whose
values are already clean is passed through without a copy.

>>> validate_qrels({"q1": {"d1": 1.0, "d2": -2}})
{'q1': {'d1': 1, 'd2': 0}}
>>> validate_run({"q1": {"d1": float("nan")}})
Traceback (most recent call last):
...
heta_eval.io.validate.InputError: run: query 'q1', doc 'd1': score nan is not finite
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from itertools import chain

from heta_eval.io.grammar import MAX_LABEL, label_problem
from heta_eval.io.ids import unscorable_id

__all__ = ["InputError", "validate_qrels", "validate_run"]


class InputError(ValueError):
    """Qrels or a run that no backend may score: names the query, document and value."""


def _check_id(value: object, what: str, where: str) -> None:
    if type(value) is not str:
        raise InputError(f"{where}: {what} {value!r} is a {type(value).__name__}, not a str")
    if unscorable_id(value):
        why = "a NUL character" if "\x00" in value else "a lone surrogate (not text)"
        raise InputError(f"{where}: {what} {value!r} contains {why}")


def _check_ids(ids: Mapping[str, object], what: str, where: str) -> None:
    if set(map(type, ids)) <= {str} and not unscorable_id("".join(ids)):
        return
    for key in ids:
        _check_id(key, what, where)


def _label(value: object, where: str) -> int:
    integral = isinstance(value, numbers.Integral)
    if not integral and not (isinstance(value, numbers.Real) and float(value).is_integer()):
        raise InputError(f"{where}: relevance label {value!r} is not an integer")
    label = int(value)  # type: ignore[call-overload]
    problem = label_problem(label)
    if problem is not None:
        raise InputError(f"{where}: {problem}")
    return label if label >= 0 else 0


def validate_qrels(qrels: Mapping[str, Mapping[str, object]]) -> dict[str, dict[str, int]]:
    """``{qid: {docid: int label >= 0}}`` from a caller's qrels, or :class:`InputError`."""
    if not isinstance(qrels, Mapping):
        raise InputError(f"qrels must be a mapping {{qid: {{docid: label}}}}, got {type(qrels)}")
    _check_ids(qrels, "query id", "qrels")
    clean: dict[str, dict[str, int]] = {}
    for qid, docs in qrels.items():
        if not isinstance(docs, Mapping):
            raise InputError(f"qrels: query {qid!r}: expected a mapping {{docid: label}}")
        _check_ids(docs, "doc id", f"qrels: query {qid!r}")
        labels = docs.values()
        plain = set(map(type, labels)) <= {int}
        if plain and min(labels, default=0) >= 0 and max(labels, default=0) <= MAX_LABEL:
            clean[qid] = docs if type(docs) is dict else dict(docs)  # type: ignore[assignment]
            continue
        clean[qid] = {
            doc: _label(label, f"qrels: query {qid!r}, doc {doc!r}") for doc, label in docs.items()
        }
    return clean


def _score(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{where}: score {value!r} is not a number")
    try:
        score = float(value)
    except OverflowError:
        raise InputError(f"{where}: score is beyond the float64 range") from None
    if not math.isfinite(score):
        raise InputError(f"{where}: score {score!r} is not finite")
    return score


def validate_run(run: Mapping[str, Mapping[str, object]]) -> dict[str, dict[str, float]]:
    """``{qid: {docid: finite float}}`` from a caller's run, or :class:`InputError`."""
    if not isinstance(run, Mapping):
        raise InputError(f"run must be a mapping {{qid: {{docid: score}}}}, got {type(run)}")
    _check_ids(run, "query id", "run")
    for qid, docs in run.items():
        if not isinstance(docs, Mapping):
            raise InputError(f"run: query {qid!r}: expected a mapping {{docid: score}}")
    all_ids = chain.from_iterable(docs.keys() for docs in run.values())
    all_scores = list(chain.from_iterable(docs.values() for docs in run.values()))
    ids_clean = set(map(type, all_ids)) <= {str}
    if ids_clean:
        ids_clean = not unscorable_id("".join(chain.from_iterable(run.values())))
    # The common case (every score a finite Python float) costs a few C-level passes.
    if ids_clean and set(map(type, all_scores)) <= {float}:
        total = sum(all_scores)  # finite only when every score is (NaN and inf propagate)
        if math.isfinite(total) or all(map(math.isfinite, all_scores)):
            return {qid: docs if type(docs) is dict else dict(docs) for qid, docs in run.items()}  # type: ignore[misc]
    clean: dict[str, dict[str, float]] = {}
    for qid, docs in run.items():
        _check_ids(docs, "doc id", f"run: query {qid!r}")
        clean[qid] = {
            doc: _score(score, f"run: query {qid!r}, doc {doc!r}") for doc, score in docs.items()
        }
    return clean
