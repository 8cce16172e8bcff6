"""trec_eval's numbers: per-query values from pytrec_eval, and trec_eval 9.0.8's summaries.

Every value comes from :func:`per_query_values`, the one place this command calls pytrec_eval
(the trec_eval 9.0.8 it embeds, :func:`~heta_eval.providers.pytrec.relevance_evaluator`).
The rest reproduces what trec_eval's ``main`` adds around its measures: which queries are
evaluated (those in both files, in ``strcmp`` order of query id), ``-M`` (each query's top N
by trec_eval's ranking), ``relstring`` and ``runid`` (text, not from pytrec_eval), and the
``all`` lines, summed in its order.

Relevance labels: trec_eval gives every negative label one meaning, "pooled but unjudged"
(non-relevant everywhere; ``bpref``, ``infAP``, ``num_nonrel_judged_ret`` and ``-J`` tell it
apart from a judged 0). trec_eval 9.0.8 mishandles a query whose labels are all negative: it
sizes its per-label counters by the highest label, so it has none for a first such query
(it stops), -2 and below ``memset`` a negative size (SIGSEGV), and -1 reuses the previous
query's counters. :func:`evaluate` refuses the first two; labels <= -2 are passed on as -1,
which has exactly their meaning, and a query with no label >= 0 gets one extra judgment,
label 0, for a document no run can name (the empty id): every count and value stays what
the definitions give for a query with no relevant document, and what trec_eval prints.

>>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": -3}}
>>> run = {"q1": {"d1": 0.2, "d2": 0.9, "d3": 0.5}, "q9": {"d1": 1.0}}
>>> per_query_values(qrels, run, ["P.2", "num_nonrel_judged_ret"])
{'q1': {'P_2': 0.0, 'num_nonrel_judged_ret': 1.0}}
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from heta_eval.io.grammar import MAX_LABEL
from heta_eval.io.trec import ranked
from heta_eval.measures.averaging import combine
from heta_eval.measures.measure import Measure
from heta_eval.measures.trec_catalogue import FAMILIES, TrecFamily
from heta_eval.providers.pytrec import TrecEvaluator, relevance_evaluator
from heta_eval.trec_eval.levels import below_one
from heta_eval.trec_eval.params import in_rounds

__all__ = [
    "TrecEvalResult",
    "check_engine_inputs",
    "evaluate",
    "evaluated_queries",
    "make_result",
    "per_query_values",
    "summary_value",
]


def per_query_values(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    measures: Iterable[str],
    relevance_level: int = 1,
    judged_only: bool = False,
    *,
    ids_checked: bool = False,
    visit: Callable[[str, Mapping[str, float]], None] | None = None,
) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-query values for trec_eval measure strings (``"P.5,10"``, ``"map"``,
    ``"iprec_at_recall.0.1"``): ``{qid: {key: value}}`` for the queries in both inputs.

    Calls pytrec_eval's C extension directly: the Python wrapper rewrites parameters
    (sorts them as text, refuses ``.1`` and negative numbers), which would change
    ``utility`` and ``iprec_at_recall``. Negative labels are made safe (see module doc);
    empty ids, NUL and labels beyond ``MAX_LABEL`` are refused (ValueError). A query with
    an empty ranking (``-M 0``) gets trec_eval's values for no documents retrieved, ``-nan``
    included. ``ids_checked``: the run's ids are known non-empty and free of NUL, so its
    queries are not all visited twice; ``visit(qid, docs)`` sees each evaluated query's
    documents as they are read. Levels printed alike are computed in rounds (keys ``#n``).
    """
    specs = set(measures)
    if not specs:
        return {}

    def some(part: list[str], first: bool) -> dict[str, dict[str, float]]:
        kwargs = {"ids_checked": ids_checked, "visit": visit} if first else {"ids_checked": True}
        return per_query_values(qrels, run, part, relevance_level, judged_only, **kwargs)  # type: ignore[arg-type]

    merged = in_rounds(sorted(specs), _FLOAT_FAMILIES, some)  # levels printed alike
    if merged is not None:
        return merged
    if relevance_level < 1:  # formed from level-1 values (see heta_eval.trec_eval.levels)
        return below_one(
            per_query_values,
            qrels,
            run,
            specs,
            relevance_level,
            judged_only,
            MAX_LABEL,
            ids_checked=ids_checked,
            visit=visit,
        )
    safe_qrels = {qid: _safe_labels(qid, docs) for qid, docs in qrels.items() if docs}
    if not ids_checked:
        for qid, docs in run.items():
            if not _readable(qid) or "" in docs or "\0" in "".join(docs):
                raise ValueError(f"run query {qid!r}: an id is empty or contains NUL")
    evaluated = [qid for qid in run if qid in safe_qrels]
    level = _pytrec_eval_level(relevance_level, safe_qrels, evaluated, specs)
    aliases = _aliases(safe_qrels, run)
    qrels_in = {aliases.get(qid, qid): docs for qid, docs in safe_qrels.items()}
    evaluators: dict[bool, TrecEvaluator] = {}
    # pytrec_eval rewrites label=gain pairs in place as it reads them: such an evaluator can
    # evaluate once (a second call reads '1,2' and crashes), so each batch gets a new one.
    once = any(spec.partition(".")[0] in _GAIN_FAMILIES and "." in spec for spec in specs)
    values: dict[str, dict[str, float]] = {}
    # In batches: pytrec_eval copies what it is given, so this bounds that copy (and a run
    # read into arrays builds each query's dict only here).
    for start in range(0, len(evaluated), _BATCH):
        batches: dict[bool, dict[str, dict[str, float]]] = {judged_only: {}, True: {}}
        for qid in evaluated[start : start + _BATCH]:
            docs = run[qid]
            if type(docs) is not dict:  # a dict (never mutated) is not copied
                docs = dict(docs)
            if visit is not None:
                visit(qid, docs)
            # No documents: trec_eval's counts are those of -J with nothing judged
            # retrieved, and pytrec_eval cannot take an empty ranking.
            judged = judged_only if docs else True
            batches[judged][aliases.get(qid, qid)] = docs or {_unjudged(safe_qrels[qid]): 0.0}
        for judged, batch in batches.items():
            if batch:
                if judged not in evaluators or once:
                    evaluators[judged] = relevance_evaluator(qrels_in, specs, level, judged)
                values.update(evaluators[judged].evaluate(batch))
    names = {alias: qid for qid, alias in aliases.items()}
    return {names.get(qid, qid): per_query for qid, per_query in values.items()}


