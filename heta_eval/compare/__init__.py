"""Comparing systems: paired significance tests, confidence intervals, reference checks and
leaderboards.

>>> from heta_eval.compare import compare
>>> result = compare({"a": {"q1": {"ndcg@10": 0.1}, "q2": {"ndcg@10": 0.4}},
...                   "b": {"q1": {"ndcg@10": 0.3}, "q2": {"ndcg@10": 0.4}}})
>>> round(result.row("b", "NDCG@10").diff, 6)
0.1
"""

from heta_eval.compare.comparability import (
    IncomparableFoldersError,
    check_comparable,
    comparable_folders,
)
from heta_eval.compare.compare import (
    Comparison,
    MetricComparison,
    QueryDelta,
    compare,
    compare_many,
)
from heta_eval.compare.gate import Condition, GateResult, compare_against, gate
from heta_eval.compare.leaderboard import Leaderboard, leaderboard
from heta_eval.compare.loading import (
    SystemScores,
    is_result_folder,
    load_result_folder,
    load_systems,
    load_trec_system,
)
from heta_eval.compare.stats import (
    BootstrapResult,
    PermutationResult,
    TTestResult,
    bootstrap_ci,
    bootstrap_cis,
    holm,
    paired_ttest,
    permutation_test,
    permutation_tests,
    win_tie_loss,
)
from heta_eval.data.references import (
    CheckResult,
    Reference,
    check,
    classify,
    dataset_key,
    load_references,
)
from heta_eval.measures.measure import canonical_metric

__all__ = [
    "BootstrapResult",
    "CheckResult",
    "Comparison",
    "Condition",
    "GateResult",
    "IncomparableFoldersError",
    "Leaderboard",
    "MetricComparison",
    "PermutationResult",
    "QueryDelta",
    "Reference",
    "SystemScores",
    "TTestResult",
    "bootstrap_ci",
    "bootstrap_cis",
    "canonical_metric",
    "check",
    "check_comparable",
    "classify",
    "comparable_folders",
    "compare",
    "compare_against",
    "compare_many",
    "dataset_key",
    "gate",
    "holm",
    "is_result_folder",
    "leaderboard",
    "load_references",
    "load_result_folder",
    "load_systems",
    "load_trec_system",
    "paired_ttest",
    "permutation_test",
    "permutation_tests",
    "win_tie_loss",
]
