"""The package's shape: rooms by job, each importing only the rooms the map says; no import circles.
The tests' shape: ``tests/<room>/`` mirror the package's rooms.

The import graph is read from the source (the AST), so imports placed inside functions count
as edges too; imports under ``if TYPE_CHECKING:`` do not (they never run). A module may be
imported inside a function only when it is heavy or optional (listed in ``LAZY_TARGETS`` with
the reason), or by a command-line module (``LAZY_IMPORTERS``).
"""

from __future__ import annotations

import ast
import importlib
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "heta_eval"
TESTS = ROOT / "tests"
#: Test folders that are no room of the package: the whole project's tests (README, docs,
#: packaging, this file). ``support/`` holds the helpers and pinned data, and no tests.
PROJECT_TESTS = "project"

#: Modules that may be imported inside a function, and why.
LAZY_TARGETS = {
    "heta_eval.providers.engine": "numba: loads or compiles the metric kernels on import",
    "heta_eval.io.columnar": "numba: loads or compiles its kernels on import",
    "heta_eval.io._kernels": "numba: loads or compiles its kernels on import",
    "heta_eval.io.run_parser": "numba: loads or compiles its kernels on import",
    "heta_eval.models.records": "pydantic (0.4 s): scoring a run file builds no records",
    "heta_eval.models.query_result": "pydantic (0.4 s): scoring a run file builds no records",
    "heta_eval.reference": "bm25s and the Lucene analyzer (about 1 s): only a run that builds a kb",
    "heta_eval.encoding.onnx_int8": "onnxruntime: only the int8 precision",
    "heta_eval.encoding.openvino_int8": "openvino and nncf, an optional extra",
    "heta_eval.scale.executor": "ray, an optional extra",
    "heta_eval.scale.encode": "ray, an optional extra",
    "heta_eval.scale.shards": "ray, an optional extra",
    "heta_eval.adapters.beir": "the knowledge base (bm25s, torch) for its default recipe",
    "heta_eval.adapters.scifact_claims": "the knowledge base (bm25s, torch) for its recipe",
    "heta_eval.lucene._word_break_data": "the code point table, built on first tokenization",
}

#: Packages whose modules may import anything inside a function: each command imports what
#: it runs when it runs, so a one-shot command starts with only what it uses.
LAZY_IMPORTERS = ("heta_eval.cli",)

#: Modules whose function-level imports are not checked (none: keep it so).
UNCHECKED_IMPORTERS: set[str] = set()


def _modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package). ``adapters/`` installs as ``heta_eval.adapters``
    (``heta_eval/adapters`` links to it; rglob does not follow the link)."""
    found = {}
    sources = [*PACKAGE.rglob("*.py"), *(ROOT / "adapters").rglob("*.py")]
    for path in sources:
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[0] == "adapters":
            parts = ["heta_eval", *parts]
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        found[name] = (path, is_package)
    return found


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def _in_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return True
    return False


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known) -> set:
    """The heta_eval modules an import statement loads (the deepest that exist)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            here = module.split(".") if is_package else module.split(".")[:-1]
            here = here[: len(here) - (node.level - 1)]
            base = ".".join([*here, base] if base else here)
        names = [f"{base}.{alias.name}" for alias in node.names]
        if not all(name in known for name in names):  # some names are attributes of base
            names.append(base)
    found = set()
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name.startswith("heta_eval") and name != module:
            found.add(name)
    return found


def import_graph() -> dict[str, list[tuple[str, bool, int]]]:
    """Module -> [(imported module, inside a function, line)] over heta_eval's sources."""
    known = _modules()
    graph: dict[str, list[tuple[str, bool, int]]] = defaultdict(list)
    for module, (path, is_package) in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            if _type_checking_only(node, parents):
                continue
            lazy = _in_function(node, parents)
            for target in _targets(node, module, is_package, known):
                graph[module].append((target, lazy, node.lineno))
    return graph


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _package_of(module: str, known: dict[str, tuple[Path, bool]]) -> str:
    return module if known[module][1] else module.rpartition(".")[0]


def test_no_import_cycles():
    known = _modules()
    graph = import_graph()
    files = {module: {target for target, _, _ in graph[module]} for module in known}
    assert cycles(files) == [], "import circle between files"
    packages: dict[str, set[str]] = defaultdict(set)
    for module, targets in files.items():
        here = _package_of(module, known)
        for target in targets:
            there = _package_of(target, known)
            if there != here and not there.startswith(here + "."):  # a package uses its own
                packages[here].add(there)
    assert cycles(packages) == [], "import circle between packages"


