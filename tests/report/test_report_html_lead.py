"""The report's first answers, in a real headless Chromium: the headline (fixed decimals, best
in bold, significance against a chosen baseline, Δ, sorting, the further columns behind a
toggle, partial values marked), failed queries in sight, and the per-query links and export.
The results folder is the real runner's, of a synthetic run in three modes (tests/lead_fixtures)."""

from __future__ import annotations

import json

import pytest
from support.lead_fixtures import FAILING, QIDS, run_three_modes
from support.report_browser import (
    alert_open,
    chromium,
    console_errors,
    network_requests,
    open_report,
)

from heta_eval.compare import compare
from heta_eval.report import write_report


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("lead")
    benchmark, results = run_three_modes(root / "results")
    report = write_report([root / "results"], benchmark=benchmark, results=[results])
    summary = json.loads((root / "results" / "summary.json").read_text(encoding="utf-8"))
    lines = (root / "results" / "per_query.jsonl").read_text(encoding="utf-8").splitlines()
    return report, summary, [json.loads(line) for line in lines]


def _per_query(records, metrics):
    out: dict[str, dict[str, dict[str, float]]] = {}
    for r in records:
        if r["error"] is None:
            scores = {m: r["scores"][m]["value"] for m in metrics}
            out.setdefault(r["mode"], {})[r["case_id"]] = scores
    return out


def _cell(browser, system, metric, aggregate=None):
    from selenium.webdriver.common.by import By

    wanted = f'[data-aggregate="{aggregate}"]' if aggregate else ':not([data-aggregate="strict"])'
    return browser.find_element(
        By.CSS_SELECTOR,
        f'#headline-table tr[data-system="{system}"] td[data-metric="{metric}"]{wanted}',
    )


def _systems(browser):
    from selenium.webdriver.common.by import By

    rows = browser.find_elements(By.CSS_SELECTOR, "#headline-table tbody tr")
    return [tr.get_attribute("data-system") for tr in rows]


def test_headline_marks_best_partial_and_significance_against_the_chosen_baseline(run):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    report, summary, records = run
    metrics = {m: v["metrics"] for m, v in summary["modes"].items()}
    values = _per_query(records, ["ndcg@10", "recall@100"])
    with chromium() as browser:
        open_report(browser, report)
        # Fixed decimals; summary.json's own digits in the title.
        for mode in metrics:
            cell = _cell(browser, mode, "ndcg@10")
            beir = metrics[mode]["ndcg@10"]["beir"]
            assert cell.find_element(By.CSS_SELECTOR, ".v").text == f"{beir:.4f}"
            assert cell.get_attribute("title").startswith(f"{beir!r} in summary.json")
        # mode_c failed two queries: its BEIR value (answered queries only) carries †, its
        # strict value (failed ones as 0) does not, and the note says which is which.
        assert _cell(browser, "mode_c", "ndcg@10").find_elements(By.CSS_SELECTOR, "sup.partial")
        assert not _cell(browser, "mode_a", "ndcg@10").find_elements(By.CSS_SELECTOR, "sup.partial")
        note = browser.find_element(By.CSS_SELECTOR, ".partial-note").text
        assert note.startswith("mode_c: † a mean over the queries scored only (ndcg@10 22 of 24;")
        assert "(ndcg@10 22 of 24;" in note
        assert (
            "; 2 failed queries left out of it; strict (trec_eval -c) counts each of them" in note
        )
        # Best in bold among the complete values: mode_a, not mode_c's higher partial mean.
        assert metrics["mode_c"]["ndcg@10"]["beir"] > metrics["mode_a"]["ndcg@10"]["beir"]
        assert "best" in _cell(browser, "mode_a", "ndcg@10").get_attribute("class")
        assert "best" not in _cell(browser, "mode_c", "ndcg@10").get_attribute("class")
        weight = _cell(browser, "mode_a", "ndcg@10").find_element(By.CSS_SELECTOR, ".v")
        assert weight.value_of_css_property("font-weight") == "700"
        # Markers against the baseline (first system): compare's own Holm p (perm) < 0.05.
        seen = []
        for baseline in ("mode_a", "mode_b"):
            Select(browser.find_element(By.ID, "baseline")).select_by_value(baseline)
            for mode in (m for m in metrics if m != baseline):
                pair = {baseline: values[baseline], mode: values[mode]}
                row = compare(pair, metrics=["ndcg@10", "recall@100"]).row(mode, "ndcg@10")
                sig = _cell(browser, mode, "ndcg@10").find_element(By.CSS_SELECTOR, ".sig")
                expected = ("▲" if row.diff > 0 else "▼") if row.significant() else ""
                assert sig.text == expected, (baseline, mode, row)
                seen.append(expected)
                assert f"Holm p (perm) {row.p_permutation_holm:.4f}" in sig.get_attribute("title")
            base_row = browser.find_element(By.CSS_SELECTOR, f'tr[data-system="{baseline}"]')
            assert "(baseline)" in base_row.text
            # Δ: the value minus the baseline's, as summary.json holds them.
            delta = browser.find_element(By.CSS_SELECTOR, 'tr[data-system="mode_c"] td.delta').text
            diff = metrics["mode_c"]["ndcg@10"]["beir"] - metrics[baseline]["ndcg@10"]["beir"]
            assert delta == f"{'+' if diff >= 0 else '−'}{abs(diff):.4f}"
        assert "▲" in seen and "▼" in seen  # both kinds were drawn
        legend = browser.find_element(By.ID, "significance-legend").text
        assert "randomization test" in legend and "Holm" in legend
        # Sorting: a metric's header sorts best first, again worst first; Δ follows it.
        header = browser.find_element(By.CSS_SELECTOR, '#headline-table th[data-metric="map@100"]')
        header.click()
        order = sorted(metrics, key=lambda m: -metrics[m]["map@100"]["beir"])
        assert _systems(browser) == order
        assert browser.find_element(By.ID, "delta-head").text.startswith("Δ map@100")
        header.click()
        assert _systems(browser) == order[::-1]
        # Strict aggregates, counts and checks sit behind a toggle that fits 1,400 px.
        strict = _cell(browser, "mode_c", "ndcg@10", "strict")
        assert not strict.is_displayed()
        table = browser.find_element(By.ID, "headline-table")
        assert table.size["width"] <= 1400
        browser.find_element(By.ID, "more-columns").click()
        assert strict.is_displayed()
        assert strict.text == f"{metrics['mode_c']['ndcg@10']['strict']:.4f}"
        assert not console_errors(browser)
        assert not alert_open(browser)
        assert network_requests(browser) == []