# pytrec_eval's trec_eval caches its last query under this name after each evaluation: a
# query so named in the next one would get that query's counts.
_CACHE_NAME = "no_query"
# Queries per pytrec_eval call.
_BATCH = 256
# Reading counters past a query's highest label: trec_eval's bpref crashes this far out.
_BPREF_READ_LIMIT = 10_000


def _aliases(qrels: Mapping[str, object], run: Mapping[str, object]) -> dict[str, str]:
    if _CACHE_NAME not in run:
        return {}
    alias = _CACHE_NAME + "\x01"
    while alias in qrels or alias in run:
        alias += "\x01"
    return {_CACHE_NAME: alias}


def _unjudged(docs: Mapping[str, int]) -> str:
    doc = "unjudged"
    while doc in docs:
        doc += "_"
    return doc


def _pytrec_eval_level(
    level: int, qrels: Mapping[str, Mapping[str, int]], evaluated: list[str], specs: set[str]
) -> int:
    """The level to give pytrec_eval (a C int): any level above every label counts the same.
    bpref reads a counter per label below the level; far past a query's labels trec_eval
    crashes, so that is refused."""
    if not evaluated:
        return 1
    lowest_top = min(max(qrels[qid].values()) for qid in evaluated)
    bpref = any(spec.split(".")[0] in ("bpref", "gm_bpref") for spec in specs)
    if bpref and level - (lowest_top + 1) > _BPREF_READ_LIMIT:
        raise ValueError(
            f"-l {level} with bpref: trec_eval 9.0.8 reads a counter for every level below "
            f"{level}, far past the highest label of a query ({lowest_top}), and crashes"
        )
    highest = max(max(docs.values()) for docs in qrels.values())
    return max(1, min(level, highest + 1))


def _readable(text: str) -> bool:
    """trec_eval's ids are C strings: an empty one or a NUL would silently change matching."""
    return bool(text) and "\0" not in text


_FLOAT_FAMILIES = {f.name for f in FAMILIES if f.params == "float_cutoffs"}
# pytrec_eval passes ids as C strings, so this id reaches trec_eval as "", which no run names.
_UNRETRIEVABLE = "\0"


