"""When results folders may be paired query by query: one rule for every command that does it
(``compare``, ``report``, a CI gate) and for ``leaderboard``, which gives each dataset its own
column and so applies the rule only within one dataset name.

Each folder records its data: the dataset name (``summary.json``'s ``benchmark``), the corpus
fingerprint (its ``documents``: ``count:sha256-prefix``) and the cases fingerprint
(``run.json``'s ``cases``: queries and judgments). Folders that differ in any of them are not
comparable: :func:`comparable_folders` raises :class:`IncomparableFoldersError`, one line
naming both folders and what differs, unless the caller allows it
(``--allow-different-data``); then the output itself must say over which queries it paired
and what each folder's own mean was (:func:`pairing_note`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "ALLOW_DIFFERENT_DATA",
    "Comparability",
    "FolderData",
    "IncomparableFoldersError",
    "check_comparable",
    "comparable_folders",
    "group_members",
    "pairing_note",
]

PathLike = str | os.PathLike[str]
#: The command-line flag that compares folders of different data anyway.
ALLOW_DIFFERENT_DATA = "--allow-different-data"


class IncomparableFoldersError(ValueError):
    """Results folders of different data put side by side; one line."""


@dataclass(frozen=True)
class FolderData:
    """What a results folder records of its data (None: not recorded, an earlier heta-eval)."""

    folder: Path
    name: str
    documents: str | None
    cases: str | None

    @classmethod
    def read(cls, folder: PathLike) -> FolderData:
        """``summary.json`` names the dataset and its documents, ``run.json`` the cases."""
        path = Path(folder)
        summary, run = _read_json(path / "summary.json"), _read_json(path / "run.json")
        name = summary.get("benchmark") or summary.get("dataset") or run.get("benchmark") or ""
        documents = summary.get("documents") or run.get("documents")
        return cls(path, str(name), documents, run.get("cases"))

    def differences(self, other: FolderData) -> list[str]:
        """What differs between the data of two folders, in words (empty: nothing recorded
        differs).

        >>> a = FolderData(Path("a"), "scifact", "5183:ab", "300:cd")
        >>> a.differences(FolderData(Path("b"), "scifact-100", "2053:ef", "100:gh"))
        ... # doctest: +NORMALIZE_WHITESPACE
        ['dataset (scifact vs scifact-100)', 'corpus (5183 vs 2053 documents)',
         'cases (300 vs 100 cases)']
        """
        what = [f"dataset ({self.name} vs {other.name})"] if self.name != other.name else []
        if self.documents and other.documents and self.documents != other.documents:
            what.append(_difference("corpus", "documents", self.documents, other.documents))
        if self.cases and other.cases and self.cases != other.cases:
            what.append(_difference("cases", "cases", self.cases, other.cases))
        return what

    @property
    def fingerprinted(self) -> bool:
        return bool(self.documents and self.cases)


def group_members(folder: PathLike) -> list[Path]:
    """The results folders of a folder of sub-benchmarks (what ``heta-eval run --dataset
    cqadupstack`` writes: one folder per forum), sorted by name; empty for anything else.

    A folder is a group when it holds no ``summary.json`` and its sub-folders that do all
    hold sub-benchmarks of one dataset (``cqadupstack/android``, ``cqadupstack/english``).
    """
    path = Path(folder)
    if not path.is_dir() or (path / "summary.json").exists():
        return []
    members = sorted(child for child in path.iterdir() if (child / "summary.json").is_file())
    names = [str(_read_json(member / "summary.json").get("benchmark") or "") for member in members]
    parents = {name.partition("/")[0] for name in names if "/" in name}
    if not members or len(parents) != 1 or any("/" not in name for name in names):
        return []
    return members


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _difference(kind: str, noun: str, first: str, other: str) -> str:
    """What differs, by the counts the fingerprints hold (``count:sha256-prefix``).

    >>> _difference("corpus", "documents", "3000:ab", "5183:cd")
    'corpus (3000 vs 5183 documents)'
    >>> _difference("cases", "cases", "300:ab", "300:cd")
    'cases (300 cases each, fingerprints 300:ab vs 300:cd)'
    """
    a, b = first.partition(":")[0], other.partition(":")[0]
    if not (a.isdigit() and b.isdigit()):
        return f"{kind} (fingerprints {first} vs {other})"
    if a != b:
        return f"{kind} ({a} vs {b} {noun})"
    return f"{kind} ({a} {noun} each, fingerprints {first} vs {other})"


def _words(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


@dataclass
class Comparability:
    """Folders checked against one another: each differing pair (the first folder of the
    comparison and the other) with what differs, and the pairs that cannot be checked."""

    data: dict[Path, FolderData] = field(default_factory=dict)
    differing: list[tuple[Path, Path, list[str]]] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """One clause per differing pair: the folders and what differs."""
        out = []
        for first, other, what in self.differing:
            name = self.data[first].name
            if what[0].startswith("dataset ("):
                out.append(f"{first} and {other} differ in {_words(what)}")
            else:
                out.append(f"{first} and {other} both hold {name} but differ in {_words(what)}")
        return out

    def same_data(self, a: PathLike, b: PathLike) -> bool:
        """Whether two of the folders hold the same data, as far as they record it."""
        first, other = self.data.get(Path(a)), self.data.get(Path(b))
        return first is None or other is None or not first.differences(other)


def check_comparable(
    folders: Sequence[PathLike], *, across_datasets: bool = False
) -> Comparability:
    """Each folder's data against the first folder's (``across_datasets``: against the first
    folder of the same dataset name, for a table whose columns are datasets)."""
    result = Comparability()
    groups = {Path(folder): group_members(folder) for folder in folders}
    if any(groups.values()):  # sub-benchmarks: each against the same one of the others
        _check_groups(groups, result)
        folders = [member for folder, members in groups.items() for member in members or [folder]]
        across_datasets = True
    first: dict[str, FolderData] = {}
    for raw in dict.fromkeys(Path(folder) for folder in folders):
        data = result.data[raw] = FolderData.read(raw)
        key = data.name if across_datasets else ""
        if key not in first:
            first[key] = data
            continue
        base = first[key]
        what = base.differences(data)
        if what:
            result.differing.append((base.folder, raw, what))
            continue
        lacking = [str(d.folder) for d in (base, data) if not d.fingerprinted]
        if lacking:
            verb = "records" if len(lacking) == 1 else "record"
            result.unchecked.append(
                f"{base.folder} and {raw} both hold {data.name}, but {' and '.join(lacking)} "
                f"{verb} no corpus or cases fingerprint (written by an earlier heta-eval): "
                "whether they hold the same data cannot be checked"
            )
    return result


def _check_groups(groups: dict[Path, list[Path]], result: Comparability) -> None:
    """Folders of sub-benchmarks must hold the same ones (CQADupStack's 12 forums each)."""
    names = {folder: sorted(member.name for member in found) for folder, found in groups.items()}
    first = next(iter(groups))
    for folder in list(groups)[1:]:
        if names[folder] == names[first]:
            continue
        for each in (first, folder):
            members = groups[each]
            name = FolderData.read(members[0]).name.partition("/")[0] if members else each.name
            result.data.setdefault(each, FolderData(each, name, None, None))
        only = sorted(set(names[first]) ^ set(names[folder]))
        what = (
            f"sub-benchmarks ({len(names[first])} vs {len(names[folder])}; "
            f"{', '.join(only[:5])} in one only)"
        )
        result.differing.append((first, folder, [what]))


def comparable_folders(
    folders: Sequence[PathLike],
    *,
    allow_different_data: bool = False,
    across_datasets: bool = False,
) -> list[str]:
    """Refuse results folders of different data: different dataset names, or one name with
    another corpus or other cases (:func:`check_comparable`; ``across_datasets`` for a
    leaderboard, which compares only within a dataset name). Raises
    :class:`IncomparableFoldersError`, one line naming the folders and what differs, unless
    ``allow_different_data``; returns the warning lines to show (the differences compared
    anyway, folders that record no fingerprint and cannot be checked). The one check of
    ``compare``, ``leaderboard`` and ``report``.
    """
    checked = check_comparable(folders, across_datasets=across_datasets)
    differing = checked.lines()
    if differing and not allow_different_data:
        raise IncomparableFoldersError(
            f"{'; '.join(differing)}: their scores are not comparable "
            f"({ALLOW_DIFFERENT_DATA} compares them anyway)"
        )
    compared = [f"{line}; compared anyway ({ALLOW_DIFFERENT_DATA})" for line in differing]
    return compared + checked.unchecked


def pairing_note(
    metric: str,
    baseline: tuple[str, float | None, int],
    system: tuple[str, float | None, int],
    *,
    paired: int,
    unpaired: int,
    missing: str = "intersect",
) -> str:
    """What a comparison of folders of different data paired, and each one's own mean over
    all its queries (``(name, mean, queries)``; the mean as its results folder reports it).

    >>> pairing_note("ndcg@10", ("scifact", 0.57013, 300), ("scifact-100", 0.55104, 100),
    ...              paired=100, unpaired=200)  # doctest: +NORMALIZE_WHITESPACE
    'ndcg@10, scifact-100 vs scifact: paired over the 100 queries both scored (200 scored by
    one only, left out); their own means: scifact 0.5701 over 300 queries, scifact-100 0.5510
    over 100 queries'
    """
    over = (
        f"paired over the {paired} queries both scored ({unpaired} scored by one only, left out)"
        if missing == "intersect"
        else f"paired over the {paired} queries either scored (a query one lacks counts 0)"
    )

    def own(name: str, mean: float | None, count: int) -> str:
        value = "no mean recorded" if mean is None else f"{mean:.4f}"
        return f"{name} {value} over {count} queries"

    return (
        f"{metric}, {system[0]} vs {baseline[0]}: {over}; their own means: "
        f"{own(*baseline)}, {own(*system)}"
    )
