"""A query's preferences counted against a ranking, as trec_eval 9.0.8's
``form_prefs_counts`` counts them (the ``prefs_*`` measures read these counts).

Every judged document gets an internal rank: the judged documents the run retrieved, in
rank order, come first (0 .. ``num_judged_ret`` - 1), then the others in ``strcmp`` order.
Each judgment group (jg) is then held either as equivalence classes of its levels (one
sub-group) or as a 0/1 preference array closed under transitivity (several sub-groups), and
its preferences ``A > B`` are counted as fulfilled or possible among the retrieved documents
(``_ret``), with exactly one of A and B retrieved (``_imp``), or neither (``notoccur``).
``counts[i, j]`` is how many groups prefer document i to j (a C ``unsigned short``).

Inconsistent judgments are errors (:class:`PrefsError`), in a query trec_eval evaluates:
a document at two levels of one sub-group, at 0 and above 0 in one group, or a cycle of
preferences in a group (on which trec_eval 9.0.8 aborts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from heta_eval.trec_eval.preferences import PrefLine

__all__ = ["JudgmentGroup", "PrefsError", "QueryPrefs", "form_prefs_counts"]


class PrefsError(ValueError):
    """Judgments of an evaluated query that trec_eval 9.0.8 stops (or aborts) on."""


@dataclass
class JudgmentGroup:
    """One jg's counts and its preferences: ``ecs`` (internal ranks by level, highest level
    first, each ascending) or, with several sub-groups, ``prefs`` and ``levels``."""

    ful_ret: int = 0
    poss_ret: int = 0
    ful_imp: int = 0
    poss_imp: int = 0
    notoccur: int = 0
    num_rel: int = 0
    num_rel_ret: int = 0
    num_nonrel: int = 0
    num_nonrel_ret: int = 0
    ecs: list[np.ndarray] | None = None
    prefs: np.ndarray | None = None
    levels: np.ndarray | None = None


@dataclass
class QueryPrefs:
    jgs: list[JudgmentGroup]
    num_judged: int
    num_judged_ret: int
    counts: np.ndarray


def internal_ranks(lines: list[PrefLine], ranking: list[str]) -> tuple[dict[str, int], int]:
    """Each judged document's internal rank, and ``num_judged_ret``. ``ranking``: the run's
    documents for the query, in trec_eval's order, already cut at ``-M``."""
    judged = {line.docno for line in lines}
    ranks: dict[str, int] = {}
    for doc in ranking:
        if doc in judged and doc not in ranks:
            ranks[doc] = len(ranks)
    num_ret = len(ranks)
    for doc in sorted(judged - ranks.keys()):
        ranks[doc] = len(ranks)
    return ranks, num_ret


def form_prefs_counts(qid: str, lines: list[PrefLine], ranking: list[str]) -> QueryPrefs:
    """The counts of one query (``lines``: its judgments; ``ranking`` as in
    :func:`internal_ranks`)."""
    ranks, num_ret = internal_ranks(lines, ranking)
    order = sorted(lines, key=lambda p: (p.jg, p.jsg, -p.level, ranks[p.docno]))
    query = QueryPrefs([], len(ranks), num_ret, np.zeros((len(ranks),) * 2, dtype=np.uint16))
    start = 0
    for end in range(1, len(order) + 1):
        if end < len(order) and order[end].jg == order[start].jg:
            continue
        group = order[start:end]
        where = f"judgment group {group[0].jg!r} of query {qid!r}"
        if len({p.jsg for p in group}) > 1:
            query.jgs.append(_array_group(group, ranks, query, where))
        else:
            query.jgs.append(_class_group(group, ranks, query, where))
        start = end
    return query


def _class_group(
    group: list[PrefLine], ranks: dict[str, int], query: QueryPrefs, where: str
) -> JudgmentGroup:
    """form_jg_ec and add_ec_pref_to_jg: one sub-group, classes of equal levels."""
    levels: list[float] = []
    classes: list[list[int]] = []
    for line in group:
        if not levels or line.level != levels[-1]:
            levels.append(line.level)
            classes.append([])
        classes[-1].append(ranks[line.docno])
    if group[0].level == -3.0:
        # trec_eval starts each group's count of levels from -3, its "no level yet" marker:
        # a group whose highest level is -3 gets one class fewer, and the lowest is ignored.
        levels, classes = levels[:-1], classes[:-1]
    jg = JudgmentGroup(ecs=[np.asarray(c, dtype=np.int64) for c in classes])
    njr = query.num_judged_ret
    for i, ec1 in enumerate(jg.ecs):
        retrieved = int(np.count_nonzero(ec1 < njr))
        if levels[i] > 0.0:
            jg.num_rel_ret += retrieved
            jg.num_rel += len(ec1)
        else:
            jg.num_nonrel_ret += retrieved
            jg.num_nonrel += len(ec1)
        for ec2 in jg.ecs[i + 1 :]:
            _count_pairs(jg, query, ec1, ec2, where)
    jg.poss_ret += jg.ful_ret
    jg.poss_imp += jg.ful_imp
    return jg


