"""Turning result folders and TREC runs into per-query scores for comparison.

A *system* is one (result folder, mode) pair, or one TREC run file scored against qrels. Each
becomes a :class:`SystemScores`: per-query metric values keyed by canonical metric names
(``ndcg@10``, ``recall@100``, ``map@10``, ``precision@10``, ``mrr@10``, ``evidence_recall@5``),
the aggregates (``value``/``beir``/``strict``) and the query texts when known.

Result folder layout (written by ``heta-eval run``): ``summary.json`` with
``{"benchmark": NAME, "modes": {MODE: {"metrics": {NAME: {"value", "beir", "strict"}}}}}`` and
``per_query.jsonl`` with one ``{"case_id", "query", "mode", "scores": {NAME: {"value",
"skipped", ...}}}`` per line.

Metric names are compared as :func:`heta_eval.measures.measure.canonical_metric` spells them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heta_eval.compare.comparability import (
    ALLOW_DIFFERENT_DATA,
    IncomparableFoldersError,
    comparable_folders,
    group_members,
)
from heta_eval.evaluation import evaluate_run
from heta_eval.io.trec import read_run
from heta_eval.measures.measure import (
    canonical_metric,
    legacy_measure,
    measure_key,
    parse_measure,
)
from heta_eval.runner.results import load_results

__all__ = [
    "ALLOW_DIFFERENT_DATA",
    "IncomparableFoldersError",
    "SystemScores",
    "comparable_folders",
    "group_members",
    "is_result_folder",
    "load_group_folder",
    "load_result_folder",
    "load_systems",
    "load_trec_system",
    "read_result_folder",
    "unverified_reason",
]

PathLike = str | os.PathLike[str]
#: How :attr:`SystemScores.unverified` ends for a dataset that is not registered at all.
OWN_DATA = "a dataset of your own"


@dataclass
class SystemScores:
    """One system's per-query values (``{qid: {metric: value}}``) and aggregates."""

    name: str
    per_query: dict[str, dict[str, float]]
    aggregates: dict[str, dict[str, float | None]] = field(default_factory=dict)
    queries: dict[str, str] = field(default_factory=dict)
    dataset: str | None = None
    mode: str | None = None
    source: str | None = None
    #: Why published reference numbers do not apply (scored on a folder that is not the
    #: registered dataset), or None.
    unverified: str | None = None
    #: ``{field: {query id: slice}}`` the results folder recorded (``--slice-by``); a folder
    #: of sub-benchmarks adds ``subset`` (CQADupStack's forum).
    slices: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def from_results_folder(self) -> bool:
        """A results folder's mode (``source`` is the folder), not a TREC run file."""
        return self.source is not None

    def aggregate(self, metric: str, kind: str = "value") -> float | None:
        """The ``kind`` (``value``, ``beir`` or ``strict``) aggregate of ``metric``, if known."""
        values = self.aggregates.get(canonical_metric(metric), {})
        value = values.get(kind)
        return None if value is None else float(value)


def is_result_folder(path: PathLike) -> bool:
    """True for a folder written by the runner (it holds ``summary.json``)."""
    return Path(path).is_dir() and (Path(path) / "summary.json").is_file()


def read_result_folder(path: PathLike) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ``summary.json`` and ``per_query.jsonl`` records of a result folder, as plain dicts,
    read (and validated) by the runner's own :func:`heta_eval.runner.load_results`."""
    folder = Path(path)
    if not (folder / "summary.json").is_file():
        raise FileNotFoundError(f"{folder} is not a result folder: no summary.json")
    results = load_results(folder)
    summary = results.summary.model_dump(mode="json")
    return summary, [record.model_dump(mode="json") for record in results.records]


def _score_value(score: Any) -> float | None:
    # A score is {"value", "skipped", ...} or a bare number; skipped/None is "not measured".
    if isinstance(score, Mapping):
        if score.get("skipped"):
            return None
        score = score.get("value")
    if not isinstance(score, int | float):  # strings (categorical scores) are not compared
        return None
    return float(score)  # booleans (pass/fail evaluators) become 1.0 / 0.0


