"""Where the suite's files are: the checkout, the tests, their pinned data, ../shared and the
suite's own home folder (made and set in ``tests/conftest.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: The checkout's root.
REPO = Path(__file__).resolve().parents[2]
#: The tests folder: ``tests/<room>/`` mirror ``heta_eval/<room>/``.
TESTS = REPO / "tests"
#: Pinned outputs and the scripts that make them.
DATA = TESTS / "support" / "data"
#: Real data beside the checkout (../shared/datasets).
SHARED = REPO.parent / "shared"
#: The suite's home folder, inside its cache folder (``tests/conftest.py`` makes it).
SUITE_HOME = REPO / ".test-cache" / "home"


def shared_path(*parts: str) -> Path:
    """A path under ../shared; skips the test when it is absent, except in CI where it fails."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        message = f"real data not found at {path} (see ../shared/datasets/README.md)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path
