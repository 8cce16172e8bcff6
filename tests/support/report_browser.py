"""A real headless Chromium (Debian's chromium + chromium-driver) driven by Selenium, for the
HTML report's tests. Tests skip, saying why, only where Chromium or its driver is absent."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,800",
)


def _binaries() -> tuple[str, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        pytest.skip(
            "chromium and chromium-driver are not installed "
            "(apt-get install -y chromium chromium-driver; .ci/run installs them)"
        )
    pytest.importorskip("selenium", reason="selenium is not installed (the 'test' extra)")
    return browser, driver


@contextmanager
def chromium() -> Iterator[Any]:
    """A fresh headless Chromium with its own profile, logging console and network events."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver = _binaries()
    profile = tempfile.mkdtemp(prefix="heta-report-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    session = webdriver.Chrome(service=Service(driver), options=options)
    try:
        yield session
    finally:
        session.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_report(session: Any, path: Path) -> float:
    """Load a report; the seconds the browser took to its first paint."""
    session.get_log("performance")  # drop the browser's own start-up traffic (new tab page)
    session.get(path.resolve().as_uri())
    deadline = time.monotonic() + 120  # a generous wait: the machine may be loaded
    while time.monotonic() < deadline:
        paint = session.execute_script(
            "var p = performance.getEntriesByName('first-contentful-paint');"
            "return p.length ? p[0].startTime : null;"
        )
        if paint is not None:
            return paint / 1000
        time.sleep(0.05)
    raise AssertionError("the page never painted")


def console_errors(session: Any) -> list[dict[str, Any]]:
    """Console messages at warning level or above (script errors, CSP refusals)."""
    return [e for e in session.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]


def network_requests(session: Any) -> list[str]:
    """Every URL asked for that could leave the machine (http, https, ws, ...): the page's
    resource timing entries and the DevTools protocol's Network.requestWillBeSent events."""
    urls = list(
        session.execute_script(
            "return performance.getEntriesByType('resource').map(function (e) { return e.name; });"
        )
    )
    for entry in session.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    # chrome:// pages are the browser's own (its new-tab page), not network traffic.
    local = ("file://", "chrome://", "chrome-untrusted://", "about:", "data:")
    return [url for url in urls if not url.startswith(local)]


def alert_open(session: Any) -> bool:
    from selenium.common.exceptions import NoAlertPresentException

    try:
        session.switch_to.alert.text  # noqa: B018 - raises when no alert is open
    except NoAlertPresentException:
        return False
    return True


def not_blank(png: bytes) -> bool:
    """True when a screenshot holds more than a few colours (text, tables, charts)."""
    from io import BytesIO

    from PIL import Image

    image = Image.open(BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1_000_000) or []
    return len(colours) > 20
