"""Shared fixtures: the real data under ../shared/datasets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

# The suite's indexes, embeddings and judge replies live in a cache folder of its own, kept
# between runs of this checkout, never in the user's ~/.cache/heta-eval. Subprocesses
# started by tests inherit it.
os.environ["HETA_EVAL_CACHE_DIR"] = str(REPO / ".test-cache")
# A home folder of the suite's own, inside that cache: what libraries save in the user's home
# (ONNX Runtime's telemetry database, Chromium's crash-report settings, Ray's token, pip's
# cache) stays in the checkout, and the user's ~ is left as it was. Subprocesses inherit it.
SUITE_HOME = REPO / ".test-cache" / "home"
SUITE_HOME.mkdir(parents=True, exist_ok=True)
os.environ["HOME"] = str(SUITE_HOME)
# The encoder's automatic route is measured once per machine (heta_eval.kb.routes); the suite
# takes the CPU-flag rule instead, so its results do not depend on a timing. The measurement
# itself is tested with injected timings (tests/test_encode_routes.py).
os.environ.setdefault("HETA_EVAL_ENCODE_ROUTE", "static")  # never measure routes in the suite


def shared_path(*parts: str) -> Path:
    """A path under ../shared; skips the test when it is absent, except in CI where it fails."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        message = f"real data not found at {path} (see ../shared/datasets/README.md)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    return shared_path("datasets", "beir", "scifact")


@pytest.fixture(scope="session")
def scifact_run_file() -> Path:
    return shared_path("datasets", "runs", "scifact-test.reranked.trec")


@pytest.fixture
def chat_servers():
    """Keeps the loopback chat servers a test starts (``tests/chat_server.py``) and shuts
    them down after it: ``server = chat_servers(ChatServer(respond))``."""
    servers: list = []

    def keep(server):
        servers.append(server)
        return server

    yield keep
    for server in servers:
        server.close()
