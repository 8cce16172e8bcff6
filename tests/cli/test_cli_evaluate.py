"""``heta-eval evaluate`` on the real SciFact run: trec_eval's figures and beir's numbers."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from beir.datasets.data_loader import GenericDataLoader
from support.beir_reference import beir_numbers

from heta_eval.cli import main
from heta_eval.io.trec import read_run

K = (1, 3, 5, 10, 100)


@pytest.fixture(scope="module")
def evaluate_json(scifact_dir, scifact_run_file):
    def run(*extra: str) -> dict:
        argv = ["evaluate", "--run", str(scifact_run_file), *extra, "--json"]
        proc = subprocess.run(
            [sys.executable, "-m", "heta_eval", *argv], capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    return run


def test_scifact_run_prints_trec_eval_figures_and_equals_beir(
    scifact_dir, scifact_run_file, evaluate_json
):
    out = evaluate_json("--dataset", "scifact", "--data-dir", str(scifact_dir.parent))
    # ../shared/datasets/README.md: trec_eval -m ndcg_cut.10 -m recall.100 -m map_cut.10 -m P.10
    for section in (out, out["strict"]):
        assert round(section["ndcg"]["NDCG@10"], 4) == 0.5701
        assert round(section["recall"]["Recall@100"], 4) == 0.8523
        assert round(section["map"]["MAP@10"], 4) == 0.5165
        assert round(section["precision"]["P@10"], 4) == 0.0783
    # All 300 test queries are in the run, so BEIR's mean and trec_eval -c coincide.
    assert out["counts"]["judged_queries"] == out["counts"]["evaluated_queries"] == 300
    assert out["counts"]["unjudged_queries"] == 809
    _, _, qrels = GenericDataLoader(str(scifact_dir)).load("test")
    expected = beir_numbers(qrels, read_run(scifact_run_file), K)
    ours = {
        key: value
        for name in ("ndcg", "map", "recall", "precision", "mrr")
        for key, value in out[name].items()
    }
    assert ours == expected


def test_qrels_file_gives_the_same_numbers(scifact_dir, evaluate_json):
    by_file = evaluate_json("--qrels", str(scifact_dir / "qrels" / "test.tsv"))
    by_name = evaluate_json("--dataset", "scifact", "--data-dir", str(scifact_dir))
    for key in ("ndcg", "map", "recall", "precision", "mrr", "strict"):
        assert by_file[key] == by_name[key]


def test_table_output_and_custom_k(scifact_dir, scifact_run_file, capsys):
    code = main(
        [
            "evaluate",
            "--run",
            str(scifact_run_file),
            "--qrels",
            str(scifact_dir / "qrels" / "test.tsv"),
            "--k",
            "10,100",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "| NDCG@10 | 0.57013 | 0.57013 |" in out
    assert "| Recall@100 | 0.85233 | 0.85233 |" in out
    assert "NDCG@1 " not in out


def test_missing_queries_make_beir_and_strict_differ(tmp_path, scifact_dir, capsys):
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 31715818 1 1.0 t\n3 Q0 0 1 1.0 t\n", encoding="utf-8")
    main(
        [
            "evaluate",
            "--run",
            str(run),
            "--qrels",
            str(scifact_dir / "qrels" / "test.tsv"),
            "--k",
            "10",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert out["ndcg"]["NDCG@10"] == 0.5  # BEIR: mean over the 2 evaluated queries
    assert out["strict"]["ndcg"]["NDCG@10"] == round(1 / 300, 5)  # trec_eval -c: over 300


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("1 Q0 d 1 1.0\n", "run.trec:1: expected 6 columns"),
        ("1 Q0 d 1 nan t\n", "run.trec:1: score 'nan' is not finite"),
        ("", "empty file"),
    ],
)
def test_bad_run_is_a_clean_error(tmp_path, scifact_dir, capsys, content, message):
    run = tmp_path / "run.trec"
    run.write_text(content, encoding="utf-8")
    code = main(["evaluate", "--run", str(run), "--qrels", str(scifact_dir / "qrels/test.tsv")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_usage_errors(tmp_path, scifact_dir, capsys):
    qrels = str(scifact_dir / "qrels" / "test.tsv")
    assert main(["evaluate", "--run", qrels, "--qrels", qrels, "--k", "0,5"]) == 2
    assert "--k" in capsys.readouterr().err
    assert main(["evaluate", "--run", "x", "--dataset", "nope"]) == 2
    assert "unknown dataset 'nope'" in capsys.readouterr().err
    assert (
        main(["evaluate", "--run", "x", "--dataset", "scifact", "--data-dir", str(tmp_path)]) == 2
    )
    assert "heta-eval datasets download scifact" in capsys.readouterr().err
    assert main(["evaluate", "--run", "x", "--dataset", "cqadupstack"]) == 2
    assert "cqadupstack/android" in capsys.readouterr().err


def test_help_has_an_example(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    assert "heta-eval evaluate --run run.trec --dataset scifact" in capsys.readouterr().out


def test_small_run_files_skip_the_compiled_engine(tmp_path, monkeypatch):
    # Below COMPILED_MIN_BYTES the CLI scores with pytrec_eval, even for more than
    # ENGINE_MIN_ROWS results (SciFact's reranked run): numba and pandas are never imported.
    import subprocess
    import sys

    from heta_eval.providers.backends import COMPILED_MIN_BYTES, ENGINE_MIN_ROWS

    run = tmp_path / "run.trec"
    lines = ["q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5 t\n"]
    lines += [f"q{i % 50 + 2} Q0 e{i} 1 0.25 t\n" for i in range(ENGINE_MIN_ROWS)]
    run.write_text("".join(sorted(lines)), encoding="utf-8")
    assert run.stat().st_size < COMPILED_MIN_BYTES
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
    code = (
        "import sys\nfrom heta_eval.cli import main\n"
        f"main(['evaluate', '--run', {str(run)!r}, '--qrels', {str(qrels)!r}])\n"
        "print(sorted(m for m in ('numba', 'pandas', 'pydantic', 'httpx') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "| NDCG@10 | 1.00000 | 1.00000 |" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.system  # 10-20 s of waiting or process starts: make test-system
def test_large_run_file_starts_numba_without_scipy_blas_and_keeps_collecting(tmp_path):
    # From COMPILED_MIN_BYTES the one-shot command starts numba with scipy.linalg hidden
    # (numba's BLAS probe; no kernel uses BLAS) and pauses the garbage collector; in-process
    # callers get collection back. The numbers equal the library's on the same file.
    from heta_eval.providers.backends import COMPILED_MIN_BYTES

    run = tmp_path / "run.trec"
    rows = [
        f"q{q} Q0 d{(q * 7919 + r) % 5000} {r + 1} {1000 - r + (q % 3) * 0.125} tag\n"
        for q in range(300)
        for r in range(1000)
    ]
    run.write_text("".join(rows), encoding="utf-8")
    assert run.stat().st_size >= COMPILED_MIN_BYTES
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 d{q * 13 % 5000} {q % 3}\n" for q in range(300)))
    code = (
        "import gc, io, json, sys, contextlib\nfrom heta_eval.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    main(['evaluate', '--run', {str(run)!r}, '--qrels', {str(qrels)!r}, '--json'])\n"
        "from heta_eval.evaluation import evaluate_run_file\nfrom heta_eval.io.trec import read_qrels\n"
        f"lib = evaluate_run_file(read_qrels({str(qrels)!r}), {str(run)!r}, engine='pytrec')\n"
        "print(json.dumps([json.loads(out.getvalue())['ndcg'], lib.beir_dict()['ndcg'],"
        " 'scipy.linalg' in sys.modules, 'numba' in sys.modules, gc.isenabled()]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    cli, library, scipy_linalg, numba, collecting = json.loads(done.stdout.strip().splitlines()[-1])
    assert cli == library
    assert numba and not scipy_linalg and collecting


def _fresh_process(code: str, **env: str) -> str:
    # Without the variables OpenBLAS reads for its thread count, as a user's shell has them.
    blas = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"}
    clean = {k: v for k, v in os.environ.items() if k not in blas}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**clean, **env},
        timeout=600,
    )
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("command", ["evaluate", "trec_eval"])
def test_one_shot_commands_ask_openblas_for_no_worker_threads(command, tmp_path):
    # OpenBLAS's idle workers spin after numpy's import, taking CPU from a command that never
    # calls BLAS: evaluate and trec_eval ask for none before numpy loads, unless told a count.
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n", encoding="utf-8")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    argv = (
        ["evaluate", "--run", str(run), "--qrels", str(qrels), "--json"]
        if command == "evaluate"
        else ["trec_eval", str(qrels), str(run)]
    )
    code = (
        "import os\nfrom heta_eval.cli import main\n"
        f"assert main({argv!r}) == 0\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    )
    assert _fresh_process(code) == "1"
    assert _fresh_process(code, OPENBLAS_NUM_THREADS="3") == "3"  # the user's count is kept
    # A process that loaded numpy before (a library user's script) is left as it is.
    assert _fresh_process("import numpy\n" + code) == "None"


@pytest.mark.skipif(
    not os.path.isdir("/proc/self/task") or len(os.sched_getaffinity(0)) < 2,
    reason="counts threads in /proc on a machine with two or more CPUs",
)
def test_openblas_starts_no_worker_threads_when_asked_for_one():
    # What the knob relies on: numpy's OpenBLAS reads the variable when numpy is imported.
    code = "import os, numpy\nprint(len(os.listdir('/proc/self/task')))"
    assert int(_fresh_process(code, OPENBLAS_NUM_THREADS="1")) == 1
    assert int(_fresh_process(code)) > 1
