"""Import paths that moved, each kept working for one minor version: those moved in
heta-eval 0.2.0 until 0.3.0, those moved in 0.3.0 (``heta_eval.kb``'s rooms) until 0.4.0.

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
            ("heta_eval.systems", "HttpKnowledgeBase KnowledgeBase"),
            ("heta_eval.reference", "ReferenceKnowledgeBase"),
        ),
    },
    _EVALUATION: _LEFT_EVALUATION,
}


def _module(new: str, names: str, **elsewhere: str) -> tuple[str, dict[str, str]]:
    """An old module's successor and its 0.1.0 names (``elsewhere``: those living apart)."""
    return new, {name: elsewhere.get(name, new) for name in names.split()}


#: Where the names ``heta_eval.retrieval.evaluate`` gathered (0.2.0) live, each in one place:
#: the evaluation page's, and the rest in the module that does the job.
_RETRIEVAL_HOMES = {
    **_names(
        (_COLLAPSE, "CollapsedBatch DocumentRanking DocumentResolver collapse_batch"),
        (_COLLAPSE, "collapse_to_documents default_document_resolver"),
        ("heta_eval.retrieval.columnar_run", "DuplicateRowsError evaluate_columnar_run"),
    ),
    "Measure": _EVALUATION,
}

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
        _EVALUATION,
        "AggregateValue BEIR_K_VALUES BeirRetrievalMetric CollapsedBatch DocumentRanking "
        "DocumentResolver DuplicateRowsError InputError METRICS Measure RunEvaluation "
        "beir_default_metrics collapse_batch collapse_to_documents default_document_resolver "
        "evaluate_columnar_run evaluate_run evaluate_run_file measure_key parse_measure",
        AggregateValue=_AVERAGING,
        InputError="heta_eval.io.validate",
        **dict.fromkeys(["BEIR_K_VALUES", "METRICS", "measure_key", "parse_measure"], _MEASURE),
        **_RETRIEVAL_HOMES,
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


#: What ``heta_eval.kb`` listed that went to ``heta_eval.systems`` (the rest: ``reference``).
_SYSTEMS_NAMES = (
    "BatchKnowledgeBase CallableKnowledgeBase HttpKnowledgeBase IngestingKnowledgeBase "
    "KnowledgeBase from_callable"
)