def _safe_labels(qid: str, docs: Mapping[str, int]) -> dict[str, int]:
    out = {}
    for doc, label in docs.items():
        if not _readable(qid) or not _readable(doc):
            raise ValueError(f"qrels ({qid!r}, {doc!r}): an id is empty or contains NUL")
        if label > MAX_LABEL:
            raise ValueError(
                f"qrels ({qid!r}, {doc!r}): label {label} is above {MAX_LABEL:,} (trec_eval "
                "allocates a counter for every label value up to the largest)"
            )
        out[doc] = -1 if label < -1 else int(label)
    if max(out.values()) < 0:
        out[_UNRETRIEVABLE] = 0  # see the module doc: no label >= 0 reads stale memory
    return out


@dataclass(frozen=True)
class TrecEvalResult:
    """What trec_eval prints, before formatting: per-query values and what the summaries
    need. ``query_ids`` are the evaluated queries, in trec_eval's order."""

    query_ids: tuple[str, ...]
    values: dict[str, dict[str, float]]
    relstrings: dict[str, str]
    run_tag: str
    num_qrels_queries: int  # -c averages over these
    num_rel_all: int  # -c's num_rel: labels > 0 in the whole qrels file

    @cached_property
    def columns(self) -> dict[str, list[float]]:
        """Each key's values in query order (read once, query by query, for the summaries)."""
        out: dict[str, list[float]] = {}
        for qid in self.query_ids:
            for key, value in self.values[qid].items():
                out.setdefault(key, []).append(value)
        return out


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    run_tag: str,
    specs: Iterable[str],
    *,
    relevance_level: int = 1,
    max_per_topic: int | None = None,
    judged_only: bool = False,
    relstring_length: int | None = None,
    ids_checked: bool = False,
) -> TrecEvalResult:
    """Evaluate ``run`` as ``trec_eval`` would; ``relstring_length`` (trec_eval's
    ``(long) param``) asks for relevance strings; ``ids_checked`` as in
    :func:`per_query_values`. Raises ValueError when no query is in
    both inputs (trec_eval: "No queries with both results and relevance info")."""
    query_ids = evaluated_queries(qrels, run)
    specs = list(specs)
    if specs or relstring_length is not None:
        _check_negative_queries(qrels, query_ids, specs)
    if max_per_topic is not None:
        kept = {qid: _top(run[qid], max_per_topic) for qid in query_ids}
    else:  # a run read into arrays builds each query's dict only when it is evaluated
        kept = run if ids_checked else {qid: run[qid] for qid in query_ids}
    relstrings: dict[str, str] = {}

    def relstring(qid: str, docs: Mapping[str, float]) -> None:
        if relstring_length is not None:
            relstrings[qid] = _relstring(docs, qrels[qid], relstring_length, judged_only)

    values = per_query_values(
        qrels, kept, specs, relevance_level, judged_only, ids_checked=ids_checked, visit=relstring
    )
    if relstring_length is not None and not specs:  # nothing was visited
        for qid in query_ids:
            relstring(qid, kept[qid])
    return make_result(qrels, query_ids, values, relstrings, run_tag)


def evaluated_queries(
    qrels: Mapping[str, Mapping[str, int]], run_queries: Iterable[str]
) -> tuple[str, ...]:
    """The queries trec_eval evaluates: in the run and judged, in ``strcmp`` order. Raises
    ValueError when there are none (trec_eval: "No queries with both results and relevance
    info")."""
    query_ids = tuple(sorted(qid for qid in run_queries if qrels.get(qid)))
    if not query_ids:
        raise ValueError("no query has both results and relevance judgments")
    return query_ids


def check_engine_inputs(qrels: Mapping[str, Mapping[str, int]], query_ids: tuple) -> None:
    """The refusals :func:`evaluate` makes before computing, for values computed elsewhere
    (the compiled engine): queries trec_eval cannot evaluate, ids and labels it cannot take."""
    _check_negative_queries(qrels, query_ids)
    for qid, docs in qrels.items():
        if docs:
            _safe_labels(qid, docs)


def make_result(
    qrels: Mapping[str, Mapping[str, int]],
    query_ids: tuple[str, ...],
    values: Mapping[str, dict[str, float]],
    relstrings: dict[str, str],
    run_tag: str,
) -> TrecEvalResult:
    """The result of evaluated ``query_ids`` with their ``values``, and the counts of the
    whole qrels that ``-c`` needs."""
    num_rel_all = sum(1 for docs in qrels.values() for label in docs.values() if label > 0)
    return TrecEvalResult(
        query_ids=query_ids,
        values={qid: values.get(qid, {}) for qid in query_ids},
        relstrings=relstrings,
        run_tag=run_tag,
        num_qrels_queries=sum(1 for docs in qrels.values() if docs),
        num_rel_all=num_rel_all,
    )


