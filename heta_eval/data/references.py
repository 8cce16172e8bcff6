"""Reference scores (Pyserini BM25, MTEB all-MiniLM-L6-v2, BEIR paper BM25) and checks.

The numbers live in ``references.json`` next to this module, each system with its public
source (Pyserini's 2CR table, MTEB's results repository, the BEIR paper). A check classifies
an observed score the way Pyserini's 2CR does, with this project's tolerances:

* ``OK``: ``|Δ| <= 1e-4`` (the references have 4 decimals);
* ``OKish``: ``|Δ| <= 0.01``, or the observed score is higher than the reference;
* ``FAIL``: otherwise.

>>> [(r.status, r.expected) for r in check({"scifact": {"ndcg@10": 0.6789}}, "bm25-flat")]
[('OK', 0.6789)]
>>> check({"scifact": {"ndcg@10": 0.60}}, "bm25-multifield")[0].status
'FAIL'
>>> check({"scifact": {"NDCG@10": 0.70}}, "bm25-flat")[0].status  # higher is never a failure
'OKish'
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from heta_eval.measures.measure import canonical_metric

__all__ = [
    "OKISH_TOLERANCE",
    "OK_TOLERANCE",
    "CheckResult",
    "Reference",
    "check",
    "classify",
    "dataset_key",
    "load_references",
    "reference_systems",
]

OK_TOLERANCE = 1e-4
OKISH_TOLERANCE = 0.01
_PATH = Path(str(resources.files(__package__).joinpath("references.json")))
# Float slack so 0.67890000001 vs 0.6789 is not a failure of the 1e-4 rule.
_SLACK = 1e-12

# Other spellings of BEIR dataset names: MTEB task names, Pyserini keys, ir_datasets ids.
_ALIASES = {
    "touche2020": "webis-touche2020",
    "touche": "webis-touche2020",
    "webis-touche2020-v2": "webis-touche2020",
    "dbpedia": "dbpedia-entity",
    "treccovid": "trec-covid",
    "trec_covid": "trec-covid",
    "fiqa2018": "fiqa",
    "quoraretrieval": "quora",
    "climatefever": "climate-fever",
    "cqadupstackretrieval": "cqadupstack",
    "msmarco-dev": "msmarco",
    "signal-1m": "signal1m",
    "trecnews": "trec-news",
}


@dataclass(frozen=True)
class Reference:
    """One reference number: ``system`` scored ``value`` on ``dataset``/``metric``."""

    system: str
    dataset: str
    metric: str
    value: float
    aggregate: str  # which of our aggregates it corresponds to: "strict" or "beir"
    source: str
    note: str | None = None


@dataclass(frozen=True)
class CheckResult:
    """An observed score against a reference: ``status`` is ``OK``, ``OKish`` or ``FAIL``."""

    dataset: str
    metric: str
    system: str
    observed: float
    expected: float
    delta: float
    status: str
    source: str
    aggregate: str

    def line(self) -> str:
        """A one-line, Pyserini-like report."""
        text = (
            f"[{self.status}] {self.dataset} {self.metric} = {self.observed:.4f} "
            f"({self.aggregate}); {self.system} reference {self.expected:.4f} "
            f"(Δ {self.delta:+.4f})"
        )
        return f"{text} — {self.source}"


def dataset_key(name: str) -> str:
    """A canonical BEIR dataset name.

    >>> dataset_key("beir-v1.0.0-scifact-test"), dataset_key("BEIR/TREC-COVID")
    ('scifact', 'trec-covid')
    >>> dataset_key("DBPedia")
    'dbpedia-entity'
    """
    key = name.strip().lower()
    for prefix in ("beir-v1.0.0-", "beir/", "beir_"):
        key = key.removeprefix(prefix)
    for suffix in ("-test", ".test", "/test"):
        key = key.removesuffix(suffix)
    if key.startswith(("cqadupstack.", "cqadupstack-")):  # Pyserini's sub-forum spelling
        key = "cqadupstack/" + key[len("cqadupstack.") :]
    return _ALIASES.get(key, key)


@cache
def _raw(path: str) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def load_references(path: str | Path | None = None) -> list[Reference]:
    """Every reference in ``references.json`` (or another file of the same layout)."""
    data = _raw(str(path or _PATH))
    references = []
    for system, entry in data["systems"].items():
        for dataset, scores in entry["scores"].items():
            note = scores.get("note")
            for metric, value in scores.items():
                if metric == "note" or value is None:
                    continue
                references.append(
                    Reference(
                        system=system,
                        dataset=dataset,
                        metric=metric,
                        value=float(value),
                        aggregate=entry.get("aggregate", "beir"),
                        source=entry["source"] + (f" ({note})" if note else ""),
                        note=note,
                    )
                )
    return references


def reference_systems(path: str | Path | None = None) -> dict[str, str]:
    """Reference system names and their labels.

    >>> sorted(reference_systems())
    ['all-MiniLM-L6-v2', 'bm25-beir-paper', 'bm25-flat', 'bm25-multifield']
    """
    data = _raw(str(path or _PATH))
    return {name: entry.get("label", name) for name, entry in data["systems"].items()}


def classify(observed: float, expected: float) -> str:
    """``OK``, ``OKish`` or ``FAIL`` for an observed score against a reference.

    >>> classify(0.32545, 0.3254), classify(0.3200, 0.3254), classify(0.30, 0.3254)
    ('OK', 'OKish', 'FAIL')
    """
    delta = abs(observed - expected)
    if delta <= OK_TOLERANCE + _SLACK:
        return "OK"
    if delta <= OKISH_TOLERANCE + _SLACK or observed > expected:
        return "OKish"
    return "FAIL"


def _pick(value: float | Mapping[str, float | None], aggregate: str) -> tuple[float | None, str]:
    # An observation is a number, or {"value", "beir", "strict"} from a result summary; use
    # the aggregate the reference was computed with when we have it.
    if isinstance(value, Mapping):
        for kind in (aggregate, "value", "beir", "strict"):
            chosen = value.get(kind)
            if chosen is not None:
                return float(chosen), kind
        return None, aggregate
    return float(value), "value"


def check(
    observed: Mapping[str, Mapping[str, float | Mapping[str, float | None]]],
    system: str | None = None,
    *,
    references: list[Reference] | None = None,
) -> list[CheckResult]:
    """Check ``{dataset: {metric: score}}`` against the references of ``system`` (or all).

    A score may be a number or a mapping ``{"beir": x, "strict": y, "value": z}``; then the
    aggregate matching the reference's protocol is used (Pyserini: ``strict``, i.e.
    ``trec_eval -c``; MTEB and the BEIR paper: ``beir``). Datasets and metrics without a
    reference are left out.
    """
    refs = references if references is not None else load_references()
    if system is not None:
        known = sorted({ref.system for ref in refs})
        if system not in known:
            raise ValueError(f"unknown reference system {system!r}; known: {', '.join(known)}")
        refs = [ref for ref in refs if ref.system == system]
    index: dict[tuple[str, str], list[Reference]] = {}
    for ref in refs:
        index.setdefault((ref.dataset, ref.metric), []).append(ref)
    results = []
    for dataset, metrics in observed.items():
        for metric, value in metrics.items():
            key = (dataset_key(dataset), canonical_metric(metric))
            for ref in index.get(key, []):
                score, kind = _pick(value, ref.aggregate)
                if score is None or math.isnan(score):
                    continue
                results.append(
                    CheckResult(
                        dataset=key[0],
                        metric=key[1],
                        system=ref.system,
                        observed=score,
                        expected=ref.value,
                        delta=score - ref.value,
                        status=classify(score, ref.value),
                        source=ref.source,
                        aggregate=kind,
                    )
                )
    return results
