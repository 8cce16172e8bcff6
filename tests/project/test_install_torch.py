"""``make install``'s torch step (``make torch``): PyTorch's CPU wheel index first, the default
index where it does not answer, the default index's build with ``TORCH=cuda``.

Both indexes are real package indexes (PEP 503 pages and a wheel) served on loopback; pip in a
fresh virtual environment installs from them, with every pip setting of this machine left out,
so the wheel it installs says which index it came from.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[2]
TORCH_VERSION = "2.13.0"


def fake_torch_wheel(folder: Path, version: str, build: str) -> Path:
    """A pure-Python wheel named torch whose module says which ``build`` it is."""
    name = f"torch-{version}-py3-none-any.whl"
    files = {
        "torch/__init__.py": f"BUILD = {build!r}\n",
        f"torch-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n",
        f"torch-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"torch-{version}.dist-info/RECORD,,")
    files[f"torch-{version}.dist-info/RECORD"] = "\n".join(record) + "\n"
    wheel = folder / name
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


class PackageIndex:
    """A PEP 503 index on 127.0.0.1 serving one torch wheel under ``prefix``; ``asked`` lists
    every path requested, in order."""

    def __init__(self, wheel: Path, prefix: str, log: list[str], label: str) -> None:
        page = f'<html><body><a href="{wheel.name}">{wheel.name}</a></body></html>'.encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                log.append(f"{label} {self.path}")
                path = unquote(self.path.split("?")[0]).rstrip("/")
                if path == f"{prefix}/torch":
                    body, kind = page, "text/html"
                elif path == f"{prefix}/torch/{wheel.name}":
                    body, kind = wheel.read_bytes(), "application/octet-stream"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_port}{prefix}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def indexes(tmp_path):
    """The CPU index (serving ``2.13.0+cpu``) and the default index (``2.13.0``, the CUDA
    stand-in), one request log for both."""
    (tmp_path / "cpu").mkdir()
    (tmp_path / "default").mkdir()
    log: list[str] = []
    cpu = PackageIndex(
        fake_torch_wheel(tmp_path / "cpu", f"{TORCH_VERSION}+cpu", "cpu"), "/whl/cpu", log, "cpu"
    )
    default = PackageIndex(
        fake_torch_wheel(tmp_path / "default", TORCH_VERSION, "default"), "/simple", log, "default"
    )
    yield cpu, default, log
    cpu.close()
    default.close()


def make_torch(venv: Path, default_index: str, *variables: str) -> subprocess.CompletedProcess:
    # None of this machine's pip settings (its own index, wheel folder, constraints, cache).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env |= {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_INDEX_URL": default_index,
        "PIP_NO_CACHE_DIR": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    return subprocess.run(
        ["make", "--no-print-directory", "torch", f"VENV={venv}", *variables],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def installed_build(venv: Path) -> str:
    probe = "import torch, importlib.metadata as m; print(torch.BUILD, m.version('torch'))"
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout.strip()


def fresh_venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    return venv


def test_the_cpu_index_is_asked_first_and_serves_torch(indexes, tmp_path):
    cpu, default, log = indexes
    venv = fresh_venv(tmp_path)
    result = make_torch(venv, default.url, f"TORCH_CPU_INDEX={cpu.url}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert installed_build(venv) == f"cpu {TORCH_VERSION}+cpu"
    assert log[0] == "cpu /whl/cpu/torch/"  # the probe: the CPU index is the first one asked
    assert not [line for line in log if line.startswith("default")]
    assert f"CPU build from {cpu.url}" in result.stdout


def test_a_cpu_index_that_does_not_answer_falls_back_to_the_default_index(indexes, tmp_path):
    cpu, default, log = indexes
    gone = cpu.url  # asked first, then found closed
    cpu.close()
    venv = fresh_venv(tmp_path)
    result = make_torch(venv, default.url, f"TORCH_CPU_INDEX={gone}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert installed_build(venv) == f"default {TORCH_VERSION}"
    assert f"{gone} did not serve it; taking the default index's build" in result.stdout
    assert [line for line in log if line.startswith("default")]


def test_a_cpu_index_without_the_version_falls_back_to_the_default_index(indexes, tmp_path):
    cpu, default, log = indexes
    venv = fresh_venv(tmp_path)
    # An index that answers but holds no torch page: pip finds nothing there.
    result = make_torch(venv, default.url, f"TORCH_CPU_INDEX={cpu.url}/elsewhere")
    assert result.returncode == 0, result.stdout + result.stderr
    assert installed_build(venv) == f"default {TORCH_VERSION}"
    assert log[0] == "cpu /whl/cpu/elsewhere/torch/"


def test_torch_cuda_takes_the_default_index_and_never_asks_the_cpu_index(indexes, tmp_path):
    cpu, default, log = indexes
    venv = fresh_venv(tmp_path)
    result = make_torch(venv, default.url, f"TORCH_CPU_INDEX={cpu.url}", "TORCH=cuda")
    assert result.returncode == 0, result.stdout + result.stderr
    assert installed_build(venv) == f"default {TORCH_VERSION}"
    assert not [line for line in log if line.startswith("cpu")]


def test_an_unknown_torch_choice_is_refused_in_one_line(tmp_path):
    result = make_torch(tmp_path / "venv", "http://127.0.0.1:9/simple", "TORCH=rocm")
    assert result.returncode != 0
    assert "TORCH is cpu (the default) or cuda, got 'rocm'" in result.stderr
