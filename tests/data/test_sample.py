"""Quick subsets of a BEIR dataset (``heta-eval run --sample N``): drawn from the real SciFact,
seeded and nested, every judged document of a sampled query kept, distractors as asked; a
results folder of a sample is named and recorded as one, and never compared with the full
dataset's as an equal, nor checked against its published numbers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.scifact_data import small_scifact

from heta_eval.cli import main
from heta_eval.data import load_beir
from heta_eval.data.sample import SAMPLE_FILE, SampleSpec, key, sample_dataset

REPO = Path(__file__).resolve().parents[2]


def _sample(source: Path, root: Path, spec: SampleSpec) -> Path:
    return sample_dataset(source, "test", spec, name="scifact", cache_root=root)


def _ids(path: Path) -> list[str]:
    return [json.loads(line)["_id"] for line in path.read_text().splitlines() if line.strip()]


def test_a_sample_keeps_every_judged_document_and_the_corpus_ratio(scifact_dir, tmp_path):
    folder = _sample(scifact_dir, tmp_path, SampleSpec(100, seed=0))
    assert folder.name == "scifact-sample-100-seed-0"
    full, part = load_beir(scifact_dir), load_beir(folder)
    # The 100 queries with the smallest keys, their judgments and texts as in the source.
    expected = sorted(full.qrels, key=lambda qid: key(0, qid))[:100]
    assert sorted(part.qrels) == sorted(expected)
    assert part.qrels == {qid: full.qrels[qid] for qid in full.qrels if qid in set(expected)}
    assert list(part.qrels) == [qid for qid in full.qrels if qid in set(expected)]  # file order
    assert part.queries == {qid: full.queries[qid] for qid in part.qrels}
    ids = _ids(folder / "corpus.jsonl")
    judged = {doc for docs in part.qrels.values() for doc in docs}
    assert judged <= set(ids) and len(ids) == len(set(ids))
    assert len(ids) == round(5183 * 100 / 300)  # the full corpus's documents per query
    # Lines copied byte for byte, in the source's order.
    source = (scifact_dir / "corpus.jsonl").read_text().splitlines()
    kept = set(ids)
    assert (folder / "corpus.jsonl").read_text().splitlines() == [
        line for line in source if json.loads(line)["_id"] in kept
    ]
    # The distractors: the unjudged documents with the smallest keys.
    others = sorted(
        (d for d in _ids(scifact_dir / "corpus.jsonl") if d not in judged), key=lambda d: key(0, d)
    )
    assert kept - judged == set(others[: len(ids) - len(judged)])
    record = json.loads((folder / SAMPLE_FILE).read_text())
    assert record["queries"] == 100 and record["of_queries"] == 300 and record["seed"] == 0
    assert record["documents"] == len(ids) and record["of_documents"] == 5183
    assert record["judged_documents"] == len(judged)
    assert record["distractors"] == len(ids) - len(judged)


def test_samples_are_seeded_nested_deterministic_and_cached(scifact_dir, tmp_path):
    small = load_beir(_sample(scifact_dir, tmp_path / "a", SampleSpec(50, seed=3)))
    large_folder = _sample(scifact_dir, tmp_path / "a", SampleSpec(100, seed=3))
    large = load_beir(large_folder)
    assert set(small.qrels) < set(large.qrels)  # one seed's samples nest
    other = load_beir(_sample(scifact_dir, tmp_path / "a", SampleSpec(100, seed=4)))
    assert set(other.qrels) != set(large.qrels)
    again = _sample(scifact_dir, tmp_path / "b", SampleSpec(100, seed=3))  # another cache
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        assert (again / name).read_bytes() == (large_folder / name).read_bytes()
    stamp = (large_folder / "corpus.jsonl").stat().st_mtime_ns
    assert _sample(scifact_dir, tmp_path / "a", SampleSpec(100, seed=3)) == large_folder
    assert (large_folder / "corpus.jsonl").stat().st_mtime_ns == stamp  # found, not rewritten


def test_a_sample_of_a_given_size_and_the_limits(scifact_dir, tmp_path):
    folder = _sample(scifact_dir, tmp_path, SampleSpec(10, seed=0, documents=500))
    assert len(_ids(folder / "corpus.jsonl")) == 500
    assert folder.name == "scifact-sample-10-seed-0-docs-500"
    with pytest.raises(ValueError, match=r"the 10 sampled queries judge .* documents"):
        _sample(scifact_dir, tmp_path, SampleSpec(10, seed=0, documents=3))
    with pytest.raises(ValueError, match="has 300 judged test queries"):
        _sample(scifact_dir, tmp_path, SampleSpec(301))
    with pytest.raises(ValueError, match="at least 1 query"):
        SampleSpec(0)


@pytest.fixture(scope="module")
def folders(tmp_path_factory, scifact_dir) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sampled")
    data = small_scifact(scifact_dir, root / "data")
    made = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HETA_EVAL_CACHE_DIR", str(root / "cache"))
        patch.chdir(root)  # the default results folder: results/<name>
        source = [
            "--dataset",
            "scifact",
            "--data-dir",
            str(data),
            "--modes",
            "keyword_search",
            "--quiet",
        ]
        assert main(["run", *source, "--output", str(root / "full")]) == 0
        assert main(["run", *source, "--sample", "60", "--sample-seed", "1"]) == 0
        assert (
            main(
                [
                    "run",
                    *source,
                    "--sample",
                    "60",
                    "--sample-seed",
                    "1",
                    "--output",
                    str(root / "again"),
                ]
            )
            == 0
        )
        assert (
            main(
                [
                    "run",
                    *source,
                    "--sample",
                    "60",
                    "--sample-seed",
                    "2",
                    "--output",
                    str(root / "seed2"),
                ]
            )
            == 0
        )
    made["full"], made["again"], made["seed2"] = root / "full", root / "again", root / "seed2"
    made["sample"] = root / "results" / "scifact-sample-60-seed-1"
    made["root"] = root
    return made


def test_a_sampled_run_records_what_it_is(folders):
    summary = json.loads((folders["sample"] / "summary.json").read_text())
    assert summary["benchmark"] == "scifact-sample-60-seed-1"
    sample = summary["data"]["sample"]
    assert summary["data"]["registered"] is False
    assert (sample["of"], sample["queries"], sample["of_queries"], sample["seed"]) == (
        "scifact",
        60,
        300,
        1,
    )
    assert sample["of_documents"] == 483 and sample["documents"] == round(483 * 60 / 300)
    assert sample["source_registered"] is True and sample["source_differences"]
    assert summary["modes"]["keyword_search"]["cases"] == 60
    table = (folders["sample"] / "table.md").read_text()
    assert "a sample of scifact: 60 of 300 queries, 97 of 483 documents, seed 1" in table
    assert "No reference check: a sample of scifact" in table


def _cli(*argv: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "heta_eval", *argv],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )


def test_a_sample_is_never_compared_with_the_full_run_as_an_equal(folders):
    done = _cli("compare", str(folders["full"]), str(folders["sample"]))
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line == (
        f"heta-eval compare: error: {folders['full']} and {folders['sample']} differ in dataset "
        "(scifact vs scifact-sample-60-seed-1), corpus (483 vs 97 documents) and cases (300 vs "
        "60 cases): their scores are not comparable (--allow-different-data compares them "
        "anyway)"
    )
    gate = _cli(
        "compare", str(folders["full"]), str(folders["sample"]), "--fail-if-worse", "ndcg@10>0.01"
    )
    assert gate.returncode == 2 and "not comparable" in gate.stderr
    # Another seed is another sample: refused too; the same sample compares.
    assert _cli("compare", str(folders["sample"]), str(folders["seed2"])).returncode == 2
    same = _cli("compare", str(folders["sample"]), str(folders["again"]), "--resamples", "200")
    assert same.returncode == 0 and same.stderr == ""


def test_check_and_leaderboard_say_a_sample_is_not_the_dataset(folders, capsys):
    assert main(["check", str(folders["sample"]), "--system", "bm25-flat"]) == 0
    err = capsys.readouterr().err
    assert "no reference check: scored on " in err and "a sample of scifact (60 of 300" in err
    assert main(["leaderboard", str(folders["sample"])]) == 0
    assert "scifact-sample-60-seed-1" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--sample", "0"], "--sample must be an integer from 1"),
        (["--sample-seed", "3"], "--sample-seed and --sample-documents go with --sample N"),
        (["--sample", "400"], "--sample 400: scifact has 300 judged test queries"),
        (["--sample", "10", "--sample-documents", "2"], "--sample-documents 2: the 10 sampled"),
    ],
)
def test_sample_usage_errors_are_one_line(folders, argv, words):
    data = folders["root"] / "data"
    done = _cli(
        "run",
        "--dataset",
        "scifact",
        "--data-dir",
        str(data),
        "--modes",
        "keyword_search",
        "--quiet",
        "--output",
        str(folders["root"] / "x"),
        *argv,
    )
    assert done.returncode == 2, done.stderr
    assert words in done.stderr.strip().splitlines()[-1]
    assert "Traceback" not in done.stderr


def test_sample_goes_with_a_dataset_not_a_benchmark_file(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "q1", "query": "x", "expected": {"relevance": {"d": 1}}}\n')
    done = _cli("run", "--benchmark", str(cases), "--documents", str(tmp_path), "--sample", "1")
    assert done.returncode == 2
    assert "--sample takes a BEIR dataset (--dataset NAME|PATH), not --benchmark" in done.stderr
