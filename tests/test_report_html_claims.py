"""SciFact claims: the report of whole-document and chunked runs, given together, shows
evidence recall by mode and chunk size (the numbers of each summary.json) and the matched
evidence in the drill-down's evaluator details."""

from __future__ import annotations

import json
import re

import pytest
from conftest import shared_path
from kb_fixtures import FirstClaims

from heta_eval.report import write_report
from heta_eval.report.headline import number


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    from heta_eval.kb import Recipe
    from heta_eval.runner import BenchmarkRunner

    release = shared_path("datasets", "scifact-release")
    root = tmp_path_factory.mktemp("claims")
    benchmark = FirstClaims(20, data_dir=release, download=False)
    made = []
    for name, recipe in (("whole", Recipe()), ("chunks-64", Recipe(chunking={"size": 64}))):
        BenchmarkRunner(top_k=100, progress=False).run(
            benchmark=benchmark, recipe=recipe, query_modes=("keyword_search",),
            output_dir=root / name, cache_dir=root / "cache",
        )  # fmt: skip
        made.append(root / name)
    return made, benchmark


def test_evidence_recall_by_mode_and_chunk_size(folders, tmp_path):
    made, benchmark = folders
    path = write_report(made, tmp_path / "claims.html", benchmark=benchmark)
    html = path.read_text(encoding="utf-8")
    section = html[html.index('<section id="evidence">') :]
    section = section[: section.index("</section>")]
    for folder, chunking in zip(made, ("whole documents", "64 tokens"), strict=True):
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        value = summary["modes"]["keyword_search"]["metrics"]["evidence_recall@5"]["value"]
        row = re.search(rf"<tr><td>{folder.name}:keyword_search</td>(.*?)</tr>", section)
        assert row is not None, section[:2000]
        assert f"<td>{chunking}</td>" in row.group(1)
        assert f"evidence_recall@5 {number(value)}" in row.group(1)
    # The drill-down data holds each claim's evidence details as the evaluator recorded them.
    data = html[html.index('id="report-data">') + len('id="report-data">') :]
    payload = json.loads(data[: data.index("</script>")])
    details = [d["scores"]["evidence_recall@5"] for d in payload["detail"]["whole:keyword_search"]]
    assert any("metadata" in score for score in details)
