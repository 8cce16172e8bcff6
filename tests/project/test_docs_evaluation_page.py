"""The Heta Evaluation docs' evaluators page (../shared/reference/heta-evaluation-docs.txt),
run as written: each code block of the page, verbatim but for the package name
(``heta_framework.evaluation`` -> ``heta_eval.evaluation``), and what the page says it does.

The page shows fragments, so a block may use names it never defines; the test provides them,
each real (no stand-ins):

* the Protocol block: ``Protocol`` (typing's) and ``BenchmarkCase``, ``QueryResponse``,
  ``EvaluationScore`` from ``heta_eval.evaluation`` (the page shows the class, not its imports);
* the EvaluationScore example and the custom evaluator: ``EvaluationScore``, likewise;
* ``def evaluators(self)``: the page says to declare it in a benchmark, so it becomes the
  method of a small real benchmark (``Animals``: four documents, four cases with judgments);
* the runner block: ``BenchmarkRunner`` (``heta_eval``'s), ``benchmark`` (an ``Animals`` whose
  own policy is BEIR's 25 metrics, for the block's ``evaluators=`` to override) and
  ``recipe`` (a real reference-kb ``Recipe`` in ``vector_search`` mode, float32 on the CPU so
  no int8 export runs); ``MyEvaluator`` comes from the page's own custom-evaluator block.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import typing
from typing import Any

import pytest
from support.paths import shared_path

import heta_eval
from heta_eval import evaluation
from heta_eval.evaluation import BenchmarkCase, Document, EvaluationScore, QueryResponse
from heta_eval.llm import LLMClient

PAGE = ("reference", "heta-evaluation-docs.txt")

#: Every code block of the page, in its order, as the page writes it.
BLOCKS = {
    "protocol": """class BenchmarkEvaluatorProtocol(Protocol):
    @property
    def name(self) -> str: ...

    async def evaluate(
        self,
        *,
        case: BenchmarkCase,
        response: QueryResponse,
    ) -> EvaluationScore: ...""",
    "score": """EvaluationScore(
    name="evidence_recall@5",
    value=0.8,
    passed=None,
    metadata={"matched": 4, "expected": 5},
)""",
    "evidence_recall": """from heta_framework.evaluation import EvidenceRecallAtK

EvidenceRecallAtK(k=5)""",
    "beir_metric": """from heta_framework.evaluation import BeirRetrievalMetric

BeirRetrievalMetric(metric="ndcg", k=10)
BeirRetrievalMetric(metric="recall", k=10)""",
    "beir_defaults": """from heta_framework.evaluation import beir_default_metrics

evaluators = beir_default_metrics(
    k_values=(1, 3, 5, 10, 100),
)""",
    "answer_contains": """from heta_framework.evaluation import AnswerContains

AnswerContains()""",
    "answer_exact_match": """from heta_framework.evaluation import AnswerExactMatch

