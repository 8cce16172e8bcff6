"""The report's drill-down of a reranked mode says where each shown document stood in its
first stage: a real run of a mode and its ``+rerank`` into one folder, the report's payload
read back."""

from __future__ import annotations

from heta_eval import BenchmarkCase, BenchmarkRunner, Document, beir_default_metrics, from_callable
from heta_eval.report.payload import build_payload
from heta_eval.report.sources import load_dataset, load_systems

FIRST = [("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6)]
RERANKED = [("c", 5.0), ("a", 4.0), ("b", 1.0), ("e", 0.5)]  # c up, a and b down, e new


class Letters:
    name = "letters"

    def documents(self):
        return [Document(id=d, text=f"text {d}") for d in "abcde"]

    def cases(self):
        return [BenchmarkCase(id="q1", query="which", expected={"relevance": {"c": 1}})]

    def evaluators(self):
        return beir_default_metrics(k_values=(1, 3))


def test_a_reranked_mode_shows_each_documents_first_stage_rank(tmp_path):
    kb = from_callable({"m": lambda query, top_k: FIRST, "m+rerank": lambda q, k: RERANKED})
    folder = tmp_path / "out"
    BenchmarkRunner(progress=False).run(
        benchmark=Letters(), knowledge_base=kb, query_modes=("m", "m+rerank"), output_dir=folder
    )
    systems = load_systems([folder])
    payload = build_payload(systems, load_dataset("letters", set(), benchmark=Letters()))
    first, second = (payload["detail"][s.label][0] for s in systems)
    assert first["moved"] is None  # a first stage moved nothing
    assert second["moved"] == [3, 1, 2, None]
    shown = [payload["docs"]["ids"][i] for i, _ in second["top"]]
    assert shown == ["c", "a", "b", "e"]


def test_in_chromium_the_drill_down_shows_the_first_stage_rank(tmp_path):
    from selenium.webdriver.common.by import By
    from support.report_browser import chromium, console_errors, open_report

    from heta_eval.report import write_report

    kb = from_callable({"m": lambda query, top_k: FIRST, "m+rerank": lambda q, k: RERANKED})
    folder = tmp_path / "out"
    BenchmarkRunner(progress=False).run(
        benchmark=Letters(), knowledge_base=kb, query_modes=("m", "m+rerank"), output_dir=folder
    )
    page = tmp_path / "report.html"
    write_report([folder], page, benchmark=Letters())
    with chromium() as browser:
        open_report(browser, page)
        browser.find_element(By.CSS_SELECTOR, "#query-body tr").click()
        drill = browser.find_element(By.ID, "drill")
        second = drill.find_element(By.CSS_SELECTOR, '.system[data-system="m+rerank"]')
        moved = [c.text for c in second.find_elements(By.CSS_SELECTOR, "table.docs td.moved")]
        assert moved == ["\u25b2 3", "\u25bc 1", "\u25bc 2", "not in it"]
        first = drill.find_element(By.CSS_SELECTOR, '.system[data-system="m"]')
        assert not first.find_elements(By.CSS_SELECTOR, "td.moved")
        assert not console_errors(browser)