def test_imports_inside_functions_are_only_of_heavy_modules():
    misplaced = [
        f"{module}:{line} imports {target} inside a function"
        for module, edges in sorted(import_graph().items())
        for target, lazy, line in edges
        if lazy
        and target not in LAZY_TARGETS
        and not module.startswith(LAZY_IMPORTERS)
        and module not in UNCHECKED_IMPORTERS
    ]
    assert misplaced == []


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def _room(module: str, known: dict[str, tuple[Path, bool]]) -> str:
    """A module's room as the map names it: ``io/`` (a package of heta_eval), ``config.py`` (a
    module at the top), ``__init__.py`` (heta_eval itself)."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__.py"
    if len(parts) == 2 and not known[module][1]:
        return f"{parts[1]}.py"
    return f"{parts[1]}/"


def the_map() -> dict[str, set[str] | None]:
    """docs/development.md's map: room -> the rooms it may import (None: every room)."""
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    section = text.split("## The map: rooms by job", 1)[1].split("\n## ", 1)[0]
    rooms: dict[str, set[str] | None] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        path = cells[0].strip("`").removeprefix("heta_eval/")
        may = cells[2]
        rooms[path] = None if may == "every room" else set(re.findall(r"`([^`]+)`", may))
    return rooms


def room_imports() -> dict[str, set[str]]:
    """Room -> the other rooms its modules import (inside functions too)."""
    known = _modules()
    found: dict[str, set[str]] = {_room(module, known): set() for module in known}
    for module, edges in import_graph().items():
        here = _room(module, known)
        found[here] |= {_room(target, known) for target, _, _ in edges} - {here}
    return found


def test_every_room_imports_exactly_what_the_map_says():
    declared, actual = the_map(), room_imports()
    assert sorted(actual) == sorted(declared), "a room without a row in the map, or a row too many"
    wrong = {
        room: {"not in the map": sorted(uses - may), "in the map, unused": sorted(may - uses)}
        for room, uses in actual.items()
        if (may := declared[room]) is not None and uses != may
    }
    assert wrong == {}, "docs/development.md's map and the imports differ"


def test_the_map_reader_reads_rows_and_every_room():
    rooms = the_map()
    assert rooms["io/"] == {"_runtime.py", "interrupts.py"}
    assert rooms["cli/"] is None and rooms["config.py"] == set()
    assert {"systems/", "reference/", "encoding/", "lucene/", "adapters/"} <= set(rooms)


def _lazy_packages() -> list[str]:
    """The packages whose names load on first use (``_lazy.attach``)."""
    return sorted(
        name
        for name, (path, is_package) in _modules().items()
        if is_package and "attach(__name__, _LAZY)" in path.read_text(encoding="utf-8")
    )


def _type_checking_names(path: Path) -> dict[str, str]:
    """name -> module of the ``from M import name`` lines under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for line in node.body:
                if isinstance(line, ast.ImportFrom):
                    names.update({alias.name: line.module or "" for alias in line.names})
    return names


def test_a_lazy_package_shows_editors_every_name_it_loads_on_first_use():
    """A name loaded on first use is also imported under ``if TYPE_CHECKING:`` from the very
    module its table names, so editors and type checkers see it; ``__all__`` lists each."""
    packages = _lazy_packages()
    assert {"heta_eval", "heta_eval.evaluation", "heta_eval.reference"} <= set(packages)
    known = _modules()
    for package in packages:
        module = importlib.import_module(package)
        table = {
            name: where if where.startswith("heta_eval.") else f"{package}.{where}"
            for name, where in module._LAZY.items()
        }
        assert _type_checking_names(known[package][0]) == table, package
        assert set(table) <= set(module.__all__), package


def _rooms() -> set[str]:
    """The package's rooms (its packages, ``adapters`` among them) and its public top-level
    modules (``config``, ``redaction``, ...)."""
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    modules = {path.stem for path in PACKAGE.glob("*.py") if not path.stem.startswith("_")}
    return packages | modules | {"adapters"}


def _test_files() -> list[Path]:
    return sorted(path for path in TESTS.rglob("test_*.py") if "__pycache__" not in path.parts)


def test_every_test_file_lives_in_the_folder_of_the_room_it_tests():
    rooms = _rooms() | {PROJECT_TESTS}
    misplaced = [
        str(path.relative_to(TESTS))
        for path in _test_files()
        if len(path.relative_to(TESTS).parts) != 2 or path.parent.name not in rooms
    ]
    assert misplaced == [], f"not in tests/<room>/ (a room of heta_eval, or project/): {misplaced}"
    assert not list(TESTS.glob("test_*.py")), "a test file at the top of tests/"


def test_test_files_have_unique_names():
    """pytest imports each test file by its name alone (no ``__init__.py`` in the test
    folders): two files of one name are an "import file mismatch"."""
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in _test_files():
        by_name[path.name].append(str(path.relative_to(TESTS)))
    assert [paths for paths in by_name.values() if len(paths) > 1] == []


def test_test_files_import_other_test_files_only_from_their_own_folder():
    """Only a test file's own folder is on ``sys.path`` when it is imported; what several
    folders share lives in ``tests/support/``, which imports no test file."""
    names = {path.stem: path.parent for path in _test_files()}
    wrong = []
    for path in [*_test_files(), *(TESTS / "support").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and node.module in names
                and names[node.module] != path.parent
            ):
                wrong.append(f"{path.relative_to(TESTS)}:{node.lineno} imports {node.module}")
    assert wrong == []


def test_the_room_finder_finds_the_rooms():
    assert {"lucene", "trec_eval", "adapters", "config", "redaction"} <= _rooms()
    assert not {"_runtime", "__init__", "__main__", "__pycache__", "heta_eval"} & _rooms()
