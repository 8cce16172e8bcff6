"""One version, written once (``heta_eval.__version__``): ``heta-eval --version``, the
package metadata pyproject.toml builds and CHANGELOG.md all say it; ``--version`` is instant."""

from __future__ import annotations

import re
import resource
import subprocess
import sys
from pathlib import Path

from support.paths import REPO

import heta_eval

HEAVY = ("numpy", "numba", "pydantic", "pandas", "pyarrow", "httpx", "pytrec_eval", "torch")


def test_the_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", heta_eval.__version__)


def test_heta_eval_version_prints_the_packages_version():
    script = Path(sys.executable).with_name("heta-eval")
    commands = [[sys.executable, "-m", "heta_eval", "--version"]]
    if script.exists():  # the console script of this environment, as a user runs it
        commands.append([str(script), "--version"])
    for command in commands:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        assert (done.returncode, done.stdout) == (0, f"heta-eval {heta_eval.__version__}\n")


def test_pyproject_takes_its_version_from_the_package():
    # setuptools reads the file as the build does (tomllib is Python 3.11's, not 3.10's).
    from setuptools.config.pyprojecttoml import read_configuration

    pyproject = read_configuration(REPO / "pyproject.toml", expand=False)
    assert "version" not in pyproject["project"]  # never a second copy
    assert "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "heta_eval.__version__"
    }
    # What the build computes from it (the assignment, read without importing the package).
    built = read_configuration(REPO / "pyproject.toml", expand=True)
    assert built["project"]["version"] == heta_eval.__version__


def test_the_changelog_has_a_section_for_the_version_below_unreleased():
    headings = re.findall(r"^## \[([^\]]+)\]", (REPO / "CHANGELOG.md").read_text(), re.M)
    assert headings[:2] == ["Unreleased", heta_eval.__version__]
    # Newest first, each version once.
    versions = [tuple(int(p) for p in h.split(".")) for h in headings[1:]]
    assert versions == sorted(set(versions), reverse=True)


def test_version_imports_nothing_heavy_and_answers_at_once():
    code = (
        "import sys\n"
        "sys.argv = ['heta-eval', '--version']\n"
        "from heta_eval.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"
    # CPU seconds of the child (user + system), the best of three: a shared machine's load
    # stretches the wall clock, not the work --version does.
    best = float("inf")
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-m", "heta_eval", "--version"], capture_output=True, check=True
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = min(best, spent)
    assert best < 0.5, f"heta-eval --version took {best:.2f} s of CPU"