def _check_negative_queries(
    qrels: Mapping[str, Mapping[str, int]], query_ids: tuple, specs: Iterable[str] = ()
) -> None:
    """trec_eval 9.0.8 sizes a query's label counters by its highest label: with none >= 0
    it has no counters for the first query it evaluates (it stops) and crashes on a highest
    label below -1. On a later query of -1 labels it reads the previous query's counters:
    harmless for every measure but those that give a negative label a gain, whose value
    there is the previous query's memory, not a measure of this one."""
    negative_gain = _negative_gain(specs)
    for position, qid in enumerate(query_ids):
        top = max(qrels[qid].values())
        if top < 0 and (position == 0 or top < -1):
            what = 'stops ("Can\'t calculate measure")' if position == 0 else "crashes"
            raise ValueError(
                f"qrels query {qid}: every label is negative (highest {top}); trec_eval "
                f"9.0.8 {what} on it"
            )
        if top < 0 and negative_gain is not None:
            raise ValueError(
                f"qrels query {qid}: every label is negative, and -m {negative_gain} gives a "
                "negative label a gain: trec_eval 9.0.8 takes that query's gains from the "
                "previous query's label counts (memory it does not reset), so its value there "
                "measures nothing of this query"
            )


def _negative_gain(specs: Iterable[str]) -> str | None:
    """The first measure whose gains name a negative label (``ndcg_rel.-1=2``), if any."""
    for spec in specs:
        name, _, text = spec.partition(".")
        if text and name in _GAIN_FAMILIES:
            levels = (part.partition("=")[0].strip() for part in text.split(","))
            if any(level.startswith("-") and level.lstrip("-").strip("0") for level in levels):
                return spec
    return None


# The families whose parameters are label=gain pairs.
_GAIN_FAMILIES = frozenset(f.name for f in FAMILIES if f.params == "gains")


def _top(docs: Mapping[str, float], limit: int | None) -> Mapping[str, float]:
    """trec_eval's -M: the first ``limit`` documents of its ranking (float32 score, then
    doc id, both descending)."""
    if limit is None or limit >= len(docs):
        return docs
    return dict(ranked(docs)[:limit])


def _relstring(
    docs: Mapping[str, float], labels: Mapping[str, int], length: int, judged_only: bool
) -> str:
    """trec_eval's relstring: a character per ranked document; digits for labels 0-9, '>'
    above 9, '-' not in the qrels, '.' in the qrels with a negative label."""
    if length <= 0:
        return ""
    if judged_only:  # -J drops everything that is not judged
        docs = {doc: score for doc, score in docs.items() if labels.get(doc, -1) >= 0}
    # Only the first ``length`` documents of heta_eval.io.trec.ranked's order are needed:
    # each has a float32 score at least the length-th largest.
    with np.errstate(over="ignore"):
        keys = np.asarray(list(docs.values()), dtype=np.float32)
    ids = list(docs)
    if length < len(keys):
        floor = np.partition(keys, len(keys) - length)[len(keys) - length]
        picks = np.flatnonzero(keys >= floor).tolist()
        candidates = [(float(keys[i]), ids[i]) for i in picks]
    else:
        candidates = list(zip(keys.tolist(), ids, strict=True))
    chars = []
    for _, doc in heapq.nlargest(length, candidates):
        label = labels.get(doc)
        if label is None:
            chars.append("-")
        elif label < 0:
            chars.append(".")
        else:
            chars.append(">" if label > 9 else str(label))
    return "".join(chars)


def summary_value(
    fam: TrecFamily, key: str, result: TrecEvalResult, complete: bool
) -> float | str | None:
    """The ``all`` line's value for ``key`` of ``fam`` (None: no summary line), summed in
    trec_eval's query order with its divisor (every qrels query with ``-c``)."""
    if fam.summary == "none":
        return None
    if fam.summary == "run_tag":
        return result.run_tag
    count = result.num_qrels_queries if complete else len(result.query_ids)
    if fam.summary == "num_q":
        return float(count)
    if fam.summary == "sum" and fam.name == "num_rel" and complete:
        return float(result.num_rel_all)
    measure = Measure(fam.name)  # its summary and its -c value of a missing query
    values = result.columns.get(key, [])
    if len(values) != len(result.query_ids):  # not in every query's values
        values = [result.values[qid][key] for qid in result.query_ids]
    missing = [measure.missing_value(0)] * (count - len(values)) if fam.summary != "sum" else []
    return combine("sum" if fam.summary == "sum" else measure.summary, values, missing)
