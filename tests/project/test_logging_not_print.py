"""Library code logs through ``logging``; the command line decides what to print.

* No ``print(`` (nor a write to ``sys.stdout`` / ``sys.stderr``) in the library outside
  ``heta_eval/cli/`` and the command-line tools of :data:`COMMAND_LINE_TOOLS`, read with
  ``ast`` (a docstring example is not code).
* ``heta-eval run`` prints the library's lines on stderr as it did when the library printed
  them: its status lines and warnings, and with ``--quiet`` only what ``--quiet`` never hid
  (the report's path); nothing of them on stdout.
* ``heta_eval.cli.main`` called twice in one program prints each line once, also where the
  program configured the root logger, and leaves the ``heta_eval`` logger as it was.
* From Python, ``BenchmarkRunner().run(...)`` prints no status line: each is a log record
  (``caplog``), shown by ``logging.basicConfig(level=logging.INFO)``; a warning reaches
  stderr with no configuration at all (Python's last-resort handler).
"""

from __future__ import annotations

import ast
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.kb_fixtures import AnimalBenchmark, KeywordOverlapKB
from support.loopback import LoopbackService

from heta_eval.cli import main
from heta_eval.runner import BenchmarkRunner

REPO = Path(__file__).resolve().parents[2]

#: Command-line tools outside ``heta_eval/cli/``: their prints are a command's output, which
#: is the command's to decide. Path -> the function whose prints are that output (None: the
#: whole module).
COMMAND_LINE_TOOLS = {
    # ``python -m tools.lucene_oracle.oracle``: a developer's check against Java Lucene
    # (Anserini); its report of differences is what it prints. No library code imports it.
    "tools/lucene_oracle/oracle.py": None,
    # ``python -m heta_eval.adapters.scifact_claims``: prints the benchmark's counts.
    "adapters/scifact_claims.py": "_main",
}


def printing_calls(source: str) -> list[tuple[int, str]]:
    """(line, function) of each ``print(...)`` / ``sys.stdout.write(...)`` /
    ``sys.stderr.write(...)`` call in ``source`` (function: the enclosing one, or "")."""
    found = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = (
                child.name
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                else function
            )
            if isinstance(child, ast.Call) and _prints(child.func):
                found.append((child.lineno, function))
            visit(child, inner)

    visit(ast.parse(source), "")
    return found


def _prints(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id == "print"
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "write"
        and isinstance(func.value, ast.Attribute)
        and func.value.attr in ("stdout", "stderr")
        and isinstance(func.value.value, ast.Name)
        and func.value.value.id == "sys"
    )


