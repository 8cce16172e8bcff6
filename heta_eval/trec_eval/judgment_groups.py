"""trec_eval's ``-R qrels_jg``: judgments in groups (one group per judge or user), and the
three measures trec_eval 9.0.8 computes from them, each averaged over a query's groups.

The file has lines ``qid group docno rel`` (four fields split on ASCII whitespace, as a
qrels file; ``rel`` read by ``atol``). A document judged twice in one group of a query is an
error; a document may be judged by several groups. A query's groups are taken in ``strcmp``
order of their names, and each gets its own ranked list of labels from the run, exactly as
a plain qrels query would (``-M``, ``-J``, ``-l`` apply per group). Then:

* ``map_avgjg``: each group's average precision (0 when it retrieves nothing relevant),
  summed over the groups and divided by their number;
* ``P_avgjg.CUTOFFS``: precision at each cutoff, averaged over the groups;
* ``Rprec_mult_avgjg.MULTS``: precision at ``(long) (mult * R + 0.9)`` documents, R the
  group's number of relevant documents, averaged over the groups.

Summaries (``all``) are means over the evaluated queries (every query of the file with
``-c``). Besides these only ``runid`` and ``num_q`` can be computed from such a file:
trec_eval stops on every other measure (:mod:`~heta_eval.trec_eval.judgment_measures` says
which). The arithmetic follows trec_eval's C code step by step, so the doubles, and the
printed digits, are its own.

>>> groups = read_qrels_jg(b"q1 alice d1 1\\nq1 bob d1 0\\nq1 bob d2 2\\n")
>>> groups
{'q1': [{'d1': 1}, {'d1': 0, 'd2': 2}]}
>>> average_precision(groups["q1"], ["d2", "d1"], judged_only=False, level=1)
0.75
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from heta_eval.io.grammar import Reading, TrecFormatError, check_id, fields, parse_label
from heta_eval.io.run import decode_line
from heta_eval.io.source import open_input
from heta_eval.trec_eval.compute import TrecEvalResult, evaluated_queries
from heta_eval.trec_eval.inputs import Warn, log_note
from heta_eval.trec_eval.params import c_long

if TYPE_CHECKING:
    from heta_eval.trec_eval.options import TrecEvalOptions

__all__ = ["QrelsJg", "average_precision", "evaluate_groups", "read_qrels_jg"]

# qid -> its judgment groups (strcmp order of their names) -> {docno: label}.
QrelsJg = dict[str, list[dict[str, int]]]

# trec_eval's marks for a document of the run: not in the group's judgments, or judged < 0.
_NONPOOL, _UNJUDGED = -1, -2


def read_qrels_jg(source: Any, warn: Warn | None = log_note) -> QrelsJg:
    """A ``qid group docno rel`` file; a TrecFormatError names the file, line and field."""
    data = open_input(source)
    reading = Reading("trec_eval", warn)
    found: dict[str, dict[str, dict[str, int]]] = {}
    first: dict[tuple[str, str, str], int] = {}
    for number, raw in data.lines(drop_bom=False):  # trec_eval keeps a BOM in the first qid
        parts = fields(decode_line(raw, data.name, number))
        if len(parts) != 4:
            what = "an empty line" if not parts else f"{len(parts)} fields"
            raise TrecFormatError(
                f"expected 4 fields 'qid group docno rel', got {what}", data.name, number
            )
        qid, group, doc, text = parts
        for column, (value, what) in enumerate(
            ((qid, "query id"), (group, "judgment group"), (doc, "doc id")), start=1
        ):
            check_id(value, what, data.name, number, column)
        label = parse_label(text, data.name, number, reading)  # up to MAX_LABEL
        earlier = first.setdefault((qid, group, doc), number)
        if earlier != number:
            raise TrecFormatError(
                f"document {doc!r} judged twice in group {group!r} of query {qid!r} (first on "
                f"line {earlier}); trec_eval 9.0.8 refuses it",
                data.name,
                number,
                field=3,
            )
        found.setdefault(qid, {}).setdefault(group, {})[doc] = label
    if not found:
        raise TrecFormatError("empty file: no judgments (trec_eval cannot read it)", data.name)
    return {qid: [groups[g] for g in sorted(groups)] for qid, groups in found.items()}


def evaluate_groups(
    options: TrecEvalOptions, qrels: QrelsJg, run: Mapping[str, Mapping[str, float]], tag: str
) -> TrecEvalResult:
    """Every evaluated query's values (queries in both files, ``strcmp`` order). ``run`` is
    read by :func:`~heta_eval.trec_eval.inputs.read_trec_eval_run` (repeats refused there)."""
    query_ids = evaluated_queries(qrels, run)
    values = {}
    for qid in query_ids:
        ranking = _ranking(run[qid], options.max_per_topic)
        values[qid] = _query_values(options, qrels[qid], ranking)
    return TrecEvalResult(query_ids, values, {}, tag, len(qrels), 0)


def _ranking(docs: Mapping[str, float], limit: int | None) -> list[str]:
    """trec_eval's order: float32 score, then docno, both descending; its top ``limit``."""
    with np.errstate(over="ignore"):  # scores are kept as C floats
        keys = np.asarray(list(docs.values()), dtype=np.float32).tolist()
    order = sorted(zip(keys, docs, strict=True), reverse=True)
    return [doc for _, doc in order[:limit]]


