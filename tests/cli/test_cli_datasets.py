"""``heta-eval datasets list | download | validate``."""

from __future__ import annotations

import hashlib
import json

import pytest
from support.download_server import Server, beir_zip

from heta_eval.cli import main


def test_list_shows_every_dataset_with_md5(capsys):
    assert main(["datasets", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("msmarco", "scifact", "cqadupstack", "webis-touche2020"):
        assert name in out
    assert "5f7d1de60b170fc8027bb7898e2efca1" in out
    assert "cqadupstack/tex" not in out
    assert main(["datasets", "list", "--all"]) == 0
    assert "cqadupstack/tex" in capsys.readouterr().out


def test_validate_real_scifact(scifact_dir, capsys):
    assert main(["datasets", "validate", "scifact", "--data-dir", str(scifact_dir.parent)]) == 0
    out = capsys.readouterr().out
    assert "corpus documents: 5,183" in out and "OK: 0 errors, 0 warnings" in out


def test_validate_reports_errors_with_exit_1(tmp_path, capsys):
    folder = tmp_path / "scifact"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "d"}\n{bad\n', encoding="utf-8")
    (folder / "queries.jsonl").write_text('{"_id": "q", "text": "x"}\n', encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("h\th\th\nq\td\t1\n", encoding="utf-8")
    assert main(["datasets", "validate", "scifact", "--data-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "corpus.jsonl:2: invalid JSON" in out and "INVALID" in out


def test_validate_missing_dataset_is_a_clean_error(tmp_path, capsys):
    assert main(["datasets", "validate", "scifact", "--data-dir", str(tmp_path)]) == 2
    assert "heta-eval datasets download scifact" in capsys.readouterr().err


def test_download_from_a_mirror(tmp_path, capsys):
    server = Server()
    try:
        data = beir_zip()
        server.files["/mirror/scifact.zip"] = data
        argv = [
            "datasets",
            "download",
            "scifact",
            "--data-dir",
            str(tmp_path),
            "--url",
            server.url("/mirror/scifact.zip"),
            "--md5",
            hashlib.md5(data).hexdigest(),
        ]
        assert main(argv) == 0
        assert "ready at" in capsys.readouterr().out
        assert (tmp_path / "scifact" / "corpus.jsonl").exists()
        marker = json.loads((tmp_path / "scifact" / ".heta-eval-complete").read_text())
        assert marker["url"].endswith("/mirror/scifact.zip")
        # Wrong checksum: a clean error naming expected and actual values.
        server.files["/mirror/nfcorpus.zip"] = data
        argv = [
            "datasets",
            "download",
            "nfcorpus",
            "--data-dir",
            str(tmp_path),
            "--url",
            server.url("/mirror/nfcorpus.zip"),
            "--md5",
            "0" * 32,
            "--retries",
            "0",
        ]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "expected md5:" + "0" * 32 in err and "Traceback" not in err
    finally:
        server.close()


def test_unknown_dataset(capsys):
    assert main(["datasets", "download", "nope"]) == 2
    assert "unknown dataset 'nope'" in capsys.readouterr().err


def test_help_has_examples(capsys):
    with pytest.raises(SystemExit):
        main(["datasets", "--help"])
    assert "heta-eval datasets download scifact" in capsys.readouterr().out


def test_list_looks_where_each_adapter_reads(capsys):
    from support.paths import shared_path

    def on_disk(data_dir: str) -> dict[str, str]:
        assert main(["datasets", "list", "--data-dir", data_dir]) == 0
        lines = capsys.readouterr().out.splitlines()[1:]
        return {line.split()[0]: line.split()[-1] for line in lines}

    beir_root = on_disk(str(shared_path("datasets", "beir")))
    assert beir_root["scifact"] == "yes" and beir_root["scifact-claims"] == "no"
    assert beir_root["msmarco"] == "no"
    release = on_disk(str(shared_path("datasets", "scifact-release")))
    assert release["scifact-claims"] == "yes" and release["scifact"] == "no"


def test_list_without_data_dir_agrees_with_where_evaluate_looks(
    scifact_run_file, monkeypatch, tmp_path, capsys
):
    """No --data-dir, no HETA_EVAL_DATA: a checkout finds SciFact in ../shared beside it,
    and `list` says so, as `evaluate --dataset scifact` finds it there."""
    from heta_eval.data.locate import SHARED_DATA

    if not (SHARED_DATA / "beir" / "scifact" / "corpus.jsonl").is_file():
        pytest.skip(f"no SciFact in {SHARED_DATA / 'beir'}")
    monkeypatch.delenv("HETA_EVAL_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["datasets", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    assert {line.split()[0]: line.split()[-1] for line in lines}["scifact"] == "yes"
    assert main(["evaluate", "--run", str(scifact_run_file), "--dataset", "scifact"]) == 0
    assert "qrels: scifact (test)" in capsys.readouterr().out
