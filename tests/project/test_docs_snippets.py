"""The code snippets of the Heta Evaluation docs run as written against heta_eval."""

from __future__ import annotations

import asyncio
import re

import pytest
from support.paths import shared_path

CODE_START = re.compile(r"^(from |import |class |def |async def |@|[A-Za-z_]\w*\(|\w+ = )")


def snippets() -> list[str]:
    """Code blocks of the docs: a code-looking line and what follows it, until prose."""
    text = shared_path("reference", "heta-evaluation-docs.txt").read_text(encoding="utf-8")
    text = text.replace("heta_framework.evaluation", "heta_eval.evaluation")
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in text.splitlines():
        continuation = line.startswith((" ", "\t", ")")) or not line.strip()
        if current is not None and (continuation or CODE_START.match(line)):
            current.append(line)
        elif CODE_START.match(line):
            current = [line]
            blocks.append(current)
        else:
            current = None
    return ["\n".join(block).strip() for block in blocks]


PRELUDE = """
from typing import Protocol
from heta_eval.evaluation import BenchmarkCase, EvaluationScore, QueryResponse
"""


def test_the_docs_have_the_snippets_we_expect():
    found = snippets()
    assert len(found) == 10, found
    assert found[0].startswith("class BenchmarkEvaluatorProtocol(Protocol):")
    assert found[-1].startswith("BenchmarkRunner().run(")


@pytest.mark.parametrize("index", range(9))
def test_evaluation_snippet_runs_as_written(index):
    namespace: dict = {}
    exec(PRELUDE, namespace)
    for snippet in snippets()[: index + 1]:  # later snippets build on earlier ones
        exec(compile(snippet, f"<docs snippet {index}>", "exec"), namespace)


def test_runner_snippet_runs_as_written(tmp_path, monkeypatch):
    """The last snippet: BenchmarkRunner with a custom evaluator overriding the benchmark's."""
    from support.kb_fixtures import AnimalBenchmark

    from heta_eval import BenchmarkRunner, Recipe

    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    namespace: dict = {"BenchmarkRunner": BenchmarkRunner}
    exec(PRELUDE, namespace)
    exec(snippets()[7], namespace)  # class MyEvaluator
    namespace["benchmark"] = AnimalBenchmark(n_cases=4)
    namespace["recipe"] = Recipe(modes=["vector_search"])
    exec("results = " + snippets()[9], namespace)
    results = namespace["results"]
    summary = results.metric("vector_search", "my_score")
    assert (summary.value, summary.scored) == (1.0, 4)
    assert results.summary.evaluators == ["my_score"]


def test_snippets_produce_working_evaluators():
    from heta_eval.evaluation import BenchmarkCase, QueryResponse
    from heta_eval.models.protocol import BenchmarkEvaluatorProtocol

    namespace: dict = {}
    exec(PRELUDE, namespace)
    for snippet in snippets()[:5]:
        exec(snippet, namespace)
    assert [e.name for e in namespace["evaluators"]][:5] == [
        "ndcg@1",
        "ndcg@3",
        "ndcg@5",
        "ndcg@10",
        "ndcg@100",
    ]
    assert len(namespace["evaluators"]) == 25
    for snippet in snippets()[5:9]:
        exec(snippet, namespace)
    my = namespace["MyEvaluator"]()
    assert isinstance(my, BenchmarkEvaluatorProtocol)
    case = BenchmarkCase(id="1", query="?")
    score = asyncio.run(my.evaluate(case=case, response=QueryResponse(query="?")))
    assert (score.name, score.value) == ("my_score", 1.0)
    assert [e.name for e in namespace["evaluators"](None)] == ["my_score"]
