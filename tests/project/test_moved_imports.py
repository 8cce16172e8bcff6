"""Import paths that moved keep working for one minor version (those of 0.2.0 until 0.3.0,
``heta_eval.kb``'s, moved in 0.3.0, until 0.4.0): each gives the very object of its new home
and a DeprecationWarning naming that home (the rule: docs/development.md, the
table: heta_eval/_moved.py, the list: CHANGELOG.md)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from support.paths import REPO

import heta_eval
from heta_eval import _moved

#: The last commit with the 0.1.0 layout (the parent of the restructuring's first step).
LAYOUT_0_1_0 = "a9ca59bc023ab5a6ce9150ae6d1dcaefc1c1cff3~1"
#: The last commit with the 0.2.0 layout (before heta_eval.kb's modules moved to their rooms).
LAYOUT_0_2_0 = "5ccc503e51770672c62e9c2db7f0f4d4721ea8ee"

#: The command line's modules: ``heta-eval`` is their surface, not an import path.
COMMAND = "heta_eval.cli."

#: 0.2.0 modules that left the package rather than moved in it: the Lucene oracle, developer
#: tooling, now in the checkout's tools/lucene_oracle/ (CHANGELOG.md says so).
LEFT_THE_PACKAGE = {
    "heta_eval.kb.lucene.anserini",
    "heta_eval.kb.lucene.java_programs",
    "heta_eval.kb.lucene.oracle",
}

#: Names of the 0.1.0 modules that were dropped, not moved (compiled or gc helpers of the
#: readers; nothing replaces them under any name).
DROPPED = {"first_occurrences", "paused_collector"}

OLD_NAME_CASES = [
    (package, name, new)
    for package, names in _moved.OLD_NAMES.items()
    for name, new in names.items()
]
OLD_MODULE_CASES = [
    (old, name, new)
    for old, (_, names) in _moved.OLD_MODULES.items()
    for name, new in names.items()
]


def _forget(module: str) -> None:
    """Undo an earlier import of an old module path, so importing it runs its loader again."""
    sys.modules.pop(module, None)
    parent, _, child = module.rpartition(".")
    if parent in sys.modules:
        vars(sys.modules[parent]).pop(child, None)


@pytest.mark.parametrize(("package", "name", "new"), OLD_NAME_CASES)
def test_a_name_a_package_no_longer_lists_is_its_new_homes_object_with_a_warning(
    package, name, new
):
    version = _moved.moved_in(package)
    message = f"{package}.{name} moved in heta-eval {version}: use 'from {new} import {name}'"
    with pytest.warns(DeprecationWarning, match=re.escape(message)):
        found = getattr(importlib.import_module(package), name)
    assert found is getattr(importlib.import_module(new), name)
    assert name not in importlib.import_module(package).__all__  # not advertised


@pytest.mark.parametrize("old", sorted(_moved.OLD_MODULES))
def test_an_old_module_path_imports_with_a_warning_naming_its_successor(old):
    successor, version = _moved.OLD_MODULES[old][0], _moved.moved_in(old)
    _forget(old)
    said = f"{old} moved in heta-eval {version}: import from {successor}"
    with pytest.warns(DeprecationWarning, match=re.escape(said)):
        module = importlib.import_module(old)
    assert module is sys.modules[old]
    assert sorted(module.__all__) == sorted(_moved.OLD_MODULES[old][1])


@pytest.mark.parametrize(("old", "name", "new"), OLD_MODULE_CASES)
def test_each_name_of_an_old_module_is_its_new_homes_object_with_a_warning(old, name, new):
    module = importlib.import_module(old)
    version = _moved.moved_in(old)
    message = f"{old}.{name} moved in heta-eval {version}: use 'from {new} import {name}'"
    with pytest.warns(DeprecationWarning, match=re.escape(message)):
        found = getattr(module, name)
    assert found is getattr(importlib.import_module(new), name)


def test_a_script_written_against_the_0_1_0_layout_runs_and_is_told_each_new_path(tmp_path):
    """As a user sees it: the script runs as ``__main__`` under Python's default warning
    filters, which show a DeprecationWarning only when it points at ``__main__``'s lines."""
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 bm25\nq1 Q0 d2 2 1.0 bm25\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    script = tmp_path / "old_layout.py"
    script.write_text(
        "import heta_eval.trec\n"
        "from heta_eval.trec import read_qrels, read_run\n"
        "from heta_eval.evaluation import AnswerF1, evaluate_run\n"
        "from heta_eval.evaluation.models import BenchmarkCase\n"
        "from heta_eval import JsonlBenchmark\n"
        "run, qrels = heta_eval.trec.read_run('run.trec'), read_qrels('qrels.txt')\n"
        "print(evaluate_run(qrels, run, k_values=(1,)).beir_dict()['ndcg'], AnswerF1().name,\n"
        "      BenchmarkCase(id='q', query='?').id, JsonlBenchmark.__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "{'NDCG@1': 1.0} answer_f1 q JsonlBenchmark\n"
    said = [line for line in done.stderr.splitlines() if "DeprecationWarning" in line]
    expected = [
        (1, "heta_eval.trec moved in heta-eval 0.2.0: import from heta_eval.io.trec"),
        (2, "use 'from heta_eval.io.trec import read_qrels'"),
        (2, "use 'from heta_eval.io.trec import read_run'"),
        (
            4,
            "heta_eval.evaluation.models moved in heta-eval 0.2.0: import from "
            "heta_eval.models.records",
        ),
        (4, "use 'from heta_eval.models.records import BenchmarkCase'"),
        (5, "use 'from heta_eval.runner import JsonlBenchmark'"),
    ]
    for line, text in expected:
        assert any(f"{script}:{line}: DeprecationWarning: " in s and text in s for s in said), said
    assert all("(the old path is removed in 0.3.0)" in s for s in said)
    # AnswerF1 and evaluate_run are heta_eval.evaluation's own names: nothing to say.
    assert not any(":3: " in s for s in said), said


def test_names_never_listed_fail_as_before():
    with pytest.raises(ImportError, match="cannot import name 'no_such_name' from 'heta_eval'"):
        exec("from heta_eval import no_such_name", {})
    assert not hasattr(importlib.import_module("heta_eval.evaluation"), "no_such_name")
    with pytest.raises(ModuleNotFoundError, match=r"No module named 'heta_eval\.no_such_module'"):
        importlib.import_module("heta_eval.no_such_module")
    _forget("heta_eval.trec")
    with pytest.warns(DeprecationWarning):
        trec = importlib.import_module("heta_eval.trec")
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        trec.no_such_name  # noqa: B018
    with pytest.raises(AttributeError, match="has no attribute '_private'"):
        trec._private  # noqa: B018


@pytest.mark.parametrize(
    ("old", "name"),
    [
        ("heta_eval.trec", "Qrels"),
        ("heta_eval.trec", "ranked"),
        ("heta_eval.evaluation.measures", "Rule"),
    ],
)
def test_a_public_name_an_old_module_had_beside_its_all_is_its_successors(old, name):
    successor = _moved.OLD_MODULES[old][0]
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=re.escape(f"use 'from {successor} import {name}'")):
        found = getattr(module, name)
    assert found is getattr(importlib.import_module(successor), name)


