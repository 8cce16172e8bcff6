"""The benchmark runner: benchmarks, the runner, and its results."""

from heta_eval.runner.benchmark import (
    Benchmark,
    BenchmarkFormatError,
    JsonlBenchmark,
    default_evaluators,
)
from heta_eval.runner.results import (
    BenchmarkResults,
    ModeSummary,
    QueryRecord,
    ResultsFormatError,
    RunSummary,
    load_results,
)
from heta_eval.runner.runner import BenchmarkRunner, RunConfigurationError

__all__ = [
    "Benchmark",
    "BenchmarkFormatError",
    "BenchmarkResults",
    "BenchmarkRunner",
    "JsonlBenchmark",
    "ModeSummary",
    "QueryRecord",
    "ResultsFormatError",
    "RunConfigurationError",
    "RunSummary",
    "default_evaluators",
    "load_results",
]
