"""Two processes that compile the same cached kernel at the same time (parallel runs, Ray
workers on one machine, test workers) leave numba's disk cache whole: each signature keeps its
own compiled code (``heta_eval._runtime.import_numba`` locks the cache's index).

Real processes, real numba, one real cache folder. Each writer is slowed at numba's own steps
(reading the index, writing it, writing the data) so that, unlocked, their steps interleave
as two unlucky processes' would: both read the empty index, both number their version 1, the
index ends up naming one signature and the data file holding the other's machine code. A third
process then loads both signatures from the cache and runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

KERNEL = """
from numba import njit


@njit(cache=True)
def add_one(x):
    return x + 1
"""

# argv: the kernel's folder, the meeting folder, this writer's name (A or B), its argument.
# Both writers meet before calling the kernel, so they compile together; inside numba's save
# each waits (at most PATIENCE s: a writer held back by the lock never arrives) for the other
# to have read the index, and the steps are ordered B's index, A's index, A's data, B's data,
# the order that leaves the index naming A's signature over B's code.
WRITER = """
import sys, time
from pathlib import Path

folder, meet, me, value = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]
other = "B" if me == "A" else "A"
PATIENCE = 1.5
sys.path.insert(0, folder)
from heta_eval._runtime import import_numba

import_numba()
from numba.core import caching

import kernel


def mark(step):
    (meet / f"{me}-{step}").touch()


def wait(name, patience=PATIENCE):
    end = time.monotonic() + patience
    while not (meet / name).exists() and time.monotonic() < end:
        time.sleep(0.005)


cache_file = caching.IndexDataCacheFile
read_index, write_index, write_data = (
    cache_file._load_index, cache_file._save_index, cache_file._save_data
)
reads = []


def slow_read(self):
    index = read_index(self)
    reads.append(1)
    if len(reads) == 2:  # the read inside save(), the first being load()'s
        mark("read")
        wait(f"{other}-read")
    return index


def slow_write_index(self, overloads):
    if me == "A":
        wait("B-index")
    write_index(self, overloads)
    mark("index")


def slow_write_data(self, name, data):
    if me == "B":
        wait("A-data")
    write_data(self, name, data)
    mark("data")


cache_file._load_index, cache_file._save_index, cache_file._save_data = (
    slow_read, slow_write_index, slow_write_data
)
mark("ready")
wait(f"{other}-ready", patience=60)
kernel.add_one(int(value) if me == "A" else float(value))
"""

READER = """
import json, sys

sys.path.insert(0, sys.argv[1])
from heta_eval._runtime import import_numba

import_numba()
import kernel

whole, half = kernel.add_one(41), kernel.add_one(41.5)
stats = kernel.add_one.stats
print(json.dumps({
    "int": [type(whole).__name__, whole],
    "float": [type(half).__name__, half],
    "compiled": sorted(str(sig) for sig, n in stats.cache_misses.items() if n),
}))
"""


def python(code: str, *args: str, cache: Path) -> subprocess.Popen:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen) -> str:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    return out


def test_two_processes_compiling_at_once_keep_each_signatures_own_code(tmp_path) -> None:
    folder, meet, cache = tmp_path / "kernel", tmp_path / "meet", tmp_path / "cache"
    folder.mkdir()
    meet.mkdir()
    (folder / "kernel.py").write_text(KERNEL)

    writers = [
        python(WRITER, str(folder), str(meet), "A", "41", cache=cache),
        python(WRITER, str(folder), str(meet), "B", "41.5", cache=cache),
    ]
    for writer in writers:
        finish(writer)
    seen = json.loads(finish(python(READER, str(folder), cache=cache)).strip().splitlines()[-1])

    # Unlocked, the int64 signature ran float64's machine code (42.0, a float) and float64
    # was compiled again: the index had kept one signature only.
    assert seen["int"] == ["int", 42]
    assert seen["float"] == ["float", 42.5]
    assert seen["compiled"] == [], "a signature was compiled again: the cache lost it"
    assert len(list(cache.rglob("*.nbc"))) == 2