#: Moved in 0.3.0 (rooms by job): every module of ``heta_eval.kb``, whole, to the room of its
#: job (``systems``, ``reference``, ``encoding``, ``rerank``, ``ann``, ``lucene``, ``cache``);
#: the Lucene oracle left the package for the checkout's ``tools/`` (developer tooling).
_ROOMS: dict[str, tuple[str, dict[str, str]]] = {
    # A second door to names that have their one documented place (heta_eval.evaluation).
    "heta_eval.retrieval.evaluate": _module(
        _EVALUATION,
        "BeirRetrievalMetric CollapsedBatch DocumentRanking DocumentResolver DuplicateRowsError "
        "RunEvaluation beir_default_metrics collapse_batch collapse_to_documents "
        "default_document_resolver evaluate_columnar_run evaluate_run evaluate_run_file",
        **{name: home for name, home in _RETRIEVAL_HOMES.items() if name != "Measure"},
    ),
    "heta_eval.kb": _module(
        "heta_eval.reference",
        "Answerer AnswererSpec BM25Spec ChatAnswerer Chunk ChunkingSpec DenseSpec "
        "ExtractiveAnswerer MODES Recipe ReferenceKnowledgeBase chunk_document chunk_documents "
        "reciprocal_rank_fusion split_sentences " + _SYSTEMS_NAMES,
        **dict.fromkeys(_SYSTEMS_NAMES.split(), "heta_eval.systems"),
    ),
    "heta_eval.kb.ann": _module(
        "heta_eval.ann",
        "AnnError AnnIndex AnnSpec DENSE_MODES KINDS Setting ann_mode build_index parse_ann "
        "scored_rows split_ann split_specs",
    ),
    "heta_eval.kb.ann.base": _module("heta_eval.ann.base", "AnnError AnnIndex library scored_rows"),
    "heta_eval.kb.ann.compare": _module(
        "heta_eval.ann.compare", "AnnComparison AnnRow TIE compare_indexes overlap_at"
    ),
    "heta_eval.kb.ann.faiss_index": _module("heta_eval.ann.faiss_index", "FaissIndex"),
    "heta_eval.kb.ann.lancedb_index": _module("heta_eval.ann.lancedb_index", "LanceIndex"),
    "heta_eval.kb.ann.qdrant_index": _module("heta_eval.ann.qdrant_index", "QdrantIndex"),
    "heta_eval.kb.ann.spec": _module(
        "heta_eval.ann.spec",
        "AnnSpec DENSE_MODES KINDS Setting ann_mode parse_ann split_ann split_specs",
    ),
    "heta_eval.kb.answerers": _module(
        "heta_eval.reference.answerers", "Answerer ChatAnswerer ExtractiveAnswerer make_answerer"
    ),
    "heta_eval.kb.bm25": _module("heta_eval.reference.bm25", "BM25Index top_indices"),
    "heta_eval.kb.cache": _module(
        "heta_eval.cache.store",
        "ArtifactCache cache_key corpus_fingerprint default_cache_dir load_array save_array",
    ),
    "heta_eval.kb.cache_lock": _module(
        "heta_eval.cache.lock", "CacheLock SAY_EVERY holder_line progress"
    ),
    "heta_eval.kb.calibration_texts": _module(
        "heta_eval.encoding.calibration_texts", "CALIBRATION_TEXTS"
    ),
    "heta_eval.kb.callables": _module(
        "heta_eval.systems.callables",
        "BatchCallableKnowledgeBase CallableKnowledgeBase HitError from_callable",
    ),
    "heta_eval.kb.chunking": _module(
        "heta_eval.reference.chunking", "Chunk chunk_document chunk_documents split_sentences"
    ),
    "heta_eval.kb.cpu": _module(
        "heta_eval.encoding.cpu", "CpuInfo KINDS cpu_kind cpuinfo_field simulated_cpu this_cpu"
    ),
    "heta_eval.kb.cross_encoder": _module(
        "heta_eval.rerank.cross_encoder",
        "CrossEncoderError PairModel RERANK_VERSION check_cross_encoder demo_cross_encoder "
        "load_pair_model model_fingerprint rerank_route",
    ),
    "heta_eval.kb.dense": _module(
        "heta_eval.encoding.dense",
        "CPU_BATCH DEFAULT_MODEL DenseEncoder ENCODING_VERSION GPU_BATCH ModelLoadError "
        "default_model_path embedding_identity native_bfloat16 resolve_precision",
    ),
    "heta_eval.kb.embedding_cache": _module(
        "heta_eval.encoding.embedding_cache", "Encode cached_embeddings text_digests"
    ),
    "heta_eval.kb.exact_search": _module(
        "heta_eval.ann.exact_search", "BLOCK_ROWS QUERY_BATCH exact_search"
    ),
    "heta_eval.kb.given_vectors": _module(
        "heta_eval.reference.given_vectors", "CheckedVectors VectorsError VectorsFile check_vectors"
    ),
    "heta_eval.kb.http_client": _module(
        "heta_eval.systems.http_client", "HttpKnowledgeBase HttpKnowledgeBaseError"
    ),
    "heta_eval.kb.hybrid": _module("heta_eval.reference.hybrid", "reciprocal_rank_fusion"),
    "heta_eval.kb.lucene": _module(
        "heta_eval.lucene", "ENGLISH_STOP_WORDS LuceneBM25Index analyze porter_stem standard_tokens"
    ),
    "heta_eval.kb.lucene._word_break_data": _module("heta_eval.lucene._word_break_data", ""),
    "heta_eval.kb.lucene.analyzer": _module(
        "heta_eval.lucene.analyzer", "ENGLISH_STOP_WORDS analyze term_of token_term"
    ),
    "heta_eval.kb.lucene.blocks": _module(
        "heta_eval.lucene.blocks", "BlockAnalyzers BlockPostings analyze_block"
    ),
    "heta_eval.kb.lucene.build": _module(
        "heta_eval.lucene.build", "DEFAULT_BLOCK_SIZE META build_index tie_ranks_of"
    ),
    "heta_eval.kb.lucene.dfa": _module(
        "heta_eval.lucene.dfa", "DFA alt cat compile_dfa opt plus star sym"
    ),
    "heta_eval.kb.lucene.index": _module(
        "heta_eval.lucene.index", "LUCENE_INDEX_VERSION LuceneBM25Index"
    ),
    "heta_eval.kb.lucene.porter": _module("heta_eval.lucene.porter", "porter_stem"),
    "heta_eval.kb.lucene.search": _module(
        "heta_eval.lucene.search", "Workspace run_kernel search_kernel"
    ),
    "heta_eval.kb.lucene.similarity": _module(
        "heta_eval.lucene.similarity",
        "byte4_to_int encode_lengths idf int_to_byte4 length_table norm_factors",
    ),
    "heta_eval.kb.lucene.terms": _module(
        "heta_eval.lucene.terms", "TermTable TermTableWriter open_array"
    ),
    "heta_eval.kb.lucene.tokenizer": _module(
        "heta_eval.lucene.tokenizer", "MAX_TOKEN_LENGTH block_tokens standard_tokens"
    ),
    "heta_eval.kb.lucene.word_break": _module(
        "heta_eval.lucene.word_break", "CLASS_NAMES REPRESENTATIVES class_table"
    ),
    "heta_eval.kb.onnx_int8": _module(
        "heta_eval.encoding.onnx_int8",
        "Int8Transformer OnnxInt8Transformer cached_folder float_onnx is_ffn_output "
        "model_digest onnxruntime_available quieted",
    ),
    "heta_eval.kb.openvino_int8": _module(
        "heta_eval.encoding.openvino_int8", "OpenVinoInt8Transformer SCHEME openvino_available"
    ),
    "heta_eval.kb.optional": _module("heta_eval.encoding.optional", "importable"),
    "heta_eval.kb.pair_scores": _module("heta_eval.rerank.pair_scores", "PairScores pair_keys"),
    "heta_eval.kb.partial_embeddings": _module(
        "heta_eval.encoding.partial_embeddings", "PartialEmbeddings kept_rows"
    ),
    "heta_eval.kb.passages": _module("heta_eval.reference.passages", "Passages passages"),
    "heta_eval.kb.precision": _module(
        "heta_eval.encoding.precision",
        "PRECISIONS Precision choose_precision cpu_flags cpu_kind cpu_vendor device_kind "
        "resolve_device resolve_precision",
    ),
    "heta_eval.kb.protocol": _module(
        "heta_eval.systems.protocol",
        "BatchKnowledgeBase DEFAULT_BATCH IngestingKnowledgeBase KnowledgeBase Member "
        "OPTIONAL_MEMBERS REQUIRED_MEMBERS is_async member protocol_problem",
    ),
    "heta_eval.kb.recipe": _module(
        "heta_eval.reference.recipe", "AnswererSpec BM25Spec ChunkingSpec DenseSpec Recipe"
    ),
    "heta_eval.kb.reference": _module(
        "heta_eval.reference.knowledge_base", "MODES QueryVectors ReferenceKnowledgeBase"
    ),
    "heta_eval.kb.rerank": _module(
        "heta_eval.rerank.stage", "RERANK_SUFFIX RerankSpec RerankingKnowledgeBase rerank_mode"
    ),
    "heta_eval.kb.reranker": _module(
        "heta_eval.rerank.reranker",
        "CPU_UNIT CrossEncoderReranker GPU_BATCH document_text top_documents",
    ),
    "heta_eval.kb.route_defaults": _module(
        "heta_eval.encoding.route_defaults",
        "DEFAULT_ROUTES DefaultRoute FALLBACK RouteChoice default_route",
    ),
    "heta_eval.kb.routes": _module(
        "heta_eval.encoding.routes",
        "COSINE_BOUND MARGIN ROUTES RouteChoice RouteTiming auto_route calibrate "
        "candidate_routes choose_route resolve_route route_choice route_precision",
    ),
    "heta_eval.kb.run_files": _module("heta_eval.systems.run_files", "RunFileKnowledgeBase"),
    "heta_eval.kb.runners": _module(
        "heta_eval.encoding.runners",
        "DEFAULT_MODEL ModelLoadError TorchRunner cpu_workers default_model_path load_runner "
        "run_alone",
    ),
    "heta_eval.kb.shapes": _module("heta_eval.encoding.shapes", "BUCKET FixedShapes alone shapes"),
    "heta_eval.kb.tokenization": _module(
        "heta_eval.encoding.tokenization",
        "BatchTokenizer ahead_threads rust_threads tokenized_ahead",
    ),
    "heta_eval.kb.vectors": _module("heta_eval.reference.vectors", "DenseParts dense_parts"),
}

