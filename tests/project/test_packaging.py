"""The package as library users get it: a wheel installed into a fresh environment.

The wheel is built from a copy of the checkout, installed (with its core requirements only)
into a new virtual environment outside the repository, and the commands run there.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from support.paths import REPO, shared_path

import heta_eval

HEAVY = ("torch", "sentence-transformers", "bm25s", "matplotlib")
# What a checkout has but a wheel must not be built from.
_NOT_SOURCES = (".git", ".venv", "build", "results", "datasets", "*.egg-info", "__pycache__")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source") / "heta-eval"
    # symlinks=True: heta_eval/adapters stays a link to adapters/, as in the repository.
    shutil.copytree(REPO, source, symlinks=True, ignore=shutil.ignore_patterns(*_NOT_SOURCES))
    out = tmp_path_factory.mktemp("dist")
    # The build backend of this environment when it has one (fast, offline), else pip's own.
    flags = ["--no-build-isolation"] if _has_setuptools() else []
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *flags, "-w", str(out), "."],
        cwd=source,
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("heta_eval-*.whl")
    return built


def _has_setuptools() -> bool:
    try:
        import setuptools  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The bin/ folder of a fresh environment (no system site-packages) holding the wheel."""
    env = tmp_path_factory.mktemp("env") / "venv"
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(env)
    python = env / "bin" / "python"
    install = ["install", "-q", "--no-compile", str(wheel)]
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), *install],
        check=True,
        capture_output=True,
    )
    return env / "bin"


