"""Import paths that moved in heta-eval 0.2.0, kept working until 0.3.0.

The rule (docs/development.md): a public import path that moves keeps working for one minor
version, giving the very object of its new home with a ``DeprecationWarning`` that names the
new path, and is removed in the next minor version. This module holds the table of every old
path (``OLD_NAMES``, ``OLD_MODULES``) and the two hooks that serve it: ``moved_getattr`` for
names that left a package still in place (``from heta_eval import AnswerF1``), and an import
finder for modules that no longer exist (``import heta_eval.trec``). Nothing is copied: an
old path resolves to the new object on each use, and the warning points at the caller's line.

>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     from heta_eval.trec import read_run
>>> for part in str(caught[-1].message).split(": "):
...     print(part)
heta_eval.trec.read_run moved in heta-eval 0.2.0
use 'from heta_eval.io.trec import read_run' (the old path is removed in 0.3.0)
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from importlib import import_module
from importlib.machinery import ModuleSpec
from types import ModuleType

__all__ = ["DEPRECATED_IN", "OLD_MODULES", "OLD_NAMES", "REMOVED_IN", "install", "moved_getattr"]

#: The version that moved the paths below, and the one that removes them (one minor later).
DEPRECATED_IN = "0.2.0"
REMOVED_IN = "0.3.0"


def _names(*groups: tuple[str, str]) -> dict[str, str]:
    """``(new module, "name name ...")`` groups -> {name: new module}."""
    return {name: module for module, names in groups for name in names.split()}


_EVALUATION = "heta_eval.evaluation"
_RECORDS, _REPORT = "heta_eval.models.records", "heta_eval.models.report"
_COLLAPSE, _MEASURE = "heta_eval.retrieval.collapse", "heta_eval.measures.measure"
_JUDGE, _NORMALIZE = "heta_eval.rag.judge.judge", "heta_eval.rag.normalize"
_AGGREGATE, _AVERAGING = "heta_eval.rag.aggregate", "heta_eval.measures.averaging"

#: Names that left ``heta_eval.evaluation`` (0.1.0 listed 51 there) -> where they live now.
_LEFT_EVALUATION = _names(
    (_RECORDS, "RECOGNISED_LOCATOR_FIELDS"),
    ("heta_eval.models.columns", "ChunkTable ResultColumns"),
    (_REPORT, "EvaluationFailure EvaluationReport MetricSummary ScoreTable"),
    (_AGGREGATE, "aevaluate_responses summarize_scores"),
    ("heta_eval.rag.evidence", "EvidenceMatcher locator_verdict"),
    ("heta_eval.rag.citations", "resolve_citations"),
    (_NORMALIZE, "answer_tokens contains_tokens evidence_tokens normalize_answer"),
    (_JUDGE, "JUDGE_PROMPT JudgeError"),
    (_COLLAPSE, "DocumentRanking collapse_to_documents default_document_resolver"),
    (_AVERAGING, "AggregateValue"),
    (_MEASURE, "BEIR_K_VALUES METRICS UnknownMeasureError measure_key parse_measure"),
    (_MEASURE, "parse_measures"),
)

#: Old package -> {name it no longer lists: the module to import it from now}.
OLD_NAMES: dict[str, dict[str, str]] = {
    # heta_eval listed 60 names in 0.1.0: the evaluation names and these.
    "heta_eval": {
        **_LEFT_EVALUATION,
        **_names(
            (_EVALUATION, "AnswerF1 CitationPrecision CitationRecall ContextPrecisionAtK"),
            (_EVALUATION, "ExpectedOutput GoldEvidence LLMJudge"),
            ("heta_eval.runner", "Benchmark BenchmarkResults JsonlBenchmark load_results"),
            ("heta_eval.kb", "HttpKnowledgeBase KnowledgeBase ReferenceKnowledgeBase"),
        ),
    },
    _EVALUATION: _LEFT_EVALUATION,
}


def _module(new: str, names: str, **elsewhere: str) -> tuple[str, dict[str, str]]:
    """An old module's successor and its 0.1.0 names (``elsewhere``: those living apart)."""
    return new, {name: elsewhere.get(name, new) for name in names.split()}


