"""Comparing systems: paired significance tests, confidence intervals, reference checks and
leaderboards.

>>> from heta_eval.compare import compare
>>> result = compare({"a": {"q1": {"ndcg@10": 0.1}, "q2": {"ndcg@10": 0.4}},
...                   "b": {"q1": {"ndcg@10": 0.3}, "q2": {"ndcg@10": 0.4}}})
>>> round(result.row("b", "NDCG@10").diff, 6)
0.1
"""

from heta_eval._lazy import attach

# Names load on first use (PEP 562): a reference check (``check``) needs neither scipy nor
# pandas, so a results table shows published numbers on an install without the extra.
#: Public name -> the submodule that defines it.
_LAZY = {
    "BootstrapResult": "stats",
    "CheckResult": "references",
    "Comparison": "compare",
    "Leaderboard": "leaderboard",
    "MetricComparison": "compare",
    "PermutationResult": "stats",
    "QueryDelta": "compare",
    "Reference": "references",
    "SystemScores": "loading",
    "TTestResult": "stats",
    "bootstrap_ci": "stats",
    "canonical_metric": "loading",
    "check": "references",
    "classify": "references",
    "compare": "compare",
    "dataset_key": "references",
    "holm": "stats",
    "is_result_folder": "loading",
    "leaderboard": "leaderboard",
    "load_references": "references",
    "load_result_folder": "loading",
    "load_systems": "loading",
    "load_trec_system": "loading",
    "paired_ttest": "stats",
    "permutation_test": "stats",
    "win_tie_loss": "stats",
}

__all__ = sorted(_LAZY)
__getattr__, __dir__ = attach(__name__, _LAZY)
