"""Ids are checked where they enter, by one rule (:func:`heta_eval.io.ids.id_problem`):
a corpus or case id that breaks it is one line naming file and line before anything runs; a
service reply with such an id fails that query and the run goes on; a lone surrogate in a
run's id is an error, not a crash in C code; ``write_run`` never writes a line that forges a
run. Real files, a real service on 127.0.0.1, real subprocesses (a regression that crashes
the interpreter fails a test instead of ending pytest)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.loopback import LoopbackService

from heta_eval.data.beir_loader import DatasetFormatError, iter_corpus, load_queries
from heta_eval.data.validate import validate_dataset
from heta_eval.io.ids import id_problem
from heta_eval.io.write import write_qrels, write_run
from heta_eval.runner.benchmark import BenchmarkFormatError, JsonlBenchmark

#: Whitespace of every kind, control characters, NUL, a lone surrogate.
BAD = [" ", "\t", "\n", "\r", "\x00", "\x1f", "\x85", "\u2028", "\u3000", "\ud800", "\x7f", "\x9b"]
BAD_IDS = pytest.mark.parametrize("bad", BAD, ids=[f"U+{ord(c):04X}" for c in BAD])
ROOT = Path(__file__).resolve().parents[2]


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def beir_folder(folder: Path, corpus_line_2: str) -> Path:
    (folder / "qrels").mkdir(parents=True)
    corpus = json.dumps({"_id": "d1", "text": "cats purr"}) + "\n" + corpus_line_2 + "\n"
    (folder / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    jsonl(folder / "queries.jsonl", [{"_id": "q1", "text": "cats"}])
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


class Service(LoopbackService):
    """Answers each query with one hit naming the document the query names; the query
    ``bad`` gets ``bad_id`` instead. Counts the requests."""

    def __init__(self, bad_id: str = "", where: str = "document_id") -> None:
        self.requests = 0

        def reply(raw: bytes, _: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
            self.requests += 1
            query = json.loads(raw)["query"]
            source = {"document_id": query, "chunk_id": f"{query}#0"}
            if query == "bad":
                source = {**source, where: bad_id}
            hit = {"text": "x", "score": 1.0, "source": source}
            return 200, json.dumps({"query": query, "results": [hit]}).encode(), {}

        super().__init__(reply)


@pytest.fixture
def service():
    started = Service()
    yield started
    started.close()


def own_benchmark(folder: Path, case_id: str = "q2", doc_id: str = "d2") -> list[str]:
    jsonl(folder / "docs.jsonl", [{"id": d, "text": f"text of {d}"} for d in ("d1", doc_id)])
    cases = [
        {"id": "q1", "query": "d1", "expected": {"relevance": {"d1": 1}}},
        {"id": case_id, "query": "d2", "expected": {"relevance": {"d2": 1}}},
    ]
    jsonl(folder / "cases.jsonl", cases)
    return [
        "run",
        "--benchmark",
        "cases.jsonl",
        "--documents",
        "docs.jsonl",
        "--modes",
        "m",
        "--output",
        "out",
        "--quiet",
    ]


# ------------------------------------------------------------------ the rule


@BAD_IDS
def test_the_id_rule_refuses_whitespace_controls_and_surrogates_anywhere_in_an_id(bad) -> None:
    for text in (f"d{bad}", f"{bad}d", f"a{bad}b", bad):
        assert id_problem(text) is not None, repr(text)


def test_the_id_rule_keeps_ordinary_and_format_characters() -> None:
    for text in (
        "4983",
        "doc-7/ä#2",
        "Nikolaj_Coster-Waldau",
        "<dbpedia:Paris>",
        "日本",
        "a\u200db",
    ):
        assert id_problem(text) is None, text
    assert id_problem("") == "is empty"


# ------------------------------------------------------------------ corpus and cases


@BAD_IDS
def test_a_corpus_id_that_breaks_the_rule_names_file_and_line(tmp_path, bad) -> None:
    folder = beir_folder(tmp_path / "ds", json.dumps({"_id": f"d{bad}2", "text": "dogs"}))
    with pytest.raises(DatasetFormatError, match=r"corpus\.jsonl:2: _id .* holds ") as caught:
        list(iter_corpus(folder / "corpus.jsonl"))
    assert "\n" not in str(caught.value)
    report = validate_dataset(folder, split="test")
    assert not report.ok
    assert any(issue.line == 2 and "holds" in issue.message for issue in report.errors)


@BAD_IDS
def test_a_query_id_that_breaks_the_rule_names_file_and_line(tmp_path, bad) -> None:
    path = jsonl(tmp_path / "queries.jsonl", [{"_id": "q1", "text": "a"}, {"_id": f"q{bad}"}])
    with pytest.raises(DatasetFormatError, match=r"queries\.jsonl:2: _id .* holds "):
        load_queries(path)


@pytest.mark.parametrize(
    "line, why",
    [
        (b'{"_id": "d2", "text": "x\\ud800y"}', "lone surrogate"),
        (b'{"_id": "d2", "title": "\\udc80", "text": "x"}', "lone surrogate"),
        (b'{"_id": "d2", "text": "x", "metadata": {"k": ["\\uDBFF"]}}', "lone surrogate"),
        (b'{"_id": "d2", "text": "caf\xe9"}', "not UTF-8 (byte 0xe9"),
        (b'{"_id": "d2", "text": "\xff"}', "not UTF-8 (byte 0xff"),
    ],
)
def test_a_corpus_line_that_is_not_text_names_file_and_line(tmp_path, line, why) -> None:
    folder = beir_folder(tmp_path / "ds", json.dumps({"_id": "d3", "text": "birds"}))
    with (folder / "corpus.jsonl").open("ab") as handle:
        handle.write(line + b"\n")
    with pytest.raises(DatasetFormatError, match=rf"corpus\.jsonl:3: .*{re.escape(why)}"):
        list(iter_corpus(folder / "corpus.jsonl"))
    report = validate_dataset(folder, split="test")
    assert any(issue.line == 3 and why in issue.message for issue in report.errors)


def test_an_escaped_pair_of_surrogates_is_one_character_and_kept(tmp_path) -> None:
    folder = beir_folder(tmp_path / "ds", '{"_id": "d\\ud83d\\ude00", "text": "\\ud83d\\ude00"}')
    documents = list(iter_corpus(folder / "corpus.jsonl"))
    assert documents[1].id == "d\U0001f600" and documents[1].text == "\U0001f600"


@BAD_IDS
def test_a_case_id_or_a_judged_id_that_breaks_the_rule_names_file_and_line(tmp_path, bad) -> None:
    own_benchmark(tmp_path, case_id=f"q{bad}2")
    with pytest.raises(BenchmarkFormatError, match=r"cases\.jsonl:2: (case id|a field) .*holds "):
        JsonlBenchmark(tmp_path / "cases.jsonl", tmp_path / "docs.jsonl").cases()
    cases = [{"id": "q1", "query": "?", "expected": {"relevance": {f"d{bad}": 1}}}]
    jsonl(tmp_path / "cases.jsonl", cases)
    with pytest.raises(
        BenchmarkFormatError, match=r"cases\.jsonl:1: (case 'q1' judges document|.*lone surrogate)"
    ):
        JsonlBenchmark(tmp_path / "cases.jsonl", tmp_path / "docs.jsonl").cases()


@BAD_IDS
def test_a_document_id_that_breaks_the_rule_names_file_and_line(tmp_path, bad) -> None:
    own_benchmark(tmp_path, doc_id=f"d{bad}2")
    with pytest.raises(
        BenchmarkFormatError, match=r"docs\.jsonl:2: (document id|a field) .*holds "
    ):
        list(JsonlBenchmark(tmp_path / "cases.jsonl", tmp_path / "docs.jsonl").documents())


def test_a_documents_folder_file_whose_name_has_a_space_is_named(tmp_path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "my notes.txt").write_text("text")
    jsonl(tmp_path / "cases.jsonl", [{"id": "q1", "query": "?"}])
    with pytest.raises(
        BenchmarkFormatError, match=r"my notes\.txt: document id 'my notes' holds a"
    ):
        list(JsonlBenchmark(tmp_path / "cases.jsonl", tmp_path / "docs").documents())


def test_a_forging_corpus_id_stops_the_run_in_one_line_before_any_query(tmp_path, service) -> None:
    forged = json.dumps({"_id": "d2 0 forged 1 9.9 x\nq1", "text": "dogs"})
    beir_folder(tmp_path / "ds", forged)
    args = ["run", "--dataset", "ds", "--kb-url", service.url, "--modes", "m", "--output", "out"]
    done = cli(args, tmp_path)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert errors == [
        f"heta-eval run: error: {tmp_path / 'ds' / 'corpus.jsonl'}:2: _id 'd2 0 forged 1 9.9 x\\nq1' "
        "holds a space (' ') (an id is one word without whitespace or controls)"
    ], done.stderr
    assert "Traceback" not in done.stderr
    assert service.requests == 0 and not (tmp_path / "out").exists()


def test_a_case_id_with_a_newline_stops_the_run_in_one_line_before_any_query(
    tmp_path, service
) -> None:
    args = own_benchmark(tmp_path, case_id="q\n2")
    done = cli([*args, "--kb-url", service.url], tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "heta-eval run: error: cases.jsonl:2: case id 'q\\n2' holds a newline ('\\n') "
        "(an id is one word without whitespace or controls)"
    )
    assert "Traceback" not in done.stderr
    assert service.requests == 0 and not (tmp_path / "out").exists()


# ------------------------------------------------------------------ a service's replies


@pytest.mark.parametrize("where", ["document_id", "chunk_id"])
@BAD_IDS
def test_a_reply_with_a_bad_document_id_or_an_unstorable_chunk_id_fails_that_query_only(
    tmp_path, bad, where
) -> None:
    from heta_eval.runner import BenchmarkRunner
    from heta_eval.systems import HttpKnowledgeBase

    server = Service(bad_id=f"d{bad}x", where=where)
    try:
        jsonl(tmp_path / "docs.jsonl", [{"id": d, "text": d} for d in ("d1", "d2", "bad")])
        cases = [
            {"id": f"q{i}", "query": q, "expected": {"relevance": {"d1": 1}}}
            for i, q in enumerate(["d1", "bad", "d2"])
        ]
        jsonl(tmp_path / "cases.jsonl", cases)
        bench = JsonlBenchmark(tmp_path / "cases.jsonl", tmp_path / "docs.jsonl")
        kb = HttpKnowledgeBase(server.url, modes=("m",), max_attempts=1)
        results = BenchmarkRunner(progress=False).run(
            benchmark=bench, knowledge_base=kb, query_modes=("m",), output_dir=tmp_path / "out"
        )
    finally:
        server.close()
    mode = results.summary.modes["m"]
    if where == "chunk_id" and bad not in ("\x00", "\ud800"):  # locators: any text is kept
        assert (mode.answered, mode.failed_queries) == (3, 0)
        hits = (tmp_path / "out" / "hits.jsonl").read_text(encoding="utf-8")
        assert json.dumps(f"d{bad}x", ensure_ascii=False) in hits
        return
    assert (mode.answered, mode.failed_queries) == (2, 1)
    what = "document id" if where == "document_id" else "chunk id"
    assert mode.failure_reasons == {
        f"ReplyError: reply not kept: {what} {f'd{bad}x'!r} {id_problem(f'd{bad}x')}": 1
    }
    lines = [json.loads(line) for line in (tmp_path / "out" / "per_query.jsonl").open()]
    failed = [line for line in lines if line.get("error")]
    assert [line["case_id"] for line in failed] == ["q1"] and "holds" in failed[0]["error"]
    assert (tmp_path / "out" / "summary.json").is_file()
    run = (tmp_path / "out" / "runs" / "m.trec").read_text(encoding="utf-8")
    assert [line.split()[:3] for line in run.splitlines()] == [
        ["q0", "Q0", "d1"],
        ["q2", "Q0", "d2"],
    ]


def test_a_nul_in_one_reply_leaves_every_file_written_and_exits_as_a_partial_run(tmp_path) -> None:
    server = Service(bad_id="d\x002")
    try:
        jsonl(tmp_path / "docs.jsonl", [{"id": d, "text": d} for d in ("d1", "d2")])
        cases = [
            {"id": f"q{i}", "query": q, "expected": {"relevance": {"d1": 1}}}
            for i, q in enumerate(["d1", "bad", "d2", "d1"])
        ]
        jsonl(tmp_path / "cases.jsonl", cases)
        args = [
            "run",
            "--benchmark",
            "cases.jsonl",
            "--documents",
            "docs.jsonl",
            "--modes",
            "m",
            "--output",
            "out",
            "--quiet",
            "--kb-url",
            server.url,
        ]
        done = cli(args, tmp_path)
    finally:
        server.close()
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert "1 × ReplyError: reply not kept: document id 'd\\x002' holds a NUL" in done.stderr
    out = tmp_path / "out"
    for name in ("summary.json", "per_query.jsonl", "table.md", "runs/m.trec"):
        assert (out / name).is_file(), name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["modes"]["m"]["answered"] == 3
    assert summary["modes"]["m"]["failed_queries"] == 1


# ------------------------------------------------------------------ runs and library inputs

SURROGATE_SCRIPT = """
import sys
from heta_eval import evaluate_run
from heta_eval.io.validate import InputError
bad = "d\\ud800"
for qrels, run in [({"q1": {"d1": 1}}, {"q1": {bad: 1.0, "d1": 0.5}}),
                   ({"q1": {bad: 1}}, {"q1": {"d1": 0.5}}),
                   ({"q1": {"d1": 1}}, {"q\\udfff": {"d1": 0.5}})]:
    try:
        evaluate_run(qrels, run, k_values=[1])
    except InputError as error:
        print(error)
    else:
        sys.exit("accepted")