#: Old module -> (the module that replaced it, {each of its 0.1.0 names: module now}).
OLD_MODULES: dict[str, tuple[str, dict[str, str]]] = {
    "heta_eval.trec": _module(
        "heta_eval.io.trec",
        "TrecFormatError read_qrels read_run read_run_columnar write_qrels write_run "
        "write_run_json",
    ),
    "heta_eval.compare.references": _module(
        "heta_eval.data.references",
        "CheckResult OKISH_TOLERANCE OK_TOLERANCE Reference check classify dataset_key "
        "load_references reference_systems",
    ),
    "heta_eval.evaluation.aggregate": _module(
        _AGGREGATE,
        "EvaluationFailure EvaluationReport MetricSummary ScoreTable aevaluate_responses "
        "evaluate_responses score_case score_retrieval_batch summarize_scores",
    ),
    "heta_eval.evaluation.answers": _module(
        "heta_eval.rag.answers", "AnswerContains AnswerExactMatch AnswerF1"
    ),
    "heta_eval.evaluation.backends": _module(
        "heta_eval.providers.backends",
        "COMPILED_MIN_BYTES ENGINE_FAMILIES ENGINE_MIN_ROWS choose_backend compiled_run_file "
        "empty_ranking_values pytrec_values",
        empty_ranking_values=_AVERAGING,
        pytrec_values="heta_eval.providers.pytrec",
    ),
    "heta_eval.evaluation.beir_rules": _module(
        _AVERAGING, "AggregateValue beir_denominator round5 summarise"
    ),
    "heta_eval.evaluation.citations": _module(
        "heta_eval.rag.citations", "CitationPrecision CitationRecall Citations resolve_citations"
    ),
    "heta_eval.evaluation.collapse": _module(
        _COLLAPSE,
        "CollapsedBatch DocumentRanking DocumentResolver collapse_batch collapse_to_documents "
        "default_document_resolver",
    ),
    "heta_eval.evaluation.columnar": _module(
        "heta_eval.io.columnar",
        "ColumnarRun columnar_run_from_dict gather_strings string_buffers",
    ),
    "heta_eval.evaluation.columns": _module("heta_eval.models.columns", "ChunkTable ResultColumns"),
    "heta_eval.evaluation.engine": _module(
        "heta_eval.providers.engine",
        "ColumnarRun HAVE_NUMBA METRIC_ORDER columnar_run_from_dict evaluate_columnar "
        "gather_strings measure_column string_buffers",
    ),
    "heta_eval.evaluation.evidence": _module(
        "heta_eval.rag.evidence", "EvidenceMatcher EvidenceRecallAtK locator_verdict"
    ),
    "heta_eval.evaluation.inputs": _module(
        "heta_eval.io.validate", "InputError validate_qrels validate_run"
    ),
    "heta_eval.evaluation.interop": _module(
        "heta_eval.io.interop", "FrameFormatError as_qrels as_run"
    ),
    "heta_eval.evaluation.judge_cache": _module(
        "heta_eval.rag.judge.cache", "JudgeCache default_judge_cache_path"
    ),
    "heta_eval.evaluation.judge_usage": _module(
        "heta_eval.rag.judge.usage", "JudgeUsage Price estimate_tokens load_prices"
    ),
    "heta_eval.evaluation.llm_judge": _module(_JUDGE, "JUDGE_PROMPT JudgeError LLMJudge"),
    "heta_eval.evaluation.measures": _module(
        _MEASURE,
        "BEIR_K_VALUES METRICS Measure TREC_FAMILIES UnknownMeasureError measure_key "
        "parse_measure parse_measures",
    ),
    "heta_eval.evaluation.models": _module(
        _RECORDS,
        "BenchmarkCase Document EvaluationScore ExpectedOutput GoldEvidence QueryResponse "
        "QueryResult RECOGNISED_LOCATOR_FIELDS",
    ),
    "heta_eval.evaluation.normalize": _module(
        _NORMALIZE, "answer_tokens contains_tokens evidence_tokens normalize_answer"
    ),
    "heta_eval.evaluation.protocol": _module(
        "heta_eval.models.protocol", "BenchmarkEvaluatorProtocol"
    ),
    "heta_eval.evaluation.rag": _module("heta_eval.rag.context", "ContextPrecisionAtK"),
    "heta_eval.evaluation.report": _module(
        _REPORT, "EvaluationFailure EvaluationReport MetricSummary ScoreTable"
    ),
    "heta_eval.evaluation.retrieval": _module(
        "heta_eval.retrieval.evaluate",
        "AggregateValue BEIR_K_VALUES BeirRetrievalMetric CollapsedBatch DocumentRanking "
        "DocumentResolver DuplicateRowsError InputError METRICS Measure RunEvaluation "
        "beir_default_metrics collapse_batch collapse_to_documents default_document_resolver "
        "evaluate_columnar_run evaluate_run evaluate_run_file measure_key parse_measure",
        AggregateValue=_AVERAGING,
        InputError="heta_eval.io.validate",
        **dict.fromkeys(
            ["BEIR_K_VALUES", "METRICS", "Measure", "measure_key", "parse_measure"], _MEASURE
        ),
    ),
    "heta_eval.evaluation.retrieval_batch": _module(
        "heta_eval.retrieval.batch", "retrieval_summary score_retrieval_batch"
    ),
    "heta_eval.evaluation.run_evaluation": _module(
        "heta_eval.retrieval.result", "RunEvaluation assemble"
    ),
    "heta_eval.evaluation.run_parser": _module("heta_eval.io.run_parser", "parse_run_file"),
    "heta_eval.evaluation.trec_measures": _module(
        "heta_eval.measures.trec_catalogue",
        "ALL_TREC FAMILIES MIN_GEO_MEAN NICKNAMES OFFICIAL TrecFamily family",
    ),
}


