"""Reference numbers: the checked-in file agrees with beir-semantics.md §6; check() statuses."""

from __future__ import annotations

import doctest
import importlib
import json
import re
from pathlib import Path

import pytest
from support.paths import shared_path

from heta_eval.cli import main
from heta_eval.data.references import check, classify, dataset_key, load_references


def test_doctests():
    assert doctest.testmod(importlib.import_module("heta_eval.data.references")).failed == 0


def refs(system: str) -> dict[tuple[str, str], float]:
    return {(r.dataset, r.metric): r.value for r in load_references() if r.system == system}


def test_pyserini_table_matches_the_reference_document():
    text = shared_path("reference", "beir-semantics.md").read_text(encoding="utf-8")
    section = text[text.index("### 6.2") : text.index("### 6.3")]
    flat, multifield = refs("bm25-flat"), refs("bm25-multifield")
    rows = 0
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != 7 or not re.match(r"^\d", cells[1]):
            continue
        dataset = "cqadupstack" if cells[0].startswith("cqadupstack") else cells[0]
        for table, values in ((flat, cells[1:4]), (multifield, cells[4:7])):
            for metric, value in zip(("ndcg@10", "recall@100", "recall@1000"), values, strict=True):
                if value != "–":
                    assert table[(dataset, metric)] == float(value), (dataset, metric)
        rows += 1
    assert rows == 18
    assert flat[("cqadupstack/android", "ndcg@10")] == 0.3801


def test_other_references_and_sources():
    assert refs("all-MiniLM-L6-v2")[("scifact", "ndcg@10")] == 0.64508
    assert refs("all-MiniLM-L6-v2")[("webis-touche2020", "ndcg@10")] == 0.16904
    assert refs("bm25-beir-paper")[("scifact", "ndcg@10")] == 0.665
    assert refs("bm25-beir-paper")[("msmarco", "ndcg@10")] == 0.228
    assert len(refs("bm25-beir-paper")) == 19
    for ref in load_references():
        assert ref.source and ref.aggregate in ("beir", "strict")
    raw = json.loads((Path(__file__).parents[2] / "heta_eval/data/references.json").read_text())
    assert all(entry["source"] for entry in raw["systems"].values())


@pytest.mark.parametrize(
    "observed,expected,status",
    [
        (0.6789, 0.6789, "OK"),
        (0.67895, 0.6789, "OK"),
        (0.6790, 0.6789, "OK"),
        (0.6788, 0.6789, "OK"),
        (0.6787, 0.6789, "OKish"),
        (0.6690, 0.6789, "OKish"),
        (0.6688, 0.6789, "FAIL"),
        (0.9, 0.6789, "OKish"),
        (0.0, 0.6789, "FAIL"),
    ],
)
def test_classify(observed, expected, status):
    assert classify(observed, expected) == status


def test_check_picks_the_aggregate_of_the_reference():
    observed = {"beir/scifact": {"NDCG@10": {"beir": 0.6451, "strict": 0.6789}}}
    by_system = {r.system: r for r in check(observed)}
    assert by_system["bm25-flat"].status == "OK" and by_system["bm25-flat"].aggregate == "strict"
    assert by_system["all-MiniLM-L6-v2"].observed == 0.6451
    assert by_system["all-MiniLM-L6-v2"].status == "OK"
    assert "pyserini" in by_system["bm25-flat"].source
    assert check({"unknown": {"ndcg@10": 0.5}}) == []
    with pytest.raises(ValueError, match="unknown reference system"):
        check(observed, "bm25-elastic")


def test_dataset_aliases():
    assert dataset_key("Touche2020") == "webis-touche2020"
    assert dataset_key("beir-v1.0.0-cqadupstack-android.test") == "cqadupstack/android"
    assert dataset_key("cqadupstack/android") == "cqadupstack/android"


def test_cli_check(scifact_run_file, scifact_dir, capsys):
    data_dir = str(Path(scifact_dir).parent)
    args = ["check", str(scifact_run_file), "--dataset", "scifact", "--data-dir", data_dir]
    assert main(args) == 0  # without --system, FAIL rows do not fail the command
    out = capsys.readouterr().out
    assert "[FAIL] scifact ndcg@10 = 0.5701 (strict); bm25-flat reference 0.6789" in out
    assert "arXiv 2104.08663" in out
    assert main([*args, "--system", "bm25-flat", "--format", "json"]) == 1
    rows = json.loads(capsys.readouterr().out)
    assert {r["metric"] for r in rows} == {"ndcg@10", "recall@100", "recall@1000"}
    assert main([*args, "--system", "nope"]) == 2