def _count_pairs(
    jg: JudgmentGroup, query: QueryPrefs, ec1: np.ndarray, ec2: np.ndarray, where: str
) -> None:
    """Every document of ``ec1`` preferred to every one of ``ec2``."""
    a, b = np.broadcast_arrays(ec1[:, None], ec2[None, :])
    if np.any(a == b):
        raise PrefsError(
            f"{where}: a document has two different rel_levels in one sub-group (trec_eval "
            "9.0.8: 'occurs with different rel_level in same jsg')"
        )
    if len(np.unique(ec1)) == len(ec1) and len(np.unique(ec2)) == len(ec2):
        query.counts[np.ix_(ec1, ec2)] += np.uint16(1)  # uint16 wraps as C's unsigned short
    else:  # a document listed twice in a class counts twice
        np.add.at(query.counts, (a, b), np.uint16(1))
    njr = query.num_judged_ret
    less, a_ret, b_ret = a < b, a < njr, b < njr
    jg.ful_ret += int(np.count_nonzero(less & b_ret))
    jg.ful_imp += int(np.count_nonzero(less & ~b_ret & a_ret))
    jg.notoccur += int(np.count_nonzero(less & ~a_ret))  # a < b, so b is not retrieved either
    jg.poss_ret += int(np.count_nonzero(~less & a_ret))
    jg.poss_imp += int(np.count_nonzero(~less & ~a_ret & b_ret))
    jg.notoccur += int(np.count_nonzero(~less & ~a_ret & ~b_ret))


def _array_group(
    group: list[PrefLine], ranks: dict[str, int], query: QueryPrefs, where: str
) -> JudgmentGroup:
    """form_jg_pa: several sub-groups, a preference array and its transitive closure."""
    n = query.num_judged
    prefs = np.zeros((n, n), dtype=bool)
    levels = np.full(n, -1.0)
    for line in group:  # the consistency check follows the sorted lines, as trec_eval's
        rank = ranks[line.docno]
        if (levels[rank] > 0.0 and line.level == 0.0) or (levels[rank] == 0.0 and line.level > 0.0):
            raise PrefsError(
                f"{where}: document {line.docno!r} has both 0 and non-0 rel_level (trec_eval "
                "9.0.8 stops on it)"
            )
        levels[rank] = line.level
    start = 0
    for end in range(1, len(group) + 1):
        if end < len(group) and group[end].jsg == group[start].jsg:
            continue
        sub = group[start:end]
        sub_ranks = np.asarray([ranks[p.docno] for p in sub], dtype=np.int64)
        sub_levels = np.asarray([p.level for p in sub])
        rows, cols = np.nonzero(sub_levels[:, None] > sub_levels[None, :])
        prefs[sub_ranks[rows], sub_ranks[cols]] = True
        start = end
    prefs = _closure(prefs)
    conflicted = prefs & prefs.T
    if conflicted.any():
        i, j = (int(x) for x in np.argwhere(conflicted)[0])
        raise PrefsError(
            f"{where}: its preferences form a cycle (internal ranks {i} and {j} are each "
            "preferred to the other); trec_eval 9.0.8 aborts on it"
        )
    jg = JudgmentGroup(prefs=prefs, levels=levels)
    _count_array(jg, query)
    return jg


def _closure(prefs: np.ndarray) -> np.ndarray:
    """The transitive closure (add_transitives), its diagonal cleared as trec_eval's is."""
    closed = prefs | np.eye(len(prefs), dtype=bool)
    for k in range(len(closed)):
        closed |= closed[:, k : k + 1] & closed[k : k + 1, :]
    np.fill_diagonal(closed, False)
    return closed


def _count_array(jg: JudgmentGroup, query: QueryPrefs) -> None:
    """add_pa_pref_to_jg: the five areas of the array split at ``num_judged_ret``."""
    a, njr = jg.prefs, query.num_judged_ret
    assert a is not None and jg.levels is not None
    ret, rest = jg.levels[:njr], jg.levels[njr:]
    jg.num_rel_ret = int(np.count_nonzero(ret > 0.0))
    jg.num_nonrel_ret = int(np.count_nonzero(ret == 0.0))
    jg.num_rel = jg.num_rel_ret + int(np.count_nonzero(rest > 0.0))
    jg.num_nonrel = jg.num_nonrel_ret + int(np.count_nonzero(rest == 0.0))
    top = a[:njr, :njr]
    jg.ful_ret = int(np.count_nonzero(np.triu(top, 1)))
    jg.poss_ret = int(np.count_nonzero(np.tril(top, -1))) + jg.ful_ret
    jg.ful_imp = int(np.count_nonzero(a[:njr, njr:]))
    jg.poss_imp = int(np.count_nonzero(a[njr:, :njr])) + jg.ful_imp
    jg.notoccur = int(np.count_nonzero(a[njr:, njr:]))
    query.counts += a.astype(np.uint16)
