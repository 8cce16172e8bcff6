"""Ids written by someone else, shown safely and legibly in a real headless Chromium: a
200,000-character id is cut (whole on hover) and leaves the page a sane height; a
right-to-left override cannot reorder its cell and shows; ids that differ only by a newline
and a space look different.

The results folder is the real runner's, its ids then replaced on disk by hostile ones: a
folder from elsewhere (another tool, an older heta-eval) that holds what the runner itself
would refuse to write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.report_browser import chromium, console_errors, open_report

from heta_eval.evaluation import BenchmarkCase, Document, beir_default_metrics
from heta_eval.report import write_report

LONG = "q" + "x" * 200_000
LONG_DOC = "d" + "y" * 200_000
RLO = "abc\u202edef"
NEWLINE, SPACE = "a\nb", "a b"
# Placeholder -> hostile id, for cases (Q...) and documents (D...).
IDS = {
    "QLONG": LONG,
    "QRLO": RLO,
    "QNEWLINE": NEWLINE,
    "QSPACE": SPACE,
    "DLONG": LONG_DOC,
    "DRLO": "doc\u202ereversed\u2066x",
}


class Plain:
    name = "hostile-ids"

    def documents(self):
        return [
            Document(id="DLONG", text="cats purr loudly"),
            Document(id="DRLO", text="dogs bark at night"),
            Document(id="DFISH", text="fish swim in water"),
        ]

    def cases(self):
        return [
            BenchmarkCase(id="QLONG", query="cats purr", expected={"relevance": {"DLONG": 1}}),
            BenchmarkCase(id="QRLO", query="dogs bark", expected={"relevance": {"DRLO": 1}}),
            BenchmarkCase(id="QNEWLINE", query="fish swim", expected={"relevance": {"DFISH": 1}}),
            BenchmarkCase(id="QSPACE", query="fish water", expected={"relevance": {"DFISH": 1}}),
        ]

    def evaluators(self):
        return beir_default_metrics(k_values=(1, 10))


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    from heta_eval.reference import Recipe
    from heta_eval.runner import BenchmarkRunner

    root = tmp_path_factory.mktemp("ids")
    folder = root / "results"
    BenchmarkRunner(top_k=10, progress=False).run(
        benchmark=Plain(),
        recipe=Recipe(modes=["keyword_search"]),
        query_modes=("keyword_search",),
        output_dir=folder,
        cache_dir=root / "cache",
    )
    journal = folder / "per_query.jsonl"
    text = journal.read_text(encoding="utf-8")
    for placeholder, hostile in IDS.items():
        assert f'"{placeholder}"' in text
        text = text.replace(f'"{placeholder}"', json.dumps(hostile))
    journal.write_text(text, encoding="utf-8")
    return write_report([folder])


def _id_cells(browser) -> dict[str, object]:
    """The query table's id elements by their title (the whole id)."""
    from selenium.webdriver.common.by import By

    return {
        cell.get_attribute("title"): cell
        for cell in browser.find_elements(By.CSS_SELECTOR, "#query-body td.id bdi")
    }


def test_a_200000_character_id_is_cut_whole_on_hover_and_the_page_stays_short(report):
    assert report.stat().st_size < 2_000_000
    with chromium() as browser:
        open_report(browser, report)
        cells = _id_cells(browser)
        assert LONG in cells  # the title holds the whole id
        shown = cells[LONG].text
        assert shown.startswith("qxxx") and shown.endswith("… (199701 more characters)")
        height = browser.execute_script("return document.documentElement.scrollHeight")
        assert height < 20_000, height
        cells[LONG].click()  # the drill-down shows the id and the 200,000-character document id
        drill = browser.execute_script("return document.getElementById('drill').innerText")
        assert "qxxx" in drill and "dyyy" in drill and "(199701 more characters)" in drill
        doc = browser.execute_script(
            "return Array.from(document.querySelectorAll('#drill bdi.ident'))"
            ".map(function (e) { return e.title; })"
        )
        assert LONG in doc and LONG_DOC in doc
        height = browser.execute_script("return document.documentElement.scrollHeight")
        assert height < 20_000, height
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= browser.execute_script("return window.innerWidth")
        assert not console_errors(browser)


def _place(browser, element, index: int) -> list[float]:
    # Where the character at ``index`` of the element's text is drawn: [line top, left].
    return browser.execute_script(
        "var r = document.createRange(), t = arguments[0].firstChild;"
        "r.setStart(t, arguments[1]); r.setEnd(t, arguments[1] + 1);"
        "var b = r.getBoundingClientRect(); return [Math.round(b.top), b.left];",
        element,
        index,
    )


def test_a_right_to_left_override_shows_and_reorders_nothing(report):
    with chromium() as browser:
        open_report(browser, report)
        visible = "abc⟨U+202E⟩def"
        cell = next(c for c in _id_cells(browser).values() if c.text == visible)
        assert cell.get_attribute("title") == visible  # hover shows the same, whole
        places = [_place(browser, cell, visible.index(char)) for char in "abcdef"]
        assert places == sorted(places), places  # logical order: line by line, left to right
        cell.click()
        drill = browser.execute_script("return document.getElementById('drill').innerText")
        assert "doc⟨U+202E⟩reversed⟨U+2066⟩x" in drill


def test_a_newline_and_a_space_in_ids_look_different(report):
    from selenium.webdriver.common.by import By

    shown_ids = (
        "return Array.from(document.querySelectorAll('#query-body td.id bdi'))"
        ".map(function (e) { return e.innerText; })"
    )
    with chromium() as browser:
        open_report(browser, report)
        texts = browser.execute_script(shown_ids)
        assert "a⟨U+000A⟩b" in texts and "a b" in texts
        # Filtering by what the cell shows finds the query (the page redraws after a pause).
        browser.find_element(By.ID, "filter").send_keys("⟨U+000A⟩")
        for _ in range(100):
            texts = browser.execute_script(shown_ids)
            if texts == ["a⟨U+000A⟩b"]:
                break
            browser.execute_script("return new Promise(function (r) { setTimeout(r, 100); })")
        assert texts == ["a⟨U+000A⟩b"]