def load_result_folder(path: PathLike, modes: Iterable[str] | None = None) -> list[SystemScores]:
    """One :class:`SystemScores` per mode of a result folder (optionally only ``modes``).

    With one mode the system is named after the folder, otherwise ``folder:mode``.
    """
    folder = Path(path)
    summary, rows = read_result_folder(folder)
    summary_modes: Mapping[str, Any] = summary.get("modes") or {}
    found = list(summary_modes) or sorted({str(row.get("mode")) for row in rows})
    wanted = list(modes) if modes else found
    chosen = [mode for mode in found if mode in wanted]
    if not chosen:
        raise ValueError(f"{folder}: no mode among {wanted}; the folder has {found}")
    dataset = summary.get("benchmark") or summary.get("dataset")
    unverified = unverified_reason(summary.get("data") or {})
    systems = []
    for mode in chosen:
        aggregates = {
            canonical_metric(name): _full_precision(values)
            for name, values in (summary_modes.get(mode, {}).get("metrics") or {}).items()
            if isinstance(values, Mapping)
        }
        per_query: dict[str, dict[str, float]] = {}
        queries: dict[str, str] = {}
        for row in rows:
            if row.get("mode", mode) != mode:
                continue
            qid = str(row.get("case_id"))
            if isinstance(row.get("query"), str):
                queries[qid] = row["query"]
            values = per_query.setdefault(qid, {})
            for name, score in (row.get("scores") or {}).items():
                value = _score_value(score)
                if value is not None:
                    values[canonical_metric(name)] = value
        name = folder.resolve().name if len(chosen) == 1 else f"{folder.resolve().name}:{mode}"
        systems.append(
            SystemScores(
                name=name,
                per_query=per_query,
                aggregates=aggregates,
                queries=queries,
                dataset=dataset,
                mode=mode,
                source=str(folder),
                unverified=unverified,
                slices={
                    key: dict(recorded.get("cases") or {})
                    for key, recorded in (summary.get("slices") or {}).items()
                },
            )
        )
    return systems


def load_group_folder(path: PathLike, modes: Iterable[str] | None = None) -> list[SystemScores]:
    """One :class:`SystemScores` per mode of a folder of sub-benchmarks' results folders
    (:func:`~heta_eval.compare.comparability.group_members`: CQADupStack's forums): every
    forum's queries as ``forum/query id``, the slice ``subset`` naming each one's forum, and
    as aggregates the unweighted mean of the forums' (the number BEIR reports).
    """
    folder = Path(path)
    members = group_members(folder)
    if not members:
        raise ValueError(f"{folder}: not a folder of sub-benchmarks' results folders")
    parts = {member.name: load_result_folder(member, modes) for member in members}
    found = [[s.mode for s in systems] for systems in parts.values()]
    if any(modes_found != found[0] for modes_found in found):
        lacking = [m for m, f in zip(parts, found, strict=True) if f != found[0]]
        raise ValueError(f"{folder}: {', '.join(lacking)} hold other modes than {members[0].name}")
    systems = []
    for index, mode in enumerate(found[0]):
        chosen = {sub: systems_of[index] for sub, systems_of in parts.items()}
        first = next(iter(chosen.values()))
        merged = SystemScores(
            name=folder.resolve().name if len(found[0]) == 1 else f"{folder.resolve().name}:{mode}",
            per_query={},
            aggregates=_mean_aggregates([s.aggregates for s in chosen.values()]),
            dataset=(first.dataset or "").partition("/")[0] or None,
            mode=mode,
            source=str(folder),
            unverified=next((s.unverified for s in chosen.values() if s.unverified), None),
        )
        merged.slices["subset"] = {}
        for sub, system in chosen.items():
            for qid, values in system.per_query.items():
                merged.per_query[f"{sub}/{qid}"] = values
                merged.slices["subset"][f"{sub}/{qid}"] = sub
            merged.queries.update({f"{sub}/{qid}": text for qid, text in system.queries.items()})
            for name, cases in system.slices.items():
                recorded = merged.slices.setdefault(name, {})
                recorded.update({f"{sub}/{qid}": value for qid, value in cases.items()})
        systems.append(merged)
    return systems


def _mean_aggregates(
    parts: Sequence[Mapping[str, Mapping[str, float | None]]],
) -> dict[str, dict[str, float | None]]:
    """The unweighted mean of each aggregate over the parts (None where one lacks it)."""
    out: dict[str, dict[str, float | None]] = {}
    for metric in parts[0]:
        for kind in parts[0][metric]:
            values = [part.get(metric, {}).get(kind) for part in parts]
            found = [float(v) for v in values if v is not None]
            out.setdefault(metric, {})[kind] = (
                sum(found) / len(found) if len(found) == len(values) else None
            )
    return out


def _full_precision(values: Mapping[str, Any]) -> dict[str, Any]:
    """A metric's ``value``, ``beir`` and ``strict`` means at full precision where the
    summary keeps them (``*_unrounded``): a table then rounds once, from the mean itself,
    not from its 5-decimal rounding (0.7179538 -> 0.71795 -> 0.7179 instead of 0.7180)."""
    exact = {}
    for kind in ("beir", "strict"):
        if kind in values:
            unrounded = values.get(f"{kind}_unrounded")
            exact[kind] = values[kind] if unrounded is None else unrounded
    if "value" in values:
        # A retrieval metric's headline is its strict mean (a failed query counts 0).
        strict = values.get("kind") == "retrieval" and values["value"] == values.get("strict")
        exact["value"] = exact["strict"] if strict else values["value"]
    return exact