def _metadata(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return Parser().parsestr(archive.read(name).decode("utf-8"))


def test_wheel_installs_heta_eval_alone_with_its_data(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    top = {name.split("/")[0] for name in names if ".dist-info/" not in name}
    assert top == {"heta_eval"}  # never a top-level `adapters` (AdapterHub's import name)
    # The Lucene oracle (Anserini on Java) is a checkout's developer tooling, not the wheel's.
    assert [name for name in names if "anserini" in name or name.endswith(".java")] == []
    assert "heta_eval/lucene/index.py" in names
    for path in (
        "heta_eval/adapters/beir.py",
        "heta_eval/adapters/scifact_claims.py",
        "heta_eval/data/registry.json",
        "heta_eval/data/references.json",
    ):
        assert path in names


def test_the_wheel_carries_the_version_written_in_the_package(wheel):
    assert _metadata(wheel)["Version"] == heta_eval.__version__
    assert wheel.name.startswith(f"heta_eval-{heta_eval.__version__}-")


def test_core_requirements_are_light_and_unpinned(wheel):
    requires = _metadata(wheel).get_all("Requires-Dist")
    core = [r for r in requires if "extra ==" not in r]
    assert core and not [r for r in core if r.split(">")[0].split("<")[0].strip() in HEAVY]
    assert not [r for r in requires if "==" in r.split(";")[0]], "no exact pins"
    extras = {r.split('extra == "')[1].rstrip('"') for r in requires if "extra ==" in r}
    assert {"kb", "compare", "ray", "all"} <= extras
    kb = [r for r in requires if r.endswith('extra == "kb"')]
    assert {name for name in HEAVY if name != "matplotlib"} <= {r.split(">")[0] for r in kb}


def test_installed_wheel_evaluates_lists_datasets_and_imports(installed, tmp_path):
    run = shared_path("datasets", "runs", "scifact-test.reranked.trec")
    data = shared_path("datasets", "beir")

    def call(*args: str) -> str:
        # The environment's own package, never a checkout on PYTHONPATH.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        done = subprocess.run(
            args, cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    cli = str(installed / "heta-eval")
    output = call(
        cli, "evaluate", "--run", str(run), "--dataset", "scifact", "--data-dir", str(data)
    )
    assert "| NDCG@10 | 0.5" in output
    listing = call(cli, "datasets", "list")
    assert "scifact" in listing and "msmarco" in listing
    library = call(
        str(installed / "python"),
        "-c",
        "import sys, heta_eval\n"
        "from heta_eval import evaluate_run\n"
        "from heta_eval.adapters import load_benchmark\n"
        "print(heta_eval.__file__)\n"
        "print(evaluate_run({'q': {'d': 1}}, {'q': {'d': 1.0}}).beir_dict()['ndcg']['NDCG@10'])\n"
        "print(sorted(m for m in ('torch', 'pandas', 'adapters') if m in sys.modules))",
    )
    where, value, loaded = library.splitlines()
    assert Path(where).is_relative_to(installed.parent) and value == "1.0" and loaded == "[]"


def test_missing_extra_is_one_line_naming_it(installed, tmp_path):
    data = str(shared_path("datasets", "beir"))
    command = ["run", "--dataset", "scifact", "--modes", "keyword_search", "--data-dir", data]
    done = subprocess.run(
        [str(installed / "heta-eval"), *command, "--output", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        # The knowledge base imports PyStemmer (the bm25s index) first; Lucene's analyzer
        # needs nothing beyond numpy.
        "heta-eval run: error: Stemmer is not installed: this needs the 'kb' extra "
        "(pip install 'heta-eval[kb]')"
    )
    assert "Traceback" not in done.stderr


def test_no_module_imports_a_top_level_adapters_package():
    offenders = []
    for path in [
        *REPO.glob("heta_eval/**/*.py"),
        *REPO.glob("tests/*.py"),
        *REPO.glob("bench/*.py"),
    ]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if any(name == "adapters" or name.startswith("adapters.") for name in names):
                offenders.append(str(path.relative_to(REPO)))
    assert not offenders, f"import heta_eval.adapters instead: {offenders}"


def _core(installed: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """A command of the core install, run outside the checkout with no data configured."""
    env = {"PATH": f"{installed}:/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    return subprocess.run(
        [*args], cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=300
    )


@pytest.mark.parametrize(
    "code",
    [
        "from heta_eval import evaluate_run\n"
        "evaluate_run({'q': {'d': 1}}, {'q': {'d': 1.0}}, measures=['nDCG@10']).per_query_frame()",
        "from heta_eval.runner import BenchmarkResults, RunSummary\n"
        "summary = RunSummary(benchmark='b', knowledge_base='k', evaluators=[], top_k=1, modes={})\n"
        "BenchmarkResults(summary, []).to_dataframe()",
        "from heta_eval.extras import require\npd = require('pandas')",  # docs/install.md
        "from heta_eval.compare import leaderboard\n"
        "leaderboard({'bm25': {'scifact': 0.68}}, 'ndcg@10').plot('board.png')",
    ],
    ids=["per_query_frame", "to_dataframe", "install.md DataFrame example", "leaderboard plot"],
)
def test_a_missing_extra_in_the_library_is_one_line_naming_it(installed, tmp_path, code):
    done = _core(installed, tmp_path, str(installed / "python"), "-c", code)
    assert done.returncode == 1
    module = "matplotlib" if "plot" in code else "pandas"
    assert done.stderr.strip().splitlines()[-1] == (
        f"heta_eval.extras.MissingExtraError: {module} is not installed: this needs the "
        "'compare' extra (pip install 'heta-eval[compare]')"
    )


def test_the_core_install_says_its_version_and_only_names_places_you_can_use(installed, tmp_path):
    version = _core(installed, tmp_path, str(installed / "heta-eval"), "--version")
    assert version.returncode == 0 and version.stdout == f"heta-eval {heta_eval.__version__}\n"
    run = _core(
        installed,
        tmp_path,
        str(installed / "heta-eval"),
        "evaluate",
        "--run",
        "r.trec",
        "--dataset",
        "scifact",
    )
    assert run.returncode == 2
    env_root = installed.parent
    assert str(env_root) not in run.stderr, run.stderr  # nothing inside the environment
    assert f"looked in {tmp_path}/home/.cache/heta-eval/datasets/scifact" in run.stderr
