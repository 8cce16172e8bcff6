"""The protocol says what it probes: every member the runner reads of a knowledge base is
declared in heta_eval/systems/protocol.py with its default (and documented), the runner reads
them only through ``member``, and an object missing a required one is refused, naming the
member, before its first query."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from support.kb_fixtures import AnimalBenchmark

import heta_eval
from heta_eval import BenchmarkRunner, QueryResponse
from heta_eval.runner import RunConfigurationError
from heta_eval.systems.protocol import OPTIONAL_MEMBERS, REQUIRED_MEMBERS, member

ROOT = Path(__file__).resolve().parents[2]


def _sources():
    for path in sorted((ROOT / "heta_eval").rglob("*.py")):
        if path.parts[-3:-1] != ("heta_eval", "kb") or path.name == "protocol.py":
            yield path


def test_the_runner_reads_knowledge_base_members_only_through_member():
    probes, names = [], []
    for path in _sources():
        if "runner" not in path.parts and path.name != "run.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            if node.func.id in ("getattr", "hasattr") and re.fullmatch(
                r"(self\.)?(kb|knowledge_base)", ast.unparse(node.args[0])
            ):
                probes.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
            if node.func.id == "member":
                names.append(node.args[1].value)
    assert probes == []
    assert set(names) <= set(OPTIONAL_MEMBERS)
    # Every declared member is read somewhere: the table lists nothing the runner ignores.
    assert set(names) == set(OPTIONAL_MEMBERS)


def test_every_member_is_documented_with_its_default():
    page = (ROOT / "docs" / "knowledge-bases.md").read_text(encoding="utf-8")
    for name in [*REQUIRED_MEMBERS, *OPTIONAL_MEMBERS]:
        assert f"`{name}`" in page, name
    assert member(object(), "batch_size") == 64


class Answers:
    """A knowledge base that counts its queries."""

    modes = ("default",)

    def __init__(self):
        self.asked = 0

    async def query(self, text, *, mode, top_k):
        self.asked += 1
        return QueryResponse(
            query=text, results=[{"score": 1.0, "source": {"document_id": "cats"}}]
        )


def _refused(kb, tmp_path) -> str:
    with pytest.raises(RunConfigurationError) as raised:
        BenchmarkRunner(progress=False).run(
            benchmark=AnimalBenchmark(2),
            knowledge_base=kb,
            query_modes=("default",),
            output_dir=tmp_path / "out",
        )
    assert not (tmp_path / "out").exists()  # refused before anything ran or was written
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_a_knowledge_base_without_query_is_refused_naming_it(tmp_path):
    class NoQuery:
        modes = ("default",)

    assert _refused(NoQuery(), tmp_path) == (
        "knowledge base 'kb' (NoQuery) cannot be run: it has no query: async query(text, *, "
        "mode, top_k) -> QueryResponse (or its dict): one query's hits, best first; what it "
        "raises fails only that case"
    )


def test_a_sync_query_is_refused_before_the_first_query(tmp_path):
    class Blocking(Answers):
        def query(self, text, *, mode, top_k):
            self.asked += 1

    kb = Blocking()
    assert "its query is not async: declare it `async def query(...)`" in _refused(kb, tmp_path)
    assert kb.asked == 0


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"modes": None}, "it has no modes: the modes it answers"),
        ({"modes": "default"}, "its modes must be a tuple of names, got 'default'"),
        ({"modes": ()}, "its modes are empty"),
        ({"modes": (1,)}, "its modes must be a tuple of names, got (1,)"),
        ({"query": 3}, "its query is not callable (a int)"),
        ({"batch_size": 0, "query_batch": Answers.query}, "its batch_size must be a positive"),
        ({"takes_query_id": True}, "its query cannot take the runner's arguments ['mode', 'query"),
    ],
)
def test_each_required_member_is_checked(change, said, tmp_path):
    kb = type("Changed", (Answers,), change)()
    assert said in _refused(kb, tmp_path)


def test_a_query_without_top_k_is_refused(tmp_path):
    class NoTopK(Answers):
        async def query(self, text, *, mode):
            return QueryResponse(query=text)

    assert "its query cannot take the runner's arguments ['mode', 'top_k']" in _refused(
        NoTopK(), tmp_path
    )


def test_a_given_knowledge_base_records_its_build_info_and_is_closed(tmp_path):
    class Described(Answers):
        closed = 0

        def __init__(self):
            super().__init__()
            self.build_info = {"wraps": {"library": "mine", "version": "1.0"}}
            self.identity = {"class": "Described", "k": 3}

        async def aclose(self):
            Described.closed += 1

    kb = Described()
    BenchmarkRunner(progress=False).run(
        benchmark=AnimalBenchmark(2),
        knowledge_base=kb,
        query_modes=("default",),
        output_dir=tmp_path,
    )
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["build"] == {"wraps": {"library": "mine", "version": "1.0"}}
    assert json.loads((tmp_path / "run.json").read_text())["system"]["identity"] == {
        "class": "Described",
        "k": 3,
    }
    assert (kb.asked, Described.closed) == (2, 1)


def test_the_protocol_doctest_example_of_heta_eval_systems_loads_nothing_heavy():
    import subprocess
    import sys

    code = (
        "import sys; from heta_eval.systems import KnowledgeBase, from_callable\n"
        "print(sorted(m for m in ('bm25s', 'torch', 'heta_eval.reference.knowledge_base') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    assert heta_eval.from_callable is heta_eval.systems.from_callable