#: The version that moved each old path (module or package) of a later generation than
#: DEPRECATED_IN's; each is removed one minor version after its own.
MOVED_IN: dict[str, str] = dict.fromkeys(_ROOMS, "0.3.0")
OLD_MODULES.update(_ROOMS)


def moved_in(old: str) -> str:
    """The version that moved ``old`` (a module path, or the package an old name left)."""
    return MOVED_IN.get(old, DEPRECATED_IN)


def removed_in(version: str) -> str:
    """The version that removes a path moved in ``version``: the next minor version."""
    major, minor, _ = (int(part) for part in version.split("."))
    return f"{major}.{minor + 1}.0"


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
    version = moved_in(old)
    _warn(
        f"{old}.{name} moved in heta-eval {version}: use "
        f"'from {new_module} import {name}' (the old path is removed in {removed_in(version)})"
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
        if any(old.startswith(f"{spec.name}.") for old in OLD_MODULES):
            module.__path__ = []  # an old package: its old modules import through this finder
        return module

    def exec_module(self, module: ModuleType) -> None:
        new, names = OLD_MODULES[module.__name__]
        version = moved_in(module.__name__)
        # An old package whose names went to several rooms (heta_eval.kb) says each.
        homes = [new]
        if version != DEPRECATED_IN:
            homes += sorted(set(names.values()) - {new})
        where = " and ".join([", ".join(homes[:-1]), homes[-1]] if len(homes) > 1 else homes)
        _warn(
            f"{module.__name__} moved in heta-eval {version}: import from {where} "
            f"(the old path is removed in {removed_in(version)})",
            once_per_from_import=False,
        )


def install() -> None:
    """Let the old module paths import (once per interpreter)."""
    if _OldModuleFinder not in sys.meta_path:
        sys.meta_path.append(_OldModuleFinder)  # type: ignore[arg-type]
