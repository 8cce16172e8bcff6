"""The public surface: ``heta_eval`` exports what a user needs, each name with a runnable
example; ``heta_eval.evaluation`` holds every evaluator and the records they read and return
(the reference docs' evaluators page, tests/project/test_docs_evaluation_page.py); importing either
loads nothing heavy."""

from __future__ import annotations

import re
import subprocess
import sys

import heta_eval
import heta_eval.evaluation


def test_a_small_surface():
    names = [name for name in heta_eval.__all__ if name != "__version__"]
    assert 15 <= len(names) <= 21
    assert "BenchmarkEvaluatorProtocol" in names  # what every evaluator implements


def test_the_evaluation_module_has_every_evaluator_and_record_and_heta_evals_evaluation_names():
    evaluation = set(heta_eval.evaluation.__all__)
    evaluators = {
        "EvidenceRecallAtK",
        "BeirRetrievalMetric",
        "beir_default_metrics",
        "AnswerContains",
        "AnswerExactMatch",
        "AnswerF1",
        "ContextPrecisionAtK",
        "CitationPrecision",
        "CitationRecall",
        "LLMJudge",
    }
    records = {
        "BenchmarkEvaluatorProtocol",
        "BenchmarkCase",
        "ExpectedOutput",
        "GoldEvidence",
        "QueryResponse",
        "QueryResult",
        "EvaluationScore",
    }
    assert evaluators | records <= evaluation
    # heta_eval's names but the runner and the knowledge base are here too, the same objects.
    shared = set(heta_eval.__all__) - {"__version__", "BenchmarkRunner", "Recipe", "from_callable"}
    assert shared <= evaluation
    assert all(getattr(heta_eval.evaluation, name) is getattr(heta_eval, name) for name in shared)


def test_every_public_name_has_a_runnable_example():
    examples = "\n".join(
        line for line in (heta_eval.__doc__ or "").splitlines() if line.startswith((">>>", "..."))
    )
    missing = []
    for name in heta_eval.__all__:
        if name == "__version__":
            continue
        own = getattr(heta_eval, name).__doc__ or ""
        if ">>>" not in own and not re.search(rf"\b{name}\b", examples):
            missing.append(name)
    assert missing == []


def test_the_long_standing_imports_work():
    from heta_eval.evaluation import (  # noqa: F401
        AnswerContains,
        AnswerExactMatch,
        BeirRetrievalMetric,
        BenchmarkCase,
        EvaluationScore,
        EvidenceRecallAtK,
        QueryResponse,
        beir_default_metrics,
    )
    from heta_eval.runner import BenchmarkRunner

    assert heta_eval.BenchmarkRunner is BenchmarkRunner
    assert heta_eval.evaluation.evaluate_run is heta_eval.evaluate_run


def test_importing_the_package_loads_nothing_heavy():
    code = (
        "import sys, heta_eval, heta_eval.evaluation\n"
        "heavy = ('numpy', 'numba', 'pydantic', 'pandas', 'pyarrow', 'httpx', 'pytrec_eval', 'torch')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
