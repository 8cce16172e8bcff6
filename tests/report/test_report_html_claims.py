"""SciFact claims: the report of runs at two chunk sizes, given together, shows
evidence recall by mode and chunk size (the numbers of each summary.json) and the matched
evidence in the drill-down's evaluator details."""

from __future__ import annotations

import json
import re

import pytest
from support.kb_fixtures import FirstClaims
from support.paths import shared_path

from heta_eval.report import write_report
from heta_eval.report.headline import number


class FewClaims(FirstClaims):
    """The first claims over their cited abstracts and 100 others (seconds, not minutes)."""

    def documents(self):
        cited = {doc for case in self.cases() for doc in case.expected.relevance}
        others = 100
        for document in super().documents():
            if document.id in cited or others > 0:
                others -= document.id not in cited
                yield document


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    from heta_eval.reference import Recipe
    from heta_eval.runner import BenchmarkRunner

    release = shared_path("datasets", "scifact-release")
    root = tmp_path_factory.mktemp("claims")
    benchmark = FewClaims(20, data_dir=release, download=False)
    made = []
    for name, recipe in (("default", Recipe()), ("chunks-64", Recipe(chunking={"size": 64}))):
        BenchmarkRunner(top_k=100, progress=False).run(
            benchmark=benchmark,
            recipe=recipe,
            query_modes=("keyword_search",),
            output_dir=root / name,
            cache_dir=root / "cache",
        )
        made.append(root / name)
    return made, benchmark


def test_evidence_recall_by_mode_and_chunk_size(folders, tmp_path):
    made, benchmark = folders
    path = write_report(made, tmp_path / "claims.html", benchmark=benchmark)
    html = path.read_text(encoding="utf-8")
    section = html[html.index('<section id="evidence">') :]
    section = section[: section.index("</section>")]
    sizes = []
    for folder in made:
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        size = summary["recipe"]["chunking"]["size"]  # the benchmark's own, or 64
        sizes.append(size)
        chunking = f"{size} {summary['recipe']['chunking']['unit']}" if size else "whole documents"
        value = summary["modes"]["keyword_search"]["metrics"]["evidence_recall@5"]["value"]
        row = re.search(rf"<tr><td>{folder.name}:keyword_search</td>(.*?)</tr>", section)
        assert row is not None, section[:2000]
        assert f"<td>{chunking}</td>" in row.group(1)
        assert f"evidence_recall@5 {number(value)}" in row.group(1)
    assert sizes[1] == 64 and sizes[0] != 64
    # The drill-down data holds each claim's evidence details as the evaluator recorded them.
    data = html[html.index('id="report-data">') + len('id="report-data">') :]
    payload = json.loads(data[: data.index("</script>")])
    details = [
        d["scores"]["evidence_recall@5"] for d in payload["detail"]["default:keyword_search"]
    ]
    assert any("metadata" in score for score in details)
