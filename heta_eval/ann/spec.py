"""Which approximate index searches the vectors, and its settings: ``faiss-hnsw:M=32,efSearch=128``.

Every kind lists the settings it takes (:data:`KINDS`), each an integer in a range; a setting
not given takes the library's own default (``nlist``: from the corpus size, recorded when the
index is built). A spec is part of the recipe, so a results folder made with one index and
its settings refuses a rerun with another.

>>> spec = parse_ann("faiss-hnsw:M=32,efSearch=128")
>>> spec.kind, spec.settings
('faiss-hnsw', {'M': 32, 'efSearch': 128})
>>> spec.label
'faiss-hnsw:M=32,efSearch=128'
>>> parse_ann("faiss-hnsw:M=1")
Traceback (most recent call last):
...
ValueError: faiss-hnsw: M must be an integer from 2 to 512, got 1
>>> split_specs("faiss-flat,faiss-hnsw:M=16,efSearch=64,qdrant")
['faiss-flat', 'faiss-hnsw:M=16,efSearch=64', 'qdrant']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = [
    "DENSE_MODES",
    "KINDS",
    "AnnSpec",
    "Setting",
    "ann_mode",
    "parse_ann",
    "split_ann",
    "split_specs",
]


@dataclass(frozen=True)
class Setting:
    """An integer setting of an index: its range, and what it does."""

    name: str
    low: int
    high: int
    help: str


_LARGE = 1 << 24

#: Each kind's settings, in the order a label writes them; the extra that brings its library.
KINDS: dict[str, tuple[str, tuple[Setting, ...]]] = {
    "faiss-flat": ("faiss", ()),
    "faiss-hnsw": (
        "faiss",
        (
            Setting("M", 2, 512, "neighbours per node (default 32)"),
            Setting("efConstruction", 1, _LARGE, "candidates while building (FAISS: 40)"),
            Setting("efSearch", 1, _LARGE, "candidates while searching, at least k (FAISS: 16)"),
        ),
    ),
    "faiss-ivf": (
        "faiss",
        (
            Setting("nlist", 1, _LARGE, "lists (k-means cells; default 4 x sqrt(documents))"),
            Setting("nprobe", 1, _LARGE, "lists searched per query (FAISS: 1)"),
        ),
    ),
    "qdrant": ("qdrant", ()),
    "lancedb": ("lancedb", ()),
    "lancedb-ivfpq": (
        "lancedb",
        (
            Setting("partitions", 1, _LARGE, "IVF partitions (LanceDB: sqrt(documents))"),
            Setting(
                "sub_vectors",
                1,
                65_536,
                "PQ sub-vectors; must divide the dimension (LanceDB: dimension / 16 or / 8)",
            ),
            Setting("nprobes", 1, _LARGE, "partitions searched per query (LanceDB: 20)"),
            Setting(
                "refine",
                1,
                10_000,
                "re-rank refine x k candidates by exact distance (LanceDB: none)",
            ),
        ),
    ),
    "lancedb-hnsw": (
        "lancedb",
        (
            Setting("partitions", 1, _LARGE, "IVF partitions (LanceDB: sqrt(documents))"),
            Setting("m", 2, 512, "neighbours per node (LanceDB: 20)"),
            Setting("ef_construction", 1, _LARGE, "candidates while building (LanceDB: 300)"),
            Setting("ef", 1, _LARGE, "candidates while searching, at least k (LanceDB: 1.5 x k)"),
            Setting("nprobes", 1, _LARGE, "partitions searched per query (LanceDB: 20)"),
        ),
    ),
}

Kind = Literal[
    "faiss-flat", "faiss-hnsw", "faiss-ivf", "qdrant", "lancedb", "lancedb-ivfpq", "lancedb-hnsw"
]


class AnnSpec(BaseModel):
    """An index kind and the settings given (the others: the library's defaults)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Kind
    settings: dict[str, int] = {}

    @model_validator(mode="after")
    def _known_settings(self) -> AnnSpec:
        known = {s.name: s for s in KINDS[self.kind][1]}
        for name, value in self.settings.items():
            if name not in known:
                raise ValueError(unknown_setting(self.kind, name))
            setting = known[name]
            if isinstance(value, bool) or not setting.low <= value <= setting.high:
                raise ValueError(
                    f"{self.kind}: {name} must be an integer from "
                    f"{setting.low:,} to {setting.high:,}, got {value}"
                )
        return self

    @property
    def label(self) -> str:
        """``kind:name=value,...`` (the settings given, in the kind's order)."""
        order = [s.name for s in KINDS[self.kind][1] if s.name in self.settings]
        shown = ",".join(f"{name}={self.settings[name]}" for name in order)
        return f"{self.kind}:{shown}" if shown else self.kind

    @property
    def extra(self) -> str:
        """The optional extra that installs this kind's library."""
        return KINDS[self.kind][0]


#: The modes that search the vectors, and so go through an index.
DENSE_MODES = ("vector_search", "hybrid_search")


def ann_mode(mode: str, spec: AnnSpec | None) -> str:
    """The name a mode runs under when ``spec``'s index searches its vectors: a results
    folder says which index answered (``vector_search+faiss-hnsw``).

    >>> hnsw = parse_ann("faiss-hnsw")
    >>> ann_mode("vector_search", hnsw), ann_mode("keyword_search", hnsw)
    ('vector_search+faiss-hnsw', 'keyword_search')
    """
    return f"{mode}+{spec.kind}" if spec is not None and mode in DENSE_MODES else mode


def unknown_setting(kind: str, name: str) -> str:
    names = [s.name for s in KINDS[kind][1]]
    takes = f"it takes {', '.join(names)}" if names else "it takes no settings"
    return f"{kind}: unknown setting {name!r}; {takes}"


def split_ann(text: str) -> tuple[str, dict[str, str]]:
    """``kind:name=value,...`` as ``(kind, {name: value text})``, the kind and the names
    checked (the values are read by the caller's rule for numbers); a ``ValueError`` of one
    line otherwise."""
    kind, _, rest = text.strip().partition(":")
    kind = kind.strip()
    if kind not in KINDS:
        raise ValueError(f"unknown index {kind!r}; the indexes are {', '.join(KINDS)}")
    values: dict[str, str] = {}
    for part in (p.strip() for p in rest.split(",")) if rest.strip() else ():
        name, equals, value = (x.strip() for x in part.partition("="))
        if not equals or not name or not value:
            raise ValueError(f"{kind}: settings are name=value, comma-separated; got {part!r}")
        if name not in {s.name for s in KINDS[kind][1]}:
            raise ValueError(unknown_setting(kind, name))
        if name in values:
            raise ValueError(f"{kind}: {name} is given twice")
        values[name] = value
    return kind, values


def parse_ann(text: str) -> AnnSpec:
    """``kind:name=value,...`` as an :class:`AnnSpec` (values: decimal integers)."""
    kind, values = split_ann(text)
    settings = {}
    for name, value in values.items():
        try:
            settings[name] = int(value)
        except ValueError:
            raise ValueError(f"{kind}: {name} must be an integer, got {value}") from None
    try:
        return AnnSpec(kind=kind, settings=settings)  # type: ignore[arg-type]
    except ValueError as error:  # pydantic's: its one message, without the wrapping
        raise ValueError(_first_message(error)) from None


def split_specs(text: str) -> list[str]:
    """A comma-separated list of specs, each ``kind[:name=value,...]``: a part holding ``=``
    belongs to the spec before it (a kind's name never holds one)."""
    specs: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if "=" in part and ":" not in part and specs:
            specs[-1] += "," + part
        elif part:
            specs.append(part)
    return specs


def _first_message(error: ValueError) -> str:
    errors = getattr(error, "errors", None)
    if callable(errors):
        message = str(errors()[0]["msg"])
        return message.removeprefix("Value error, ")
    return str(error)