def test_the_old_paths_last_one_minor_version_and_go_in_the_one_after():
    assert (_moved.DEPRECATED_IN, _moved.REMOVED_IN) == ("0.2.0", "0.3.0")
    assert _moved.removed_in(_moved.DEPRECATED_IN) == _moved.REMOVED_IN  # one minor, no more
    assert (_moved.removed_in("0.3.0"), _moved.removed_in("1.9.4")) == ("0.4.0", "1.10.0")
    assert set(_moved.MOVED_IN.values()) == {"0.3.0"}
    version = tuple(int(part) for part in heta_eval.__version__.split("."))
    changelog = (REPO / "CHANGELOG.md").read_text()
    old_paths = [*_moved.OLD_MODULES, *_moved.OLD_NAMES]
    for moved in {_moved.moved_in(old) for old in old_paths}:
        removed = _moved.removed_in(moved)
        # When the version reaches a generation's removal, its paths must leave the tables.
        assert version < tuple(int(part) for part in removed.split(".")), moved
        assert f"### Deprecated (removed in {removed})" in changelog


def test_the_old_module_paths_create_no_file_and_no_import_circle():
    for old in _moved.OLD_MODULES:
        relative = Path(*old.split("."))
        assert not (REPO / relative.with_suffix(".py")).exists(), old
        assert not (REPO / relative / "__init__.py").exists(), old
    # heta_eval imports _moved at its start: _moved imports no heta_eval module (only when an
    # old path is used, by name), so it can close no circle.
    tree = ast.parse((REPO / "heta_eval" / "_moved.py").read_text())
    imported = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not [name for name in imported if name.startswith("heta_eval")], imported


def _git_show(path: str, layout: str = LAYOUT_0_1_0) -> str | None:
    done = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{layout}:{path}"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout if done.returncode == 0 else None


def _listed(source: str) -> set[str]:
    """The names a 0.1.0 module listed: its ``__all__`` list or its ``_LAZY`` table's keys."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
            if target == "__all__" and isinstance(value, ast.List):
                names |= {item.value for item in value.elts if isinstance(item, ast.Constant)}
            if target == "_LAZY" and isinstance(value, ast.Dict):
                names |= {key.value for key in value.keys if isinstance(key, ast.Constant)}
    return names


def _files_of(layout: str) -> list[str]:
    """The package's files at ``layout`` (the test skips where the history is not here)."""
    files = subprocess.run(
        ["git", "-C", str(REPO), "ls-tree", "-r", "--name-only", layout, "heta_eval"],
        capture_output=True,
        text=True,
        check=False,
    )
    if files.returncode != 0:
        pytest.skip(f"the repository's history is not here ({files.stderr.strip()})")
    return files.stdout.split()


