"""Figures are generated, never typed: the tables of the README and the docs between
``<!-- figures:NAME -->`` markers are what ``bench/figures.py`` renders from the records of
each kind of CPU (``bench/records/<kind>.json``, written by ``make figures``). A table edited
by hand, or a record changed without rendering, fails here; rows measured by older code (an
older encoding version or int8 scheme) say so."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import figures  # noqa: E402

from heta_eval.encoding import dense  # noqa: E402
from heta_eval.encoding.cpu import KINDS  # noqa: E402


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return figures.load_records()


@pytest.fixture(scope="module")
def code() -> dict:
    return figures.current_code()


def test_every_generated_table_is_what_the_records_give(records, code) -> None:
    assert records, "no records under bench/records"
    stale = figures.stale(records, code)
    assert stale == [], f"{stale}: run python bench/figures.py --render (make figures measures)"


def test_a_figure_typed_into_a_table_is_found(records, code) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("<!-- figures:scifact -->")
    row = text.index("| `", start)
    cell = text.index("| 0.", row)
    tampered = text[: cell + 2] + "9" + text[cell + 3 :]  # one digit of one nDCG changed
    assert tampered != text
    assert figures.render(tampered, records, code) == text


def test_records_name_their_cpu_date_and_code(records) -> None:
    for record in records:
        assert record["kind"] in KINDS
        assert record["cpu"] and record["date"] and record["source"]
        assert {"version", "commit", "encoding", "schemes"} <= set(record["code"])
        assert record["bench"] or record["scifact"]
        path = ROOT / "bench" / "records" / f"{record['kind']}.json"
        assert json.loads(path.read_text(encoding="utf-8")) == record


def test_rows_of_older_code_say_so_and_current_ones_do_not(records, code) -> None:
    record = copy.deepcopy(records[0])
    record["code"] = {**record["code"], "encoding": dense.ENCODING_VERSION - 1}
    assert "**older code**" in figures.stamp(record, code)
    assert "**older code**" in figures.table_scifact([record], code)
    # The same record measured by the current code reads as current.
    record["code"] = {**record["code"], "encoding": code["encoding"], "schemes": code["schemes"]}
    record.pop("bench_code", None)
    assert figures.is_current(record, code)
    assert "older code" not in figures.table_scifact([record], code)
    # Figures that do not depend on the encoding carry the stamp without the mark.
    assert "older code" not in figures.stamp(
        {**record, "code": {**record["code"], "encoding": 1}}, code, encoding=False
    )