AnswerExactMatch()""",
    "custom": """class MyEvaluator:
    name = "my_score"

    async def evaluate(self, *, case, response):
        return EvaluationScore(
            name=self.name,
            value=1.0,
        )""",
    "declared": """def evaluators(self):
    return (MyEvaluator(),)""",
    "runner": """BenchmarkRunner().run(
    benchmark=benchmark,
    recipe=recipe,
    knowledge_base_name="kb",
    query_modes=("vector_search",),
    evaluators=(MyEvaluator(),),
)""",
}

#: The page's lists that are data, not code: the locator fields it says are recognised and
#: the metrics BeirRetrievalMetric supports.
LOCATOR_FIELDS = ["document_id", "source_key", "object_key", "page_index", "chunk_id"]
BEIR_METRICS = ["ndcg", "map", "recall", "precision", "mrr"]


def run_block(key: str, namespace: dict[str, Any]) -> list[Any]:
    """Run block ``key`` with only the package name replaced; the values of its expression
    statements, in order (as an interactive session shows them)."""
    source = BLOCKS[key].replace("heta_framework.evaluation", "heta_eval.evaluation")
    values = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Expr):
            values.append(eval(compile(ast.Expression(node.value), key, "eval"), namespace))
        else:
            exec(compile(ast.Module([node], []), key, "exec"), namespace)
    return values


def score(evaluator: Any, case: BenchmarkCase, response: QueryResponse) -> EvaluationScore:
    return asyncio.run(evaluator.evaluate(case=case, response=response))


def test_every_block_is_the_pages_text_verbatim_and_the_page_has_no_other():
    page = shared_path(*PAGE).read_text(encoding="utf-8")
    for key, block in BLOCKS.items():
        assert block in page, key
    # Every line that starts code on the page belongs to one of the blocks above.
    starts = (
        "from ",
        "import ",
        "class ",
        "def ",
        "async def ",
        "evaluators =",
        "BenchmarkRunner(",
        "EvaluationScore(",
        "EvidenceRecallAtK(",
        "Answer",
    )
    code = [line for line in page.splitlines() if line.startswith(starts)]
    assert code and all(any(line in block for block in BLOCKS.values()) for line in code), code
    assert [line for line in page.splitlines() if line.strip() in LOCATOR_FIELDS] == LOCATOR_FIELDS
    assert [line for line in page.splitlines() if line.strip() in BEIR_METRICS] == BEIR_METRICS
    assert all("heta_framework.evaluation" in line for line in code if "import" in line)


def test_the_protocol_block_is_the_protocol_heta_eval_evaluation_exports():
    namespace = {
        "Protocol": typing.Protocol,
        "BenchmarkCase": BenchmarkCase,
        "QueryResponse": QueryResponse,
        "EvaluationScore": EvaluationScore,
    }
    run_block("protocol", namespace)
    page, ours = namespace["BenchmarkEvaluatorProtocol"], evaluation.BenchmarkEvaluatorProtocol
    assert ours is heta_eval.BenchmarkEvaluatorProtocol
    assert isinstance(vars(ours)["name"], property) and isinstance(vars(page)["name"], property)
    assert inspect.iscoroutinefunction(ours.evaluate) and inspect.iscoroutinefunction(page.evaluate)
    assert (
        typing.get_type_hints(ours.evaluate)
        == typing.get_type_hints(page.evaluate)
        == {"case": BenchmarkCase, "response": QueryResponse, "return": EvaluationScore}
    )
    kinds = [(p.name, p.kind) for p in inspect.signature(ours.evaluate).parameters.values()]
    assert kinds == [(p.name, p.kind) for p in inspect.signature(page.evaluate).parameters.values()]
    # Every evaluator of heta_eval.evaluation implements it.
    evaluators = [
        evaluation.EvidenceRecallAtK(),
        evaluation.BeirRetrievalMetric("ndcg", 10),
        evaluation.AnswerContains(),
        evaluation.AnswerExactMatch(),
        evaluation.AnswerF1(),
        evaluation.ContextPrecisionAtK(),
        evaluation.CitationPrecision(),
        evaluation.CitationRecall(),
        evaluation.LLMJudge(LLMClient(base_url="http://127.0.0.1:9/v1", model="m"), cache=False),
    ]
    assert all(isinstance(evaluator, ours) for evaluator in evaluators)
    assert all(isinstance(e, ours) for e in evaluation.beir_default_metrics())


def test_the_score_block_builds_the_score_it_shows_and_value_is_a_float_bool_or_str():
    (shown,) = run_block("score", {"EvaluationScore": EvaluationScore})
    assert (shown.name, shown.value, shown.passed) == ("evidence_recall@5", 0.8, None)
    assert shown.metadata == {"matched": 4, "expected": 5}
    for value in (0.5, True, "partly"):
        assert EvaluationScore(name="s", value=value, passed=False).value == value
    with pytest.raises(ValueError, match="value"):
        EvaluationScore(name="s", value=[1, 2])


def _case(*evidence: dict[str, Any]) -> BenchmarkCase:
    return BenchmarkCase(id="q", query="?", expected={"evidence": list(evidence)})


def _reply(*results: dict[str, Any]) -> QueryResponse:
    return QueryResponse(query="?", results=list(results))


def test_evidence_recall_at_5_reads_the_top_5_results_and_returns_the_pages_example_score():
    (recall,) = run_block("evidence_recall", {})
    assert recall.name == "evidence_recall@5"
    # Five gold items, four held by the top five results, the fifth only at rank 6.
    gold = [{"locator": {"document_id": f"d{i}"}} for i in range(5)]
    results = [{"text": "x", "source": {"document_id": f"d{i}"}} for i in (0, 1, 2, 3)]
    results += [{"text": "filler"}, {"text": "x", "source": {"document_id": "d4"}}]
    found = score(recall, _case(*gold), _reply(*results))
    (shown,) = run_block("score", {"EvaluationScore": EvaluationScore})
    assert (found.name, found.value, found.passed) == (shown.name, shown.value, shown.passed)
    assert {key: found.metadata[key] for key in shown.metadata} == shown.metadata


@pytest.mark.parametrize("field", LOCATOR_FIELDS)
def test_evidence_recall_recognises_each_locator_field_the_page_lists(field):
    (recall,) = run_block("evidence_recall", {})
    gold = {"locator": {field: "7"}, "text": "the sky is blue"}
    # The locator decides before the text: a matching locator holds it whatever the text...
    held = score(recall, _case(gold), _reply({"text": "unrelated", "source": {field: 7}}))
    assert held.value == 1.0 and held.metadata["details"][0]["method"] == "locator"
    # ...and a contradicting one never does, even with the gold text in the chunk.
    elsewhere = _reply({"text": "the sky is blue", "source": {field: "8"}})
    assert score(recall, _case(gold), elsewhere).value == 0.0


def test_evidence_recall_matches_by_locator_then_reference_id_then_text():
    (recall,) = run_block("evidence_recall", {})
    gold = {"locator": {"document_id": "d1"}, "reference_id": "r1", "text": "the sky is blue"}
    by_reference = _reply({"text": "The sky is blue.", "reference_id": "r1"})
    by_text = _reply({"text": "Why the sky is blue, explained."})
    by_locator = _reply(
        {"text": "The sky is blue.", "reference_id": "r1", "source": {"document_id": "d1"}}
    )
    for reply, method in (
        (by_locator, "locator"),
        (by_reference, "reference_id"),
        (by_text, "text"),
    ):
        found = score(recall, _case(gold), reply)
        assert (found.value, found.metadata["details"][0]["method"]) == (1.0, method)
    assert score(recall, _case(gold), _reply({"text": "grass is green"})).value == 0.0


def test_beir_metrics_map_chunks_to_their_documents_and_count_each_document_once():
    ndcg, recall = run_block("beir_metric", {})
    assert (ndcg.name, recall.name) == ("ndcg@10", "recall@10")
    case = BenchmarkCase(id="q", query="?", expected={"relevance": {"d1": 1, "d3": 1}})
    # Two chunks of d2 then one of d1: as documents, d2 at rank 1 and d1 at rank 2.
    reply = _reply(
        {"text": "a", "source": {"document_id": "d2"}},
        {"text": "b", "source": {"document_id": "d2"}},
        {"text": "c", "source": {"document_id": "d1"}},
    )
    documents = heta_eval.evaluate_run({"q": {"d1": 1, "d3": 1}}, {"q": {"d2": 2.0, "d1": 1.0}})
    expected = documents.per_query["q"]
    assert score(ndcg, case, reply).value == pytest.approx(expected["NDCG@10"])
    assert score(recall, case, reply).value == pytest.approx(expected["Recall@10"]) == 0.5
    assert expected["NDCG@10"] == pytest.approx(0.38685, abs=1e-5)  # not d1 at rank 3: 0.30657


@pytest.mark.parametrize("metric", BEIR_METRICS)
def test_beir_retrieval_metric_supports_each_metric_the_page_lists(metric):
    evaluator = evaluation.BeirRetrievalMetric(metric=metric, k=10)
    case = BenchmarkCase(id="q", query="?", expected={"relevance": {"d1": 1}})
    reply = _reply({"text": "a", "source": {"document_id": "d1"}})
    assert score(evaluator, case, reply).value == pytest.approx(0.1 if metric == "precision" else 1)


def test_a_metric_the_page_does_not_list_is_refused_naming_the_ones_it_does():
    with pytest.raises(ValueError, match="unknown metric 'f1'; choose from ndcg, map, recall"):
        evaluation.BeirRetrievalMetric(metric="f1", k=10)


def test_beir_default_metrics_gives_the_five_metrics_at_each_cutoff():
    namespace: dict[str, Any] = {}
    run_block("beir_defaults", namespace)
    names = [evaluator.name for evaluator in namespace["evaluators"]]
    assert sorted(names) == sorted(f"{m}@{k}" for m in BEIR_METRICS for k in (1, 3, 5, 10, 100))


def _answers(evaluator: Any, answer: str) -> EvaluationScore:
    case = BenchmarkCase(id="q", query="?", expected={"answers": ["Paris", "City of Light"]})
    return score(evaluator, case, QueryResponse(query="?", answer=answer))


def test_answer_contains_passes_an_answer_that_holds_any_gold_answer_among_other_words():
    (contains,) = run_block("answer_contains", {})
    assert _answers(contains, "The capital of France is Paris, on the Seine.").value is True
    assert _answers(contains, "They call it the city of light.").value is True
    assert _answers(contains, "Lyon.").value is False


def test_answer_exact_match_passes_only_an_answer_equal_to_a_gold_one_once_normalized():
    (exact,) = run_block("answer_exact_match", {})
    assert _answers(exact, "paris.").value is True
    assert _answers(exact, "The City of Light").value is True  # articles and case normalized
    assert _answers(exact, "It is Paris.").value is False


def test_the_custom_evaluator_block_is_an_evaluator():
    namespace = {"EvaluationScore": EvaluationScore}
    run_block("custom", namespace)
    mine = namespace["MyEvaluator"]()
    assert isinstance(mine, evaluation.BenchmarkEvaluatorProtocol)
    found = score(mine, BenchmarkCase(id="q", query="?"), QueryResponse(query="?"))
    assert found == EvaluationScore(name="my_score", value=1.0)


class Animals:
    """Four documents and four cases, each with the document that answers it judged."""

    name = "animals"
    TEXTS: typing.ClassVar = {
        "cats": "Cats purr when they are content.",
        "dogs": "Dogs bark at strangers.",
        "birds": "Birds sing at dawn.",
        "fish": "Fish breathe through gills.",
    }
    QUERIES: typing.ClassVar = {
        "cats": "why do cats purr",
        "dogs": "why do dogs bark",
        "birds": "when do birds sing",
        "fish": "how do fish breathe",
    }

    def documents(self) -> list[Document]:
        return [Document(id=key, text=text) for key, text in self.TEXTS.items()]

    def cases(self) -> list[BenchmarkCase]:
        return [
            BenchmarkCase(id=f"q-{key}", query=query, expected={"relevance": {key: 1}})
            for key, query in self.QUERIES.items()
        ]

    def evaluators(self) -> Any:
        return evaluation.beir_default_metrics()


def test_evaluators_declared_in_a_benchmark_are_its_scoring_policy(tmp_path):
    namespace = {"EvaluationScore": EvaluationScore}
    run_block("custom", namespace)
    run_block("declared", namespace)
    declared = type("Declared", (Animals,), {"evaluators": namespace["evaluators"]})
    results = heta_eval.BenchmarkRunner(progress=False).run(
        benchmark=declared(),
        recipe=heta_eval.Recipe(modes=["keyword_search"]),
        query_modes=("keyword_search",),
        cache_dir=tmp_path,
    )
    assert results.summary.evaluators == ["my_score"]
    mine = results.metric("keyword_search", "my_score")
    assert (mine.value, mine.scored) == (1.0, 4)


def test_the_runner_block_overrides_the_benchmarks_policy_with_its_evaluators():
    # The block names no cache folder: the suite's (HETA_EVAL_CACHE_DIR, set by conftest).
    namespace = {"EvaluationScore": EvaluationScore}
    run_block("custom", namespace)
    dense = {"precision": "float32", "device": "cpu"}
    namespace.update(
        BenchmarkRunner=heta_eval.BenchmarkRunner,
        benchmark=Animals(),
        recipe=heta_eval.Recipe(modes=["vector_search"], dense=dense),
    )
    (results,) = run_block("runner", namespace)
    summary = results.summary
    assert (summary.benchmark, summary.knowledge_base) == ("animals", "kb")
    assert list(summary.modes) == ["vector_search"]
    assert summary.evaluators == ["my_score"]  # not the benchmark's 25 BEIR metrics
    mine = results.metric("vector_search", "my_score")
    assert (mine.value, mine.scored) == (1.0, 4)
    # The knowledge base really answered: every case got its hits.
    assert len(results.records) == 4 and all(record.ok for record in results.records)