def _ids(browser):
    from selenium.webdriver.common.by import By

    return [td.text for td in browser.find_elements(By.CSS_SELECTOR, "#query-body td.id")]


def test_failed_queries_are_marked_first_filterable_and_counted_where_left_out(run):
    from selenium.webdriver.common.by import By

    report, _, records = run
    errors = {r["case_id"]: r["error"] for r in records if r["mode"] == "mode_c" and r["error"]}
    assert set(errors) == FAILING
    with chromium() as browser:
        open_report(browser, report)
        # Worst first: the failed queries lead, each marked in its system's column.
        assert set(_ids(browser)[: len(FAILING)]) == FAILING
        first = browser.find_element(By.CSS_SELECTOR, "#query-body tr")
        cell = first.find_elements(By.CSS_SELECTOR, "td.num")[2]  # mode_c
        assert cell.text == "failed" and "failed" in cell.get_attribute("class")
        assert cell.get_attribute("title").startswith("query failed: RuntimeError: refused <b>")
        browser.find_element(By.ID, "failed-only").click()
        assert sorted(_ids(browser)) == sorted(FAILING)
        assert browser.find_element(By.ID, "count").text == f"2 of {len(QIDS)} queries"
        # Its drill-down says it failed, with the error, and nothing about a top 0.
        first = browser.find_element(By.CSS_SELECTOR, "#query-body tr")
        qid = first.find_element(By.CSS_SELECTOR, "td.id").text
        first.click()
        box = browser.find_element(By.CSS_SELECTOR, '#drill .system[data-system="mode_c"]')
        error = box.find_element(By.CSS_SELECTOR, "p.bad span")
        assert error.get_attribute("textContent") == errors[qid]
        assert "top 0" not in box.text and "not in the top" not in box.text
        ranks = browser.find_elements(By.CSS_SELECTOR, '#drill td.rank[data-system="mode_c"]')
        assert ranks and all(td.text == "query failed" for td in ranks)
        # The histogram and the paired tests say how many they left out.
        notes = browser.find_element(By.CSS_SELECTOR, 'figure.distribution[data-metric="ndcg@10"]')
        assert f"mode_c: n = 22 of {len(QIDS)}; left out: 2 failed queries" in notes.text
        left = browser.find_elements(
            By.CSS_SELECTOR, '#pairs tr[data-metric="ndcg@10"] td.left-out'
        )
        assert [td.get_attribute("textContent") for td in left] == ["0", "2", "2"]
        assert not console_errors(browser)


def test_drill_down_side_by_side_with_each_relevant_documents_rank(run):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    report, _, records = run
    by = {(r["mode"], r["case_id"]): r for r in records}
    with chromium() as browser:
        open_report(browser, report)
        Select(browser.find_element(By.ID, "pair")).select_by_visible_text("mode_c − mode_b")
        browser.find_element(By.CSS_SELECTOR, "#query-body tr").click()
        qid = browser.find_element(By.CSS_SELECTOR, "#drill .qid").text
        boxes = browser.find_elements(By.CSS_SELECTOR, "#drill .sides > .system")
        assert [b.get_attribute("data-system") for b in boxes] == ["mode_b", "mode_c", "mode_a"]
        # The chosen pair sits side by side: same top, different left edges.
        assert boxes[0].location["y"] == boxes[1].location["y"]
        assert boxes[0].location["x"] < boxes[1].location["x"]
        for tr in browser.find_elements(By.CSS_SELECTOR, "#drill table.ranks tbody tr"):
            doc = tr.get_attribute("data-doc")
            for td in tr.find_elements(By.CSS_SELECTOR, "td.rank"):
                record = by[(td.get_attribute("data-system"), qid)]
                ranked = [d for d, _ in record["documents"]]
                expected = str(ranked.index(doc) + 1) if record["error"] is None else "query failed"
                assert td.text == expected
        assert "(2 judged documents)" in browser.find_element(By.CSS_SELECTOR, "#drill h3").text
        assert not console_errors(browser)


