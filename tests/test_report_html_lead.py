"""The report's first answers, in a real headless Chromium: the headline (fixed decimals, best
in bold, significance against a chosen baseline, Δ, sorting, the further columns behind a
toggle, partial values marked), failed queries in sight, and the per-query links and export.
The results folder is the real runner's, of a synthetic run in three modes (tests/lead_fixtures)."""

from __future__ import annotations

import json

import pytest
from lead_fixtures import FAILING, QIDS, run_three_modes
from report_browser import alert_open, chromium, console_errors, network_requests, open_report

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
        assert "2 queries failed and left out of it; strict (trec_eval -c) counts each" in note
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
