"""Dataset validation: real SciFact is clean; every defect is reported with file and line."""

from __future__ import annotations

from pathlib import Path

from heta_eval.data.validate import validate_dataset


def make(root: Path, corpus: str, queries: str, qrels: str) -> Path:
    (root / "qrels").mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    (root / "queries.jsonl").write_text(queries, encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    return root


def test_real_scifact_is_valid(scifact_dir):
    report = validate_dataset(scifact_dir, "test")
    assert report.ok and report.issues == []
    assert report.stats == {
        "corpus_documents": 5183,
        "queries_in_file": 1109,
        "judged_queries": 300,
        "judgments": 339,
        "zero_only_queries": 0,
    }
    assert "OK: 0 errors, 0 warnings" in report.format()


def test_every_defect_is_reported_with_its_line(tmp_path):
    folder = make(
        tmp_path,
        corpus=(
            '{"_id": "d1", "text": "a"}\n'
            "\n"
            '{"_id": "d2", "text": \n'
            '{"_id": "d1", "text": "again"}\n'
            '{"text": "no id"}\n'
            '{"_id": "d3"}\n'
        ),
        queries=(
            '{"_id": "q1", "text": "x"}\n{"_id": "q1", "text": "y"}\n{"_id": "q2", "text": "z"}\n'
        ),
        qrels=(
            "query-id\tcorpus-id\tscore\n"
            "q1\td1\t1\n"
            "q1\td9\t1\n"
            "q2\td1\t1.0\n"
            "q3\td1\t1\n"
            "q1\td1\t2\n"
            "q2\n"
        ),
    )
    report = validate_dataset(folder, "test")
    assert not report.ok
    found = {(i.severity, i.kind, Path(i.file).name, i.line) for i in report.issues}
    expected = {
        ("error", "empty_corpus_line", "corpus.jsonl", 2),
        ("error", "malformed_corpus_line", "corpus.jsonl", 3),
        ("warning", "duplicate_corpus_id", "corpus.jsonl", 4),
        ("error", "malformed_corpus_line", "corpus.jsonl", 5),
        ("warning", "empty_corpus_text", "corpus.jsonl", 6),
        ("warning", "duplicate_query_id", "queries.jsonl", 2),
        ("warning", "qrels_doc_missing", "test.tsv", 3),
        ("error", "non_integer_label", "test.tsv", 4),
        ("error", "judged_query_missing", "test.tsv", 5),
        ("warning", "duplicate_qrels_pair", "test.tsv", 6),
        ("error", "malformed_qrels_line", "test.tsv", 7),
    }
    assert found == expected, found ^ expected
    text = report.format()
    assert "test.tsv:3: query 'q1' judges document 'd9'" in text
    assert "INVALID" in text


def test_known_defect_is_a_warning_not_a_crash(tmp_path):
    # ArguAna's qrels name a document that is not in its corpus (BEIR #101).
    missing = "test-free-speech-debate-yfsdfkhbwu-con03b"
    folder = make(
        tmp_path,
        '{"_id": "a", "text": "t"}\n',
        '{"_id": "q", "text": "x"}\n',
        f"query-id\tcorpus-id\tscore\nq\ta\t1\nq\t{missing}\t1\n",
    )
    report = validate_dataset(folder, known_defects={"qrels_docs_missing_from_corpus": [missing]})
    assert report.ok
    [issue] = report.warnings
    assert issue.known_defect and issue.line == 3
    assert "known upstream defect" in str(issue)


def test_first_qrels_line_that_is_data_is_flagged(tmp_path):
    folder = make(
        tmp_path, '{"_id": "a", "text": "t"}\n', '{"_id": "q", "text": "x"}\n', "q\ta\t1\nq\ta\t1\n"
    )
    report = validate_dataset(folder)
    assert [i.kind for i in report.warnings] == ["qrels_header"]


def test_missing_files_and_many_issues_are_summarised(tmp_path):
    report = validate_dataset(tmp_path)
    assert {i.kind for i in report.errors} == {"missing_file"}
    folder = make(tmp_path / "many", "\n" * 50, '{"_id": "q", "text": "x"}\n', "h\th\th\nq\ta\t1\n")
    report = validate_dataset(folder)
    assert len([i for i in report.issues if i.kind == "empty_corpus_line"]) == 20
    assert "and 30 more empty corpus line" in report.format()
