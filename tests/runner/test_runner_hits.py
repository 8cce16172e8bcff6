"""``hits.jsonl``, read back: a last line cut short by a killed run is ignored, any other bad
line is an error naming the file and line, and hits reach only records that answered."""

from __future__ import annotations

import json

import pytest

from heta_eval.runner.hits import hits_line, read_hits
from heta_eval.runner.results import Journal, QueryRecord, ResultsFormatError


def _record(case: str, hits=None, error=None) -> QueryRecord:
    return QueryRecord(
        case_id=case,
        mode="m",
        query=f"q {case}",
        documents=[(f"d{case}", 1.0)],
        hits=hits or [],
        error=error,
    )


def test_a_cut_last_line_is_ignored_and_the_last_line_of_a_key_wins(tmp_path):
    path = tmp_path / "hits.jsonl"
    first, second = [[["a#0", 1, 0.5]]], [[["a#1", 1, 0.7]]]
    cut = hits_line("2", "m", [[["b#0", 1, 0.1]]])[:20]
    path.write_text(hits_line("1", "m", first) + hits_line("1", "m", second) + cut)
    assert read_hits(path) == {("1", "m"): second}


def test_a_bad_line_names_the_file_and_line(tmp_path):
    path = tmp_path / "hits.jsonl"
    path.write_text(hits_line("1", "m", []) + '{"case_id": "2"}\n' + hits_line("3", "m", []))
    with pytest.raises(ValueError, match=r"hits.jsonl:2: not a hits record"):
        read_hits(path)


def test_the_journal_keeps_hits_beside_the_records_and_reads_them_back(tmp_path):
    journal = Journal(tmp_path / "per_query.jsonl")
    hits = [[["d1#0", 1, 1.0], ["d1#3", 4, 0.5]]]
    ok = _record("1", hits)
    journal.append(ok)
    journal.append(ok)  # journaled again with its scores: the hits are not written twice
    journal.append(_record("2", error="boom"))
    journal.close()
    assert len((tmp_path / "hits.jsonl").read_text().splitlines()) == 1
    assert "hits" not in json.loads((tmp_path / "per_query.jsonl").read_text().splitlines()[0])
    read = journal.read()
    assert read[("1", "m")].hits == hits and read[("2", "m")].hits == []
    journal.rewrite(read.values())
    assert journal.read()[("1", "m")].hits == hits


def test_a_results_folder_with_a_bad_hits_line_is_refused_with_its_place(tmp_path):
    journal = Journal(tmp_path / "per_query.jsonl")
    journal.append(_record("1", [[["d1#0", 1, 1.0]]]))
    journal.close()
    with (tmp_path / "hits.jsonl").open("a") as out:
        out.write("not json\n" + hits_line("1", "m", []))
    with pytest.raises(ResultsFormatError, match=r"hits.jsonl:2: not a hits record"):
        journal.read()