def _query_values(
    options: TrecEvalOptions, groups: list[dict[str, int]], ranking: list[str]
) -> dict[str, float]:
    level, judged_only = options.relevance_level, options.judged_only
    out: dict[str, float] = {}
    for measure in options.measures:
        name = measure.family.name
        if name == "map_avgjg":
            out[name] = average_precision(groups, ranking, judged_only=judged_only, level=level)
        elif name == "P_avgjg":
            totals = _precisions(groups, ranking, judged_only, level, measure.values)
            out.update(zip(measure.keys(), totals, strict=True))
        elif name == "Rprec_mult_avgjg":
            totals = _r_precisions(groups, ranking, judged_only, level, measure.values)
            out.update(zip(measure.keys(), totals, strict=True))
    return out


def _labels(ranking: list[str], judged: dict[str, int], judged_only: bool) -> list[int]:
    """A group's labels of the ranked documents (form_res_rels_jg.c): -1 not judged, -2
    judged below 0; with ``-J`` only the documents judged 0 or more, in rank order."""
    if judged_only:
        return [judged[doc] for doc in ranking if judged.get(doc, -1) >= 0]
    return [_UNJUDGED if judged.get(doc, 0) < 0 else judged.get(doc, _NONPOOL) for doc in ranking]


def _counts(labels: list[int], judged: dict[str, int], level: int) -> tuple[int, int]:
    """``num_rel`` (judged labels >= 0 and >= level) and ``num_rel_ret`` (retrieved such)."""
    num_rel = sum(1 for label in judged.values() if label >= 0 and label >= level)
    return num_rel, sum(1 for label in labels if label >= 0 and label >= level)


def _averaged(totals: list[float], groups: int) -> list[float]:
    return [total / groups for total in totals] if groups > 1 else totals


def average_precision(
    groups: list[dict[str, int]], ranking: list[str], *, judged_only: bool, level: int
) -> float:
    """m_map_avgjg.c: each group's sum of precisions at its relevant ranks over its R."""
    total = 0.0
    for judged in groups:
        labels = _labels(ranking, judged, judged_only)
        rel_so_far, precisions = 0, 0.0
        for rank, label in enumerate(labels, start=1):
            if label >= level:  # -l -1 or lower: unjudged documents count too, as in C
                rel_so_far += 1
                precisions += rel_so_far / rank
        if rel_so_far:
            num_rel = _counts(labels, judged, level)[0]
            total += precisions / num_rel if num_rel else math.inf  # C: x / 0 with x > 0
    return _averaged([total], len(groups))[0]


def _precisions(
    groups: list[dict[str, int]],
    ranking: list[str],
    judged_only: bool,
    level: int,
    cutoffs: Sequence[float],
) -> list[float]:
    """m_P_avgjg.c, its loop as written (cutoffs in trec_eval's order)."""
    cuts = [int(c) for c in cutoffs]
    totals = [0.0] * len(cuts)
    for judged in groups:
        labels = _labels(ranking, judged, judged_only)
        index, rel_so_far = 0, 0
        for i, label in enumerate(labels):
            if i == cuts[index]:
                totals[index] += rel_so_far / i
                index += 1
                if index == len(cuts):
                    break
            if label >= level:
                rel_so_far += 1
        for rest in range(index, len(cuts)):
            totals[rest] += rel_so_far / cuts[rest]
    return _averaged(totals, len(groups))


def _r_precisions(
    groups: list[dict[str, int]],
    ranking: list[str],
    judged_only: bool,
    level: int,
    multiples: Sequence[float],
) -> list[float]:
    """m_Rprec_mult_avgjg.c, its loops as written (from the last retrieved document up)."""
    totals = [0.0] * len(multiples)
    for judged in groups:
        labels = _labels(ranking, judged, judged_only)
        num_rel, num_rel_ret = _counts(labels, judged, level)
        num_ret = len(labels)
        cuts = [c_long(m * num_rel + 0.9) for m in multiples]
        current = len(cuts) - 1
        while current >= 0 and cuts[current] > num_ret:
            totals[current] += num_rel_ret / cuts[current]
            current -= 1
        rel_so_far = num_rel_ret
        i = num_ret
        while i > 0 and rel_so_far > 0:
            precision = rel_so_far / i
            while current >= 0 and i == cuts[current]:
                totals[current] += precision
                current -= 1
            if labels[i - 1] >= level:
                rel_so_far -= 1
            i -= 1
    return _averaged(totals, len(groups))
