"""The drill-down of a run against a real service with a real LLM judge, in a real Chromium.

A knowledge-base service on 127.0.0.1 answers with chunk hits (several per document) and an
answer, and refuses the queries that hold "FAIL" with an error whose text is markup; an
OpenAI-compatible judge on 127.0.0.1 gives verdicts whose reasons are markup too. The report
`heta-eval run` writes must show each verdict with its reason, each failed query's error and
each shown document's chunk hits, all as text: no script runs, no console error.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from support.chat_server import ChatServer, completion_body
from support.loopback import LoopbackService
from support.report_browser import (
    alert_open,
    chromium,
    console_errors,
    network_requests,
    open_report,
)

from heta_eval.cli import main as cli_main

HOSTILE = '</script><script>alert("x")</script><img src=x onerror=alert(1)> {{ 7*7 }} \u2028&amp;'
FACTS = {
    "paris": "Paris is the capital of France. It lies on the Seine.",
    "rome": "Rome is the capital of Italy. It has seven hills.",
    "oslo": "Oslo is the capital of Norway. It lies on a fjord.",
}
CASES = {"paris": "France", "rome": "Italy", "oslo": "Norway FAIL", "tokyo": "Japan FAIL"}


class ChunkService(LoopbackService):
    """The chunks of every document, best first: the asked country's document's chunks 0 and
    2 at ranks 1 and 3, another document's chunk 1 (its id holding markup) between them. Queries naming FAIL get
    HTTP 400 with a body of markup (a client error: not retried)."""

    def __init__(self) -> None:
        def reply(raw: bytes, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
            query = json.loads(raw)["query"]
            if "FAIL" in query:
                return 400, f"service refused: {HOSTILE}".encode(), {}
            asked = next(d for d, country in CASES.items() if country in query)
            other = next(d for d in FACTS if d != asked)
            hits = [(asked, "#0", 0.9), (other, f"#1 {HOSTILE}", 0.8), (asked, "#2", 0.7)]
            answer = {
                "query": query,
                "answer": asked.title(),
                "results": [
                    {"text": FACTS[d], "score": s, "source": {"document_id": d, "chunk_id": d + n}}
                    for d, n, s in hits
                ],
            }
            return 200, json.dumps(answer).encode(), {}

        super().__init__(reply)


def judge_reply(index: int, body: dict, headers: dict) -> tuple[int, bytes, float]:
    """Rome's answer fails, Paris's passes; each reason names its case and holds markup."""
    prompt = body["messages"][0]["content"]
    case = "rome" if "capital of Italy?" in prompt else "paris"  # the question, not the context
    passed = case == "paris"
    reason = f"reason for {case}: {HOSTILE}"
    content = json.dumps({"score": 1.0 if passed else 0.0, "passed": passed, "reason": reason})
    return 200, completion_body(content), 0.0


@pytest.fixture(scope="module")
def service_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("service-report")
    (root / "docs.jsonl").write_text(
        "".join(
            json.dumps({"id": d, "title": d.title(), "text": t}) + "\n" for d, t in FACTS.items()
        )
    )
    cases = [
        {
            "id": d,
            "query": f"What is the capital of {country}?",
            "expected": {"answers": [d.title()], "relevance": {d: 1}},
        }
        for d, country in CASES.items()
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    service, judge = ChunkService(), ChatServer(judge_reply)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("HETA_EVAL_CACHE_DIR", str(root / "cache"))
            patch.setenv("HETA_EVAL_LLM_BASE_URL", judge.base_url)
            patch.setenv("HETA_EVAL_LLM_MODEL", "judge-1")
            patch.delenv("HETA_EVAL_LLM_API_KEY", raising=False)
            patch.delenv("OPENAI_API_KEY", raising=False)
            stderr = io.StringIO()
            with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
                status = cli_main(
                    [
                        "run",
                        "--benchmark",
                        str(root / "cases.jsonl"),
                        "--documents",
                        str(root / "docs.jsonl"),
                        "--kb-url",
                        service.url,
                        "--modes",
                        "hybrid_search",
                        "--output",
                        str(root / "results"),
                        "--quiet",
                        "--judge",
                        "--judge-cache",
                        str(root / "judge.sqlite"),
                    ]
                )
    finally:
        service.close()
        judge.close()
    assert status == 3, stderr.getvalue()[-2000:]  # 3: some queries failed, as they should
    return root / "results"


def _records(folder: Path) -> dict[str, dict]:
    return {r["case_id"]: r for r in map(json.loads, _lines(folder / "per_query.jsonl"))}


def _lines(path: Path) -> list[str]:
    # Split on newlines only: the texts hold U+2028, which splitlines() would split on.
    return path.read_text(encoding="utf-8").strip("\n").split("\n")


def test_the_results_folder_keeps_the_chunk_hits_of_the_shown_documents(service_run):
    records = _records(service_run)
    hits = {r["case_id"]: r["hits"] for r in map(json.loads, _lines(service_run / "hits.jsonl"))}
    assert set(hits) == {"paris", "rome"}  # failed queries have none
    assert records["paris"]["documents"][0][0] == "paris"
    assert hits["paris"] == [
        [["paris#0", 1, 0.9], ["paris#2", 3, 0.7]],
        [[f"rome#1 {HOSTILE}", 2, 0.8]],
    ]
    assert "hits" not in records["paris"]  # per_query.jsonl stays as it was


def test_drill_down_shows_verdicts_reasons_errors_and_chunk_hits_as_text(service_run):
    from selenium.webdriver.common.by import By

    records = _records(service_run)
    assert records["rome"]["scores"]["llm_judge"]["passed"] is False  # the judge really ran
    with chromium() as browser:
        open_report(browser, service_run / "report.html")
        rows = {
            tr.find_element(By.CSS_SELECTOR, "td.id").text: tr
            for tr in browser.find_elements(By.CSS_SELECTOR, "#query-body tr")
        }
        assert set(rows) == set(CASES)
        for case in CASES:
            browser.execute_script(
                "var id = arguments[0];"
                "Array.from(document.querySelectorAll('#query-body tr')).find(function (tr) {"
                "  return tr.querySelector('td.id').textContent === id; }).click()",
                case,
            )
            box = browser.find_element(
                By.CSS_SELECTOR, '#drill .system[data-system="hybrid_search"]'
            )
            record = records[case]
            if record["error"]:
                assert "<img src=x onerror=alert(1)>" in record["error"]  # markup, as sent
                error = box.find_element(By.CSS_SELECTOR, "p.bad span")
                assert error.get_attribute("textContent") == record["error"]
                assert error.is_displayed()
                continue
            verdict = box.find_element(By.CSS_SELECTOR, 'p.verdict[data-evaluator="llm_judge"]')
            expected = "passed" if record["scores"]["llm_judge"]["passed"] else "failed"
            assert verdict.find_element(By.TAG_NAME, "strong").text == f"llm_judge: {expected}"
            reason = verdict.find_element(By.CSS_SELECTOR, "span.reason")
            assert reason.get_attribute("textContent") == f"reason for {case}: {HOSTILE}"
            # The top document carries its two chunk hits, the second its one.
            first, second = box.find_elements(By.CSS_SELECTOR, "table.docs tbody tr")[:2]
            chunks = [li.text for li in first.find_elements(By.CSS_SELECTOR, ".chunk-hits li")]
            assert chunks == [f"{case}#0 rank 1, score 0.9000", f"{case}#2 rank 3, score 0.7000"]
            (chunk,) = second.find_elements(By.CSS_SELECTOR, ".chunk-hits .chunk")
            other = records[case]["documents"][1][0]
            # Markup as text; in an id, the line separator shown (ids never hide a character).
            whole = f"{other}#1 {HOSTILE}".replace("\u2028", "⟨U+2028⟩")
            assert chunk.get_attribute("textContent") == whole
            assert chunk.get_attribute("title") == whole
        # Markup in the texts made no element: no image, no script in the drill-down.
        assert not browser.find_elements(By.CSS_SELECTOR, "img, #drill script")
        assert not alert_open(browser)
        assert not console_errors(browser)
        assert network_requests(browser) == []


def test_the_headline_mean_is_summary_json_mean_marked_partial(service_run):
    import re

    from heta_eval.report.headline import number

    summary = json.loads((service_run / "summary.json").read_text(encoding="utf-8"))
    metrics = summary["modes"]["hybrid_search"]["metrics"]
    html = (service_run / "report.html").read_text(encoding="utf-8")
    cells = dict(
        re.findall(
            r'<td class="num[^"]*" data-metric="([^"]+)" data-aggregate="mean"'
            r'[^>]*title="([^"]*)"',
            html,
        )
    )
    assert "llm_judge" in cells
    for name, title in cells.items():
        metric = metrics[name]
        assert metric["partial"]  # two of four queries failed
        # The mean over the scored cases, not `value` (which counts failed queries as 0).
        assert title.startswith(f"{number(metric['mean'])} in summary.json (mean); partial")
        assert metric["mean"] != metric["value"]
