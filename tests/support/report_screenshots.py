"""The screenshots of docs/report.md, taken with Selenium's screenshot API in the headless
Chromium the report's tests use:

    .venv/bin/python tests/support/report_screenshots.py REPORT.html docs/images

writes report-headline.png (the headline, 1,400 px wide), report-drill-down.png (a query's
drill-down, the chosen pair side by side) and report-distributions.png (two metrics' histograms,
every system on one axis), each cut to what it shows and reduced to a
256-colour palette, so each stays small."""

from __future__ import annotations

import sys
import time
from io import BytesIO
from pathlib import Path

if __name__ == "__main__":  # run as a script: ``support`` is a package of tests/
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.report_browser import chromium, open_report

WIDTH = 1400


def _save(png: bytes, box: tuple[int, int, int, int], path: Path) -> None:
    from PIL import Image

    image = Image.open(BytesIO(png)).convert("RGB").crop(box)
    image.quantize(colors=256).save(path, optimize=True)
    print(f"{path}: {path.stat().st_size} bytes, {image.size[0]}x{image.size[1]}")


def main(report: Path, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with chromium() as browser:
        browser.set_window_size(WIDTH, 1000)
        print(f"first paint: {open_report(browser, report):.3f} s")
        bottom = browser.execute_script(
            "var r = document.getElementById('headline-legend').getBoundingClientRect();"
            "return Math.ceil(r.bottom + window.scrollY) + 8;"
        )
        inner = browser.execute_script("return [window.innerWidth, window.innerHeight];")
        _save(
            browser.get_screenshot_as_png(),
            (0, 0, inner[0], min(bottom, inner[1])),
            folder / "report-headline.png",
        )
        # The drill-down of the query the chosen pair disagrees on most.
        browser.execute_script(
            "var s = document.getElementById('sort'); s.value = 'absdiff';"
            "s.dispatchEvent(new Event('change'));"
            "document.querySelector('#query-body tr').click();"
        )
        time.sleep(0.5)
        _save(
            browser.get_screenshot_as_png(),
            (0, 0, inner[0], inner[1]),
            folder / "report-drill-down.png",
        )
        # The distributions: every system on one axis per metric.
        browser.execute_script("document.getElementById('distributions').scrollIntoView()")
        time.sleep(0.3)
        height = browser.execute_script(
            "var f = document.querySelectorAll('#distributions figure');"
            "return Math.ceil(f[Math.min(1, f.length - 1)].getBoundingClientRect().bottom) + 8;"
        )
        _save(
            browser.get_screenshot_as_png(),
            (0, 0, inner[0], min(height, inner[1])),
            folder / "report-distributions.png",
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