def test_query_links_plot_elements_and_natural_id_order(run):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    report, _, records = run
    with chromium() as browser:
        # A #q= link opens that query's drill-down, on load and when the address changes.
        browser.get(report.resolve().as_uri() + "#q=1012")
        assert browser.find_element(By.CSS_SELECTOR, "#drill .qid").text == "1012"
        browser.execute_script("location.hash = '#q=q11'")
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(browser, 10).until(
            lambda b: b.find_element(By.CSS_SELECTOR, "#drill .qid").text == "q11"
        )
        link = browser.find_element(By.CSS_SELECTOR, "#query-body td.id a")
        assert link.get_attribute("href").endswith("#q=" + link.text)
        # Query ids in natural order.
        Select(browser.find_element(By.ID, "sort")).select_by_value("id")
        numbers = sorted(q for q in QIDS if q.isdigit())
        numeric = [q for q in _ids(browser) if q.isdigit()]
        assert numeric == sorted(numbers, key=int)
        assert _ids(browser).index("q2") < _ids(browser).index("q10")
        # A histogram bar lists its queries: those of that system whose value falls in its bin.
        bar = browser.find_element(
            By.CSS_SELECTOR,
            'figure.distribution[data-metric="ndcg@10"] rect[data-system="mode_b"][data-bin="19"]',
        )
        browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click'))", bar)
        top = {
            r["case_id"]
            for r in records
            if r["mode"] == "mode_b"
            and r["error"] is None
            and r["scores"]["ndcg@10"]["value"] >= 0.95
        }
        assert top and set(_ids(browser)) == top
        assert "mode_b ndcg@10 in [0.95, 1.00]" in browser.find_element(By.ID, "count").text
        browser.find_element(By.ID, "clear-only").click()
        assert len(_ids(browser)) == min(50, len(QIDS))
        # A difference-plot bar opens its query.
        bar = browser.find_element(By.CSS_SELECTOR, "#pairs rect[data-q]")
        browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click'))", bar)
        assert browser.find_element(By.CSS_SELECTOR, "#drill .qid").text == bar.get_attribute(
            "data-q"
        )
        assert not console_errors(browser)


def test_the_csv_export_is_the_table_and_equals_per_query_jsonl(run):
    import csv
    import io

    from selenium.webdriver.common.by import By

    report, _, records = run
    values = {(r["mode"], r["case_id"]): r for r in records}
    with chromium() as browser:
        open_report(browser, report)
        browser.find_element(By.ID, "export-csv").click()
        text = browser.execute_script("return window.hetaReportCsv")
        rows = list(csv.DictReader(io.StringIO(text)))
        assert [r["id"] for r in rows] == _ids(browser) + [r["id"] for r in rows][50:]
        assert len(rows) == len(QIDS)
        for row in rows:
            failed = []
            for mode in ("mode_a", "mode_b", "mode_c"):
                record = values[(mode, row["id"])]
                assert row["query"] == record["query"]
                if record["error"] is None:
                    assert float(row[f"{mode} ndcg@10"]) == record["scores"]["ndcg@10"]["value"]
                else:
                    assert row[f"{mode} ndcg@10"] == ""
                    failed.append(mode)
            assert row["failed in"] == "; ".join(failed)
        assert not console_errors(browser)


def test_a_partial_note_names_what_was_left_out_and_what_counts_it_as_zero():
    from heta_eval.report.headline import partial_notes

    def row(failed, not_run, kinds):
        cells = [{"name": k, "kind": v, "partial": True, "scored": 20} for k, v in kinds.items()]
        return {"label": "s", "cases": 24, "failed": failed, "not_run": not_run, "cells": cells}

    (note,) = partial_notes([row(0, 0, {"judge": "numeric"})])
    assert note == (
        "s: † a mean over the queries scored only (judge 20 of 24); the cases an evaluator "
        "failed on or gave no value for left out of it."
    )
    (note,) = partial_notes([row(1, 3, {"ndcg@10": "retrieval", "f1": "numeric"})])
    assert note == (
        "s: † a mean over the queries scored only (ndcg@10 20 of 24; f1 20 of 24); 1 failed "
        "query and 3 queries not run left out of it; strict (trec_eval -c) counts each of "
        "them as 0, so does summary.json's value of the other evaluators (the full table)."
    )