def library_prints(root: Path) -> list[str]:
    """``file:line`` of each printing call in the library under ``root`` (``heta_eval/`` and
    ``adapters/``) outside ``heta_eval/cli/`` and :data:`COMMAND_LINE_TOOLS`."""
    found = []
    for top in ("heta_eval", "adapters"):
        for path in sorted((root / top).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            if name.startswith(("heta_eval/cli/", "heta_eval/adapters/")):
                continue  # the command line; adapters/ is read under its own name
            if name in COMMAND_LINE_TOOLS and COMMAND_LINE_TOOLS[name] is None:
                continue
            for line, function in printing_calls(path.read_text(encoding="utf-8")):
                if function != COMMAND_LINE_TOOLS.get(name, ""):
                    found.append(f"{name}:{line}")
    return found


def test_library_code_prints_nothing():
    found = library_prints(REPO)
    assert not found, (
        "library code prints; log through logging.getLogger(__name__) instead (the command "
        "line prints its records): " + ", ".join(found)
    )


def test_the_scan_names_each_print_by_file_and_line_and_skips_docstrings(tmp_path):
    module = tmp_path / "heta_eval" / "tool.py"
    module.parent.mkdir()
    (tmp_path / "heta_eval" / "cli").mkdir()
    (tmp_path / "adapters").mkdir()
    module.write_text(
        '"""\n>>> print("a docstring example")\n"""\nimport sys\n\n\ndef f():\n'
        '    print("said")\n    sys.stderr.write("said\\n")\n    log.info("fine")\n',
        encoding="utf-8",
    )
    (tmp_path / "heta_eval" / "cli" / "run.py").write_text('print("the CLI may")\n')
    (tmp_path / "adapters" / "scifact_claims.py").write_text(
        'def _main():\n    print("its output")\n\n\ndef other():\n    print("not this")\n'
    )
    assert library_prints(tmp_path) == [
        "heta_eval/tool.py:8",
        "heta_eval/tool.py:9",
        "adapters/scifact_claims.py:6",
    ]


# -- what the command line prints ----------------------------------------------------------

DOCS = {"paris": "Paris is the capital of France.", "rome": "Rome is the capital of Italy."}
CASES = [
    {"id": "q1", "query": "capital of France", "expected": {"relevance": {"paris": 1}}},
    # Judges a document the corpus lacks: a warning the runner logs (hidden by --quiet).
    {"id": "q2", "query": "capital of Italy", "expected": {"relevance": {"rome": 1, "nope": 1}}},
]
JUDGED_MISSING = (
    "warning: case 'q2' judges document 'nope', which is not among the 2 documents: it can "
    "never be retrieved (a typo?)"
)


def _reply(body: bytes, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
    asked = json.loads(body)
    results = [{"doc_id": d, "text": t, "score": 2.0 - i} for i, (d, t) in enumerate(DOCS.items())]
    return 200, json.dumps({"query": asked["query"], "results": results}).encode(), {}


@pytest.fixture
def service():
    served = LoopbackService(_reply)
    yield served
    served.close()


@pytest.fixture
def bench(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "docs").mkdir()
    for name, text in DOCS.items():
        (tmp_path / "docs" / f"{name}.txt").write_text(text, encoding="utf-8")
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_args(url: str, output: str, *extra: str) -> list[str]:
    return [
        "run",
        "--benchmark",
        "cases.jsonl",
        "--documents",
        "docs",
        "--kb-url",
        url,
        "--modes",
        "alpha",
        "--output",
        output,
        *extra,
    ]


def heta_eval(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_run_prints_the_librarys_lines_on_stderr_and_quiet_hides_what_it_hid(bench, service):
    loud = heta_eval(run_args(service.url, "loud"), bench)
    assert loud.returncode == 0, loud.stderr
    # Less the query loop's progress bar (tqdm's own lines, after an empty one).
    lines = [line for line in loud.stderr.splitlines() if line and not line.startswith("alpha:")]
    assert lines == [
        "== cases: modes alpha -> loud",  # the command's own
        "reading the documents of cases",  # BenchmarkRunner, INFO
        JUDGED_MISSING,  # BenchmarkRunner, WARNING
        "note: asking the knowledge base for 101 hits per query, not top_k=100: the largest "
        "metric k is 100 and one extra hit covers a removed self-hit",  # BenchmarkRunner, INFO
        "results: loud",  # the command's own
        "report: loud/report.html",  # heta_eval.report.hook, INFO
    ]
    assert "reading the documents" not in loud.stdout and "report:" not in loud.stdout

    quiet = heta_eval(run_args(service.url, "quiet", "--quiet"), bench)
    assert quiet.returncode == 0, quiet.stderr
    assert (
        quiet.stderr
        == "== cases: modes alpha -> quiet\nresults: quiet\nreport: quiet/report.html\n"
    )
    assert "report:" not in quiet.stdout


def test_main_twice_in_one_program_prints_each_line_once(bench, service, capsys):
    logger = logging.getLogger("heta_eval")
    before = (list(logger.handlers), logger.level, logger.propagate)
    # A program that logs to stderr itself: the command's lines are not printed twice.
    root = logging.StreamHandler(sys.stderr)  # the stream pytest captures
    root.setFormatter(logging.Formatter("ROOT %(message)s"))
    logging.getLogger().addHandler(root)
    try:
        assert main(run_args(service.url, "twice", "--quiet")) == 0
        first = capsys.readouterr().err
        assert main(run_args(service.url, "twice", "--quiet")) == 0
        second = capsys.readouterr().err
    finally:
        logging.getLogger().removeHandler(root)
    assert first == "== cases: modes alpha -> twice\nresults: twice\nreport: twice/report.html\n"
    assert second == (
        "== cases: modes alpha -> twice\nresults: twice\nreport: twice/report.html (unchanged)\n"
    )
    assert (list(logger.handlers), logger.level, logger.propagate) == before


# -- what a Python caller sees -------------------------------------------------------------


class _NotTheRegisteredZoo(AnimalBenchmark):
    """Data that is not what it is named after: a warning logged even without progress."""

    warnings = ("these animals are not the registered zoo",)


def test_the_runner_logs_its_status_lines_and_prints_none(caplog, capsys):
    caplog.set_level(logging.INFO, logger="heta_eval")
    results = BenchmarkRunner(progress=True).run(
        benchmark=_NotTheRegisteredZoo(),
        knowledge_base=KeywordOverlapKB(),
        query_modes=("keyword_search",),
    )
    assert results.summary.modes["keyword_search"].answered == 8
    assert ("heta_eval.runner.runner", logging.INFO, "reading the documents of animals") in (
        caplog.record_tuples
    )
    assert (
        "heta_eval.runner.runner",
        logging.WARNING,
        "warning: these animals are not the registered zoo",
    ) in caplog.record_tuples
    err = capsys.readouterr().err
    assert "reading the documents of" not in err and "registered zoo" not in err


API_SCRIPT = """
import logging, sys
from support.kb_fixtures import AnimalBenchmark, KeywordOverlapKB
from heta_eval.runner import BenchmarkRunner

class NotTheRegisteredZoo(AnimalBenchmark):
    warnings = ("these animals are not the registered zoo",)

def run():
    BenchmarkRunner(progress=True).run(benchmark=NotTheRegisteredZoo(),
        knowledge_base=KeywordOverlapKB(), query_modes=("keyword_search",))

run()
print("@@ configured", file=sys.stderr)
logging.basicConfig(level=logging.INFO)
run()
"""


def test_from_python_warnings_show_unconfigured_and_status_lines_with_basic_config(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")]),
        "HETA_EVAL_CACHE_DIR": str(tmp_path / "cache"),
    }
    done = subprocess.run(
        [sys.executable, "-c", API_SCRIPT],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    bare, configured = done.stderr.split("@@ configured\n")
    assert "warning: these animals are not the registered zoo\n" in bare  # as it was printed
    assert "reading the documents of" not in bare
    assert "INFO:heta_eval.runner.runner:reading the documents of animals\n" in configured
    assert (
        "WARNING:heta_eval.runner.runner:warning: these animals are not the registered zoo\n"
        in configured
    )
    assert done.stdout == ""
