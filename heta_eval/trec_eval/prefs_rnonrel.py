"""The recount behind ``prefs_avgjg_Rnonrel`` and ``prefs_avgjg_Rnonrel_ret`` for a judgment
group with more nonrelevant documents than relevant ones: only as many nonrelevant documents
as relevant ones are kept (the first, in internal rank order), and the group's preferences
are counted again, as trec_eval 9.0.8's ``recalculate`` counts them, quirks included: with
equivalence classes, the kept documents are the first ones of the lowest-level class, and
that class is also compared with them (itself included).

Where trec_eval would read past the end of that class (it holds fewer documents than it
takes, which only happens with negative levels), this refuses with a
:class:`~heta_eval.trec_eval.prefs_counts.PrefsError`.
"""

from __future__ import annotations

import numpy as np

from heta_eval.trec_eval.prefs_counts import JudgmentGroup, PrefsError

__all__ = ["recalculate"]


def recalculate(jg: JudgmentGroup, num_judged_ret: int, retrieved: bool) -> tuple[int, int]:
    """``(fulfilled, possible)`` for the group (``retrieved``: the ``_ret`` measure)."""
    if jg.ecs is not None:
        return _classes(jg, num_judged_ret, retrieved)
    return _array(jg, num_judged_ret, retrieved)


def _classes(jg: JudgmentGroup, njr: int, retrieved: bool) -> tuple[int, int]:
    assert jg.ecs is not None
    ecs = jg.ecs
    last = ecs[-1]
    keep = jg.num_rel_ret if retrieved else jg.num_rel
    if retrieved:  # its loops stop at the first document not retrieved
        ecs = [ec[ec < njr] for ec in ecs]
        if keep > len(last) and bool(np.all(last < njr)):
            _past_end(keep, len(last))
        kept = ecs[-1][:keep]
    else:
        if keep > len(last):
            _past_end(keep, len(last))
        kept = last[:keep]
    ful = poss = 0
    pairs = [(ecs[i], ecs[j]) for i in range(len(ecs)) for j in range(i + 1, len(ecs) - 1)]
    pairs += [(ec, kept) for ec in ecs]
    for ec1, ec2 in pairs:
        a, b = ec1[:, None], ec2[None, :]
        hits = (a < b) if retrieved else ((a < b) & (a < njr))
        total = len(ec1) * len(ec2)
        ful += int(np.count_nonzero(hits))
        poss += total - int(np.count_nonzero(hits))
    return ful, poss + ful


def _past_end(keep: int, size: int) -> None:
    raise PrefsError(
        f"prefs_avgjg_Rnonrel: a judgment group's lowest-level class holds {size} documents "
        f"and trec_eval 9.0.8 takes {keep} from it, reading past its end (only negative "
        "rel_levels lead here)"
    )


def _array(jg: JudgmentGroup, njr: int, retrieved: bool) -> tuple[int, int]:
    assert jg.prefs is not None and jg.levels is not None
    a, levels = jg.prefs, jg.levels
    n = len(levels)
    nonrel = levels == 0.0
    first_discarded = njr if retrieved else n
    seen = 0
    for i in range(njr if retrieved else n):
        if nonrel[i]:
            seen += 1
            if seen == jg.num_rel + 1:
                first_discarded = i
                break
    dropped = nonrel & (np.arange(n) >= first_discarded)
    kept = a & ~dropped[:, None] & ~dropped[None, :]
    top = kept[:njr, :njr]
    ful = int(np.count_nonzero(np.triu(top, 1)))
    poss = int(np.count_nonzero(np.tril(top, -1)))
    if not retrieved:
        ful += int(np.count_nonzero(kept[:njr, njr:]))
        poss += int(np.count_nonzero(kept[njr:, :]))
    return ful, poss + ful