def unverified_reason(data: Mapping[str, Any]) -> str | None:
    """Why scores on the data a results folder records (``summary.json``'s ``data``, or
    :meth:`~heta_eval.data.folders.ResolvedDataset.record`) are not its registered
    dataset's, or None.

    >>> unverified_reason({"name": "x", "folder": "/d/x", "registered": False})
    'scored on /d/x, a dataset of your own'
    """
    if not data:
        return None  # written before the data was recorded, or not a dataset
    name, folder = data.get("name"), data.get("folder")
    if sample := data.get("sample"):
        return (
            f"scored on {folder}, a sample of {sample.get('of')} ({sample.get('queries')} of "
            f"{sample.get('of_queries')} queries, seed {sample.get('seed')}): {OWN_DATA}"
        )
    if data.get("differences"):
        return f"scored on {folder}, not the registered {name}: {'; '.join(data['differences'])}"
    if not data.get("registered", True):
        return f"scored on {folder}, {OWN_DATA}"
    return None


def load_trec_system(
    run: Mapping[str, Mapping[str, float]],
    qrels: Mapping[str, Mapping[str, int]],
    metrics: Sequence[str],
    *,
    name: str,
    queries: Mapping[str, str] | None = None,
    dataset: str | None = None,
    ignore_identical_ids: bool = True,
) -> SystemScores:
    """Score a document-level run with BEIR semantics, per query over every judged query.

    Per-query values follow ``trec_eval -c``: a judged query the run lacks scores 0 on every
    metric, so paired tests compare the same query set for every system.

    >>> s = load_trec_system({"q1": {"d1": 1.0}}, {"q1": {"d1": 1}, "q2": {"d2": 1}},
    ...                      ["ndcg@10"], name="demo")
    >>> s.per_query, s.aggregate("ndcg@10", "beir"), s.aggregate("ndcg@10", "strict")
    ({'q1': {'ndcg@10': 1.0}, 'q2': {'ndcg@10': 0.0}}, 1.0, 0.5)
    """
    parsed = [parse_measure(metric) for metric in metrics]
    kinds = sorted({metric for metric, _ in parsed})
    ks = sorted({k for _, k in parsed})
    evaluation = evaluate_run(
        qrels, run, k_values=ks, metrics=kinds, ignore_identical_ids=ignore_identical_ids
    )
    judged = [qid for qid, docs in qrels.items() if docs]
    per_query: dict[str, dict[str, float]] = {}
    aggregates: dict[str, dict[str, float | None]] = {}
    for metric, k in parsed:
        key = measure_key(metric, k)
        canonical = legacy_measure(metric, k).evaluator_name or key
        for qid in judged:
            value = evaluation.per_query.get(qid, {}).get(key, 0.0)
            per_query.setdefault(qid, {})[canonical] = float(value)
        aggregate = evaluation.aggregates[key]
        aggregates[canonical] = {  # full precision: a table rounds once
            "value": aggregate.beir_unrounded,
            "beir": aggregate.beir_unrounded,
            "strict": aggregate.strict_unrounded,
        }
    texts = {qid: queries[qid] for qid in judged if queries and qid in queries}
    return SystemScores(name, per_query, aggregates, texts, dataset=dataset)


def _unique_names(systems: list[SystemScores]) -> None:
    # Two folders with the same name (results/a/scifact, results/b/scifact): add a suffix.
    seen: dict[str, int] = {}
    for system in systems:
        count = seen.get(system.name, 0)
        seen[system.name] = count + 1
        if count:
            system.name = f"{system.name}#{count + 1}"


def load_systems(
    paths: Sequence[PathLike],
    *,
    modes: Iterable[str] | None = None,
    qrels: Mapping[str, Mapping[str, int]] | None = None,
    queries: Mapping[str, str] | None = None,
    metrics: Sequence[str] = ("ndcg@10", "recall@100"),
    dataset: str | None = None,
    unverified: str | None = None,
    ignore_identical_ids: bool = True,
) -> list[SystemScores]:
    """Systems from result folders and/or TREC run files (the latter need ``qrels``).

    ``metrics`` are the ones computed for TREC runs; result folders carry their own.
    ``dataset`` and ``unverified`` describe the qrels' dataset for the TREC runs (see
    :attr:`SystemScores.unverified`). Whether the folders may be compared is
    :func:`~heta_eval.compare.comparability.comparable_folders`'s to say (the caller's:
    checking one folder against published numbers compares nothing).
    """
    systems: list[SystemScores] = []
    mode_list = list(modes) if modes else None
    for raw in paths:
        path = Path(raw)
        if is_result_folder(path):
            systems.extend(load_result_folder(path, mode_list))
        elif group_members(path):
            systems.extend(load_group_folder(path, mode_list))
        elif path.is_file():
            if qrels is None:
                raise ValueError(f"{path} is a run file: give qrels (--qrels FILE or --dataset)")
            systems.append(
                load_trec_system(
                    read_run(path, duplicates="last"),
                    qrels,
                    metrics,
                    name=path.name.removesuffix(".trec").removesuffix(".txt"),
                    queries=queries,
                    dataset=dataset,
                    ignore_identical_ids=ignore_identical_ids,
                )
            )
            systems[-1].unverified = unverified
        else:
            raise FileNotFoundError(f"{path}: neither a result folder (summary.json) nor a file")
    _unique_names(systems)
    return systems
