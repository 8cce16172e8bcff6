"""Any text is data: a corpus and queries full of markup, template syntax, separators, NUL
bytes and 1 MB lines, run by the real runner, render as text in a real Chromium."""

from __future__ import annotations

import pytest
from support.report_browser import (
    alert_open,
    chromium,
    console_errors,
    network_requests,
    open_report,
)

from heta_eval.evaluation import AnswerExactMatch, BenchmarkCase, Document, beir_default_metrics
from heta_eval.report import write_report

HOSTILE = [
    "<script>alert('title')</script>",
    '<img src=x onerror="alert(1)">',
    "</style><style>body{display:none}</style>",
    "</script><script>alert(2)</script>",
    '<a href="javascript:alert(3)">click me</a>',
    "{{ 7*7 }} {% if true %}jinja{% endif %} ${7*7}",
    "line\u2028separator\u2029paragraph",
    "nul\x00byte",
]
# A 1 MB line (no newline in it; a title) and an unbroken 5,000-character token that must wrap.
# (A 1 MB token, or a 1 MB text, would test the knowledge base instead: its analyzer and
# answerer take minutes on them.)
HUGE = "y" * 5_000 + " " + "word " * 200_000


class HostileBenchmark:
    name = "hostile"

    def documents(self):
        docs = [
            Document(id=f"d{i}", title=text, text=f"cats purr {text} dogs bark {i}")
            for i, text in enumerate(HOSTILE)
        ]
        docs.append(Document(id="huge", title=HUGE, text=f"cats {HUGE[:6_000]} purr"))
        return docs

    def cases(self):
        return [
            BenchmarkCase(
                id=f"q<b>{i}</b>",
                query=f"cats purr {text}",
                expected={"relevance": {f"d{i}": 1}, "answers": [text]},
            )
            for i, text in enumerate(HOSTILE)
        ] + [
            BenchmarkCase(
                id="qhuge", query=f"cats {HUGE[:20_000]}", expected={"relevance": {"huge": 1}}
            )
        ]

    def evaluators(self):
        return (*beir_default_metrics(k_values=(1, 10)), AnswerExactMatch())


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from heta_eval.reference import Recipe
    from heta_eval.runner import BenchmarkRunner

    root = tmp_path_factory.mktemp("hostile")
    benchmark = HostileBenchmark()
    BenchmarkRunner(top_k=10, progress=False).run(
        benchmark=benchmark,
        recipe=Recipe(),
        query_modes=("keyword_search",),
        output_dir=root / "results",
        cache_dir=root / "cache",
    )
    return write_report([root / "results"], benchmark=benchmark)


def test_hostile_text_is_escaped_in_the_file(report):
    html = report.read_text(encoding="utf-8")
    data = html[html.index('<script type="application/json"') :]
    data = data[: data.index("</script>") + len("</script>")]
    assert data.count("<") == 2 and data.count(">") == 2  # only the element's own tags
    assert "\u2028" not in data and "\x00" not in html
    assert "{{ 7*7 }}" in data  # not evaluated by the template
    assert len(html) < 3_000_000  # the 1 MB title, text and query are cut


def test_hostile_text_renders_as_text_and_runs_nothing(report):
    from selenium.webdriver.common.by import By

    with chromium() as browser:
        open_report(browser, report)
        assert not alert_open(browser)
        assert browser.execute_script("return document.images.length") == 0
        assert browser.execute_script("return document.scripts.length") == 2
        assert browser.execute_script("return document.querySelectorAll('style').length") == 1
        assert browser.execute_script("return getComputedStyle(document.body).display") == "block"
        for row in range(len(HOSTILE) + 1):
            browser.find_elements(By.CSS_SELECTOR, "#query-body tr")[row].click()
            assert not alert_open(browser)
        # Open each hostile query's drill-down and read its text back.
        shown = []
        for index in range(len(HOSTILE)):
            cell = next(
                td
                for td in browser.find_elements(By.CSS_SELECTOR, "#query-body td.id")
                if td.text == f"q<b>{index}</b>"
            )
            cell.click()
            shown.append(
                browser.execute_script("return document.getElementById('drill').textContent")
            )
        for index, text in enumerate(HOSTILE):
            # The query and its document's title, as text; a control character made visible.
            visible = text.replace("\x00", "⟨U+0000⟩")
            assert f"cats purr {visible}" in shown[index], text
            assert visible in shown[index]
        assert "nul⟨U+0000⟩byte" in shown[7] and "\x00" not in shown[7]
        assert "{{ 7*7 }}" in shown[5] and "49" not in shown[5]
        # The 1 MB title and line are cut, and the page is not wider than the window.
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= browser.execute_script("return window.innerWidth")
        assert max(len(text) for text in shown) < 100_000
        assert not console_errors(browser)
        assert network_requests(browser) == []