"""


def test_a_lone_surrogate_in_a_library_id_is_an_input_error_not_a_crash(tmp_path) -> None:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SURROGATE_SCRIPT],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert done.stdout.splitlines() == [
        "run: query 'q1': doc id 'd\\ud800' contains a lone surrogate (not text)",
        "qrels: query 'q1': doc id 'd\\ud800' contains a lone surrogate (not text)",
        "run: query id 'q\\udfff' contains a lone surrogate (not text)",
    ]


@pytest.mark.parametrize("text", ['{"q1": {"d\\ud800": 1.0}}', '{"q\\udbff": {"d1": 1.0}}'])
def test_a_lone_surrogate_in_a_json_run_is_one_line_from_evaluate(tmp_path, text) -> None:
    (tmp_path / "run.json").write_text(text)
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    done = cli(["evaluate", "--run", "run.json", "--qrels", "qrels.txt"], tmp_path)
    assert done.returncode == 2, (done.returncode, done.stderr)
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("heta-eval evaluate: error: run.json: ") and "lone surrogate" in line


def test_odd_ids_that_trec_eval_reads_are_still_scored(tmp_path) -> None:
    from heta_eval import evaluate_run
    from heta_eval.io.trec import read_run

    (tmp_path / "run.trec").write_text("q1 Q0 d\x1c\u2028\x85 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    run = read_run(tmp_path / "run.trec")
    assert list(run["q1"]) == ["d\x1c\u2028\x85", "d2"]
    result = evaluate_run({"q1": {"d\x1c\u2028\x85": 1}}, run, k_values=[1])
    assert result.per_query["q1"]["NDCG@1"] == 1.0


# ------------------------------------------------------------------ write_run


@BAD_IDS
def test_write_run_refuses_an_id_that_breaks_the_rule_and_writes_nothing(tmp_path, bad) -> None:
    path = tmp_path / "run.trec"
    for run in ({"q1": {"d1": 1.0, f"d{bad}": 2.0}}, {f"q{bad}": {"d1": 1.0}}):
        with pytest.raises(ValueError, match=r"write_run: .*id .* holds .*cannot be written"):
            write_run(run, path)
        assert not path.exists()
    with pytest.raises(ValueError, match="write_qrels: query 'q1': doc id"):
        write_qrels({"q1": {f"d{bad}": 1}}, tmp_path / "qrels.txt")


def test_write_run_never_forges_a_line(tmp_path) -> None:
    path = tmp_path / "run.trec"
    forged = "d1 0 forged 1 9.9 x\nq1"
    with pytest.raises(ValueError) as caught:
        write_run({"q1": {"d2": 1.0, forged: 0.5}}, path)
    assert str(caught.value) == (
        "write_run: query 'q1': doc id 'd1 0 forged 1 9.9 x\\nq1' holds a space (' '); "
        "it cannot be written"
    )
    assert not path.exists()
    with pytest.raises(ValueError, match="doc id '' is empty"):
        write_run({"q1": {"": 1.0}}, path)
    write_run({"q1": {"d\u202ex": 1.0, "日本": 0.5}}, path)  # format characters split nothing
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2


class CountingKB:
    modes = ("m",)

    def __init__(self) -> None:
        self.queries = 0

    async def query(self, text: str, *, mode: str, top_k: int) -> dict:
        self.queries += 1
        return {"query": text, "results": [{"score": 1.0, "source": {"document_id": "d1"}}]}


class InCode:
    """A benchmark built in Python, not read from files."""

    name = "in-code"

    def __init__(self, doc_id: str = "d1", case_id: str = "q1", judged: str = "d1") -> None:
        self.doc_id, self.case_id, self.judged = doc_id, case_id, judged

    def documents(self):
        from heta_eval.evaluation import Document

        return [Document(id="d0", text="a"), Document(id=self.doc_id, text="b")]

    def cases(self):
        from heta_eval.evaluation import BenchmarkCase

        return [BenchmarkCase(id=self.case_id, query="?", expected={"relevance": {self.judged: 1}})]

    def evaluators(self):
        from heta_eval.evaluation import beir_default_metrics

        return beir_default_metrics(k_values=(1,))


@pytest.mark.parametrize(
    "fields, said",
    [
        ({"doc_id": "d 1"}, "in-code: document id 'd 1' holds a space"),
        ({"doc_id": "d\u2028"}, "in-code: document id 'd\\u2028' holds a line separator"),
        ({"case_id": "q\r1"}, "in-code: case id 'q\\r1' holds a carriage return"),
        ({"judged": "d\x00"}, "in-code: case 'q1' judges document id 'd\\x00', which holds a NUL"),
        (
            {"judged": "d\ud800"},
            "in-code: case 'q1' judges document id 'd\\ud800', which holds a lone",
        ),
    ],
)
def test_a_benchmark_built_in_code_is_checked_by_the_same_rule_before_any_query(
    tmp_path, fields, said
) -> None:
    from heta_eval.runner import BenchmarkRunner

    kb = CountingKB()
    with pytest.raises(BenchmarkFormatError) as caught:
        BenchmarkRunner(progress=False).run(
            benchmark=InCode(**fields),
            knowledge_base=kb,
            query_modes=("m",),
            output_dir=tmp_path / "out",
        )
    assert str(caught.value).startswith(said), str(caught.value)
    assert kb.queries == 0 and not (tmp_path / "out").exists()


def test_a_journaled_record_whose_ids_would_forge_the_run_is_asked_again(tmp_path) -> None:
    from heta_eval.runner import BenchmarkRunner
    from heta_eval.systems import HttpKnowledgeBase

    jsonl(tmp_path / "docs.jsonl", [{"id": d, "text": d} for d in ("d1", "d2")])
    cases = [
        {"id": f"q{i}", "query": q, "expected": {"relevance": {q: 1}}}
        for i, q in enumerate(["d1", "d2"])
    ]
    jsonl(tmp_path / "cases.jsonl", cases)
    server = Service()
    try:
        for _ in range(2):
            BenchmarkRunner(progress=False).run(
                benchmark=JsonlBenchmark(tmp_path / "cases.jsonl", tmp_path / "docs.jsonl"),
                knowledge_base=HttpKnowledgeBase(server.url, modes=("m",)),
                query_modes=("m",),
                output_dir=tmp_path / "out",
            )
            if server.requests == 2:  # as an earlier version could have kept it
                journal = tmp_path / "out" / "per_query.jsonl"
                text = journal.read_text(encoding="utf-8")
                journal.write_text(text.replace('[["d2",', '[["d2 0 forged 1 9.9 x\\nq0",'))
    finally:
        server.close()
    assert server.requests == 3  # the tampered case only
    run = (tmp_path / "out" / "runs" / "m.trec").read_text(encoding="utf-8")
    assert [line.split()[:3] for line in run.splitlines()] == [
        ["q0", "Q0", "d1"],
        ["q1", "Q0", "d2"],
    ]


@pytest.mark.parametrize(
    "payload",
    [b"[" * 100_000 + b"]" * 100_000, b'{"query": "x", "results": [{"source": []}]}', b"\xff\xfe"],
    ids=["deep", "source-not-object", "not-utf8"],
)
def test_any_reply_that_cannot_be_read_fails_that_query_only(tmp_path, payload) -> None:
    from heta_eval.runner import BenchmarkRunner
    from heta_eval.systems import HttpKnowledgeBase

    def reply(raw: bytes, _: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        query = json.loads(raw)["query"]
        if query == "bad":
            return 200, payload, {}
        hit = {"score": 1.0, "source": {"document_id": query}}
        return 200, json.dumps({"query": query, "results": [hit]}).encode(), {}

    server = LoopbackService(reply)
    try:
        jsonl(tmp_path / "docs.jsonl", [{"id": d, "text": d} for d in ("d1", "d2")])
        cases = [
            {"id": f"q{i}", "query": q, "expected": {"relevance": {"d1": 1}}}
            for i, q in enumerate(["d1", "bad", "d2"])
        ]
        jsonl(tmp_path / "cases.jsonl", cases)
        results = BenchmarkRunner(progress=False).run(
            benchmark=JsonlBenchmark(tmp_path / "cases.jsonl", tmp_path / "docs.jsonl"),
            knowledge_base=HttpKnowledgeBase(server.url, modes=("m",), max_attempts=1),
            query_modes=("m",),
            output_dir=tmp_path / "out",
        )
    finally:
        server.close()
    mode = results.summary.modes["m"]
    assert (mode.answered, mode.failed_queries) == (2, 1), mode.failure_reasons
    assert (tmp_path / "out" / "summary.json").is_file()


@pytest.mark.parametrize(
    "line, said",
    [
        (
            b'{"id": "q2", "query": "caf\xe9"}',
            "cases.jsonl:2: not UTF-8 text (byte 0xe9 at column 27)",
        ),
        (b'{"id": "q2", "query": "x\\ud800"}', "cases.jsonl:2: a field holds a lone surrogate"),
        (b'{"id": "q2", "query": ' + b"[" * 100_000, "cases.jsonl:2: invalid JSON"),
    ],
)
def test_a_case_line_that_is_not_text_names_file_and_line(tmp_path, line, said) -> None:
    (tmp_path / "cases.jsonl").write_bytes(b'{"id": "q1", "query": "?"}\n' + line + b"\n")
    with pytest.raises(BenchmarkFormatError) as caught:
        JsonlBenchmark(tmp_path / "cases.jsonl", tmp_path / "docs.jsonl").cases()
    assert str(caught.value).startswith(f"{tmp_path / said}"), str(caught.value)
