"""The suite writes nothing into the user's home: it runs with a home folder of its own
(``tests/conftest.py``), which every process it starts inherits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.paths import REPO, SUITE_HOME


def test_the_suite_and_its_subprocesses_have_a_home_inside_the_checkout():
    assert Path.home() == SUITE_HOME and SUITE_HOME.is_relative_to(REPO / ".test-cache")
    child = subprocess.run(
        [sys.executable, "-c", "from pathlib import Path; print(Path.home())"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert child.stdout.strip() == str(SUITE_HOME)