def test_the_table_covers_every_public_path_of_the_0_1_0_layout():
    files = _files_of(LAYOUT_0_1_0)
    evaluation = _listed(_git_show("heta_eval/evaluation/__init__.py") or "")
    surfaces = {
        "heta_eval": _listed(_git_show("heta_eval/__init__.py") or "") | evaluation,
        "heta_eval.evaluation": evaluation,
    }
    assert len(surfaces["heta_eval"]) == 60 and len(evaluation) == 51
    for package, names in surfaces.items():
        now = set(importlib.import_module(package).__all__)
        assert names - now == set(_moved.OLD_NAMES[package]), package
    modules = [path for path in files if path.endswith(".py")]
    for path in modules:
        name = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        if (REPO / path).exists() or any(part.startswith("_") for part in name.split(".")):
            continue  # still there, or private (heta_eval._cpus, evaluation._jit, kb._parallel)
        if name in LEFT_THE_PACKAGE:
            continue
        listed = _listed(_git_show(path) or "") - DROPPED
        assert name in _moved.OLD_MODULES, name
        if _moved.moved_in(name) == "0.2.0":  # a later move is checked against its own layout
            assert listed == set(_moved.OLD_MODULES[name][1]), name


def test_the_table_covers_every_public_path_of_the_0_2_0_layout():
    files = _files_of(LAYOUT_0_2_0)
    gone = []
    for path in files:
        name = path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        if not path.endswith(".py") or name in LEFT_THE_PACKAGE:
            continue
        if any(part.startswith("_") for part in name.split(".")) or name.startswith(COMMAND):
            continue  # private (io._grammar_kernels), or the command line's own modules
        listed = _listed(_git_show(path, LAYOUT_0_2_0) or "")
        if importlib.util.find_spec(name) is not None and name not in _moved.OLD_MODULES:
            # still there (heta_eval.rerank as a package now): it lists what it listed
            assert listed <= set(getattr(importlib.import_module(name), "__all__", ())), name
            continue
        gone.append(name)
        assert name in _moved.OLD_MODULES and _moved.moved_in(name) == "0.3.0", name
        assert listed == set(_moved.OLD_MODULES[name][1]), name
    # every public module of heta_eval.kb but the oracle's 3, and heta_eval.retrieval.evaluate
    assert len(gone) == 55 and {"heta_eval.kb", "heta_eval.retrieval.evaluate"} <= set(gone)
    for old in LEFT_THE_PACKAGE:
        assert old not in _moved.OLD_MODULES
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)


def test_the_warning_points_at_the_line_that_uses_the_old_path():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from heta_eval import ChunkTable  # noqa: F401

    assert len(caught) == 1  # the import system's own look-up first says nothing
    assert caught[0].filename == __file__


def test_the_changelog_names_every_old_path_and_its_new_home():
    lines = (REPO / "CHANGELOG.md").read_text().splitlines()

    def said(old: str) -> str:
        """The changelog's row of ``old``, and the rows of the old paths it names (0.2.0's row
        names 0.2.0's home, which moved again in 0.3.0)."""
        row = [line for line in lines if line.startswith(f"| `{old}` |")]
        assert len(row) == 1, old
        homes = re.findall(r"`([\w.]+)`", row[0].split("|")[2])
        return " ".join([row[0], *(said(home) for home in homes if home in _moved.OLD_MODULES)])

    for old, (successor, names) in _moved.OLD_MODULES.items():
        row = said(old)
        assert f"`{successor}`" in row, old
        for name, new in names.items():
            assert new == successor or (f"`{name}`" in row and f"`{new}`" in row), name
    for package, names in _moved.OLD_NAMES.items():
        heading = f"Names `{package}` listed in 0.1.0 and no longer does"
        start = next(i for i, line in enumerate(lines) if line.startswith(heading))
        table = lines[start + 2 : lines.index("", start + 3)]
        for name, new in names.items():
            homes = [
                row.rsplit("| `", 1)[1].removesuffix("` |") for row in table if f"`{name}`" in row
            ]
            # 0.2.0's home, or where that home's names went since (heta_eval.kb's, in 0.3.0)
            now = [
                _moved.OLD_MODULES[home][1][name] if home in _moved.OLD_MODULES else home
                for home in homes
            ]
            assert new in now, (name, homes)


@pytest.mark.parametrize("old", ["heta_eval.trec", "heta_eval.evaluation.models"])
def test_an_old_module_read_as_an_attribute_or_from_its_package_imports_with_a_warning(old):
    package, _, child = old.rpartition(".")
    successor = _moved.OLD_MODULES[old][0]
    _forget(old)
    with pytest.warns(DeprecationWarning, match=re.escape(f"import from {successor} ")):
        module = getattr(importlib.import_module(package), child)
    assert module is sys.modules[old]
    _forget(old)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(f"from {package} import {child}", {})
    assert [str(w.message).split(":")[0] for w in caught] == [f"{old} moved in heta-eval 0.2.0"]
