"""The most work one call may be asked for, in one table. The command line's rule for
numbers (:mod:`heta_eval.cli.numbers`) refuses an option past these before any work, and the
library refuses the same values with a ``ValueError`` where they reach it.

=================  ==========  ===========================================================
name               value       what it bounds
=================  ==========  ===========================================================
``MAX_RESAMPLES``  10,000,000  a paired test's or bootstrap's resamples: p-values resolved
                               to 1e-7; a bootstrap keeps one mean per resample
``MAX_GRID``       10,000      settings of a fusion grid, each fusing and scoring every
                               query
``MAX_RRF_K``      1,000,000   rrf's k: beyond it 1 / (k + rank) no longer tells ranks
                               apart in the float32 scores trec_eval ranks by
``MAX_HITS``       1,000,000   hits a run asks the knowledge base for, per query
``MAX_VALUES``     30,000,000  measures × queries a command scores and keeps: MS MARCO's
                               502,939 train queries at BEIR's 25 measures fit (3,000
                               cutoffs × 4 families of SciFact's 300 queries, 3.6 million
                               values, what that costs: docs/cli.md)
=================  ==========  ===========================================================

>>> MAX_VALUES // 502_939  # measures for MS MARCO's train queries
59
"""

from __future__ import annotations

__all__ = ["MAX_GRID", "MAX_HITS", "MAX_RESAMPLES", "MAX_RRF_K", "MAX_VALUES"]

MAX_RESAMPLES = 10_000_000
MAX_GRID = 10_000
MAX_RRF_K = 1_000_000
MAX_HITS = 1_000_000
MAX_VALUES = 30_000_000