def _warn(message: str, *, once_per_from_import: bool = True) -> None:
    """A DeprecationWarning attributed to the first frame outside this module and the import
    machinery: the user's line, so Python's default filters show it where it is in
    ``__main__``. ``from package import name`` asks twice (the import system's ``hasattr``,
    then the name itself): only the second warns (``once_per_from_import``; a module's import
    warns wherever it runs)."""
    frame, level = sys._getframe(1), 2
    while frame is not None:
        module = frame.f_globals.get("__name__")
        if module in ("importlib._bootstrap", "importlib._bootstrap_external"):
            # warnings.warn skips these frames itself: they count for no level.
            if once_per_from_import and frame.f_code.co_name == "_handle_fromlist":
                return
        elif module in (__name__, "importlib"):
            level += 1
        else:
            break
        frame = frame.f_back
    warnings.warn(message, DeprecationWarning, stacklevel=level)


def _resolve(old: str, name: str, new_module: str) -> object:
    _warn(
        f"{old}.{name} moved in heta-eval {DEPRECATED_IN}: use "
        f"'from {new_module} import {name}' (the old path is removed in {REMOVED_IN})"
    )
    return getattr(import_module(new_module), name)


def moved_getattr(package: str, getattr_: Callable[[str], object]) -> Callable[[str], object]:
    """``package``'s ``__getattr__``: its own names through ``getattr_``, then its old names
    (``OLD_NAMES``) from their new home, with a warning on every use (never cached)."""
    moved = OLD_NAMES.get(package, {})

    def __getattr__(name: str) -> object:
        if name in moved:
            return _resolve(package, name, moved[name])
        if f"{package}.{name}" in OLD_MODULES:  # ``heta_eval.trec`` read as an attribute
            return import_module(f"{package}.{name}")
        return getattr_(name)

    return __getattr__


class _OldModule(ModuleType):
    """An old module path: each of its 0.1.0 names resolves to the object of its new home
    (its ``__all__``: the table's; any other public name: its successor's)."""

    def __getattr__(self, name: str) -> object:
        successor, names = OLD_MODULES[self.__name__]
        home = names.get(name)
        # A public name the old module had beside its __all__ (heta_eval.trec.Qrels, ranked)
        # is its successor's, if the successor has it.
        if home is None and not name.startswith("_"):
            home = successor if hasattr(import_module(successor), name) else None
        if home is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        return _resolve(self.__name__, name, home)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(OLD_MODULES[self.__name__][1]))


class _OldModuleFinder:
    """Finds the old module paths (after every real finder: a file always wins)."""

    @classmethod
    def find_spec(
        cls, fullname: str, path: object = None, target: object = None
    ) -> ModuleSpec | None:
        if fullname not in OLD_MODULES:
            return None
        return ModuleSpec(fullname, cls())

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        module = _OldModule(spec.name)
        module.__all__ = sorted(OLD_MODULES[spec.name][1])  # type: ignore[attr-defined]
        return module

    def exec_module(self, module: ModuleType) -> None:
        new = OLD_MODULES[module.__name__][0]
        _warn(
            f"{module.__name__} moved in heta-eval {DEPRECATED_IN}: import from {new} "
            f"(the old path is removed in {REMOVED_IN})",
            once_per_from_import=False,
        )


def install() -> None:
    """Let the old module paths import (once per interpreter)."""
    if _OldModuleFinder not in sys.meta_path:
        sys.meta_path.append(_OldModuleFinder)  # type: ignore[arg-type]
