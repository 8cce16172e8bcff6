"""MTEB's results format: a results folder exported as MTEB results files, and MTEB results
files read back as reference rows for ``heta-eval check`` and ``leaderboard``.

An MTEB results file (``mteb`` 1.11 and later; the layout of the ``embeddings-benchmark/
results`` repository, ``results/<org>__<model>/<revision>/<Task>.json``) holds one task::

    {"dataset_revision": ..., "task_name": "SciFact", "mteb_version": ...,
     "evaluation_time": ..., "kg_co2_emissions": null,
     "scores": {"test": [{"hf_subset": "default", "languages": ["eng-Latn"],
                          "main_score": 0.64508, "ndcg_at_10": 0.64508, ...}]}}

Files written before ``mteb`` 1.11 (``mteb_dataset_name`` and ``{"test": {...}}``) are read
too. Retrieval metrics are named ``ndcg_at_10``, ``map_at_10``, ``recall_at_100``,
``precision_at_10``, ``mrr_at_10``; the main score of a retrieval task is ``ndcg_at_10``.
MTEB's numbers are BEIR's means (``EvaluateRetrieval.evaluate``), so heta-eval writes and
reads them as its ``beir`` aggregate.

>>> task_name("scifact"), task_name("cqadupstack/tex"), dataset_of("FiQA2018")
('SciFact', 'CQADupstackTexRetrieval', 'fiqa')
>>> mteb_key("ndcg@10"), metric_of("recall_at_100")
('ndcg_at_10', 'recall@100')
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from heta_eval.compare.comparability import group_members
from heta_eval.compare.loading import OWN_DATA, read_result_folder, unverified_reason
from heta_eval.data.references import Reference, dataset_key
from heta_eval.io.write import write_whole

__all__ = [
    "MTEB_FAMILIES",
    "MtebFormatError",
    "dataset_of",
    "export_mteb",
    "metric_of",
    "mteb_key",
    "mteb_references",
    "read_mteb_file",
    "task_name",
    "task_result",
]

PathLike = str | os.PathLike[str]
_FORUMS = (
    "android",
    "english",
    "gaming",
    "gis",
    "mathematica",
    "physics",
    "programmers",
    "stats",
    "tex",
    "unix",
    "webmasters",
    "wordpress",
)
#: BEIR dataset (as heta-eval names it) -> MTEB task.
TASKS: dict[str, str] = {
    "arguana": "ArguAna",
    "climate-fever": "ClimateFEVER",
    "dbpedia-entity": "DBPedia",
    "fever": "FEVER",
    "fiqa": "FiQA2018",
    "hotpotqa": "HotpotQA",
    "msmarco": "MSMARCO",
    "nfcorpus": "NFCorpus",
    "nq": "NQ",
    "quora": "QuoraRetrieval",
    "scidocs": "SCIDOCS",
    "scifact": "SciFact",
    "trec-covid": "TRECCOVID",
    "webis-touche2020": "Touche2020",
    "cqadupstack": "CQADupstackRetrieval",
    **{f"cqadupstack/{forum}": f"CQADupstack{forum.capitalize()}Retrieval" for forum in _FORUMS},
}
_DATASETS = {task.lower(): dataset for dataset, task in TASKS.items()}
#: The metric families MTEB's retrieval results name (``<family>_at_<k>``).
MTEB_FAMILIES = ("ndcg", "map", "recall", "precision", "mrr")
#: The split MTEB evaluates each task on.
_SPLITS = {"msmarco": "dev"}


class MtebFormatError(ValueError):
    """A results folder that cannot be written as MTEB's, or an MTEB file that cannot be
    read; one line naming the folder or file."""


def task_name(dataset: str) -> str | None:
    """MTEB's task for a BEIR dataset (None: not an MTEB task)."""
    return TASKS.get(dataset_key(dataset))


def dataset_of(task: str) -> str | None:
    """The BEIR dataset of an MTEB task (None: not one heta-eval knows)."""
    return _DATASETS.get(task.lower())


def mteb_key(metric: str) -> str | None:
    """MTEB's key of a heta-eval metric (``ndcg@10`` -> ``ndcg_at_10``), or None."""
    family, _, k = metric.partition("@")
    return f"{family}_at_{k}" if family in MTEB_FAMILIES and k.isdigit() else None


def metric_of(key: str) -> str | None:
    """heta-eval's metric of an MTEB key (``recall_at_100`` -> ``recall@100``), or None."""
    family, _, k = key.partition("_at_")
    return f"{family}@{k}" if family in MTEB_FAMILIES and k.isdigit() else None


def task_result(
    task: str,
    split: str,
    metrics: Mapping[str, float],
    *,
    evaluation_time: float | None = None,
    dataset_revision: str = "",
) -> dict[str, Any]:
    """One MTEB results file's content: ``metrics`` (``{heta-eval name: value}``, those
    MTEB names) under ``scores[split]``, with ``main_score`` = nDCG@10.

    >>> result = task_result("SciFact", "test", {"ndcg@10": 0.6451, "r_cap@10": 0.7})
    >>> result["scores"]["test"][0]["main_score"], sorted(result["scores"]["test"][0])
    (0.6451, ['hf_subset', 'languages', 'main_score', 'ndcg_at_10'])
    """
    scores: dict[str, Any] = {}
    for metric, value in metrics.items():
        key = mteb_key(metric)
        if key is not None:
            scores[key] = value
    if "ndcg_at_10" not in scores:
        raise MtebFormatError(f"{task}: no ndcg@10, MTEB's main score of a retrieval task")
    entry = {
        "hf_subset": "default",
        "languages": ["eng-Latn"],
        "main_score": scores["ndcg_at_10"],
        **dict(sorted(scores.items())),
    }
    return {
        "dataset_revision": dataset_revision,
        "task_name": task,
        "mteb_version": None,  # written by heta-eval, not by mteb
        "scores": {split: [entry]},
        "evaluation_time": evaluation_time,
        "kg_co2_emissions": None,
    }


def read_mteb_file(path: PathLike) -> tuple[str, dict[str, dict[str, float]]]:
    """An MTEB results file's task and ``{split: {metric key: value}}`` (the ``default``
    subset, or the only one; both formats)."""
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise MtebFormatError(f"{file}: not an MTEB results file ({error})") from None
    if not isinstance(data, dict):
        raise MtebFormatError(f"{file}: not an MTEB results file (not a JSON object)")
    if "task_name" in data and isinstance(data.get("scores"), dict):
        splits = {}
        for split, entries in data["scores"].items():
            entries = entries if isinstance(entries, list) else []
            chosen = _subset(entries, file)
            if chosen is not None:
                splits[split] = chosen
        return str(data["task_name"]), splits
    if "mteb_dataset_name" in data:  # before mteb 1.11: {split: {metric: value}}
        splits = {}
        for split, found in data.items():
            if isinstance(found, dict):
                nested = [v for v in found.values() if isinstance(v, dict)]
                entry = found.get("default") or found.get("en") or (nested[0] if nested else found)
                splits[split] = {k: v for k, v in entry.items() if _number(v)}
        return str(data["mteb_dataset_name"]), splits
    raise MtebFormatError(f"{file}: not an MTEB results file (no task_name or mteb_dataset_name)")


def _subset(entries: Sequence[Any], file: Path) -> dict[str, float] | None:
    dicts = [e for e in entries if isinstance(e, dict)]
    chosen = next((e for e in dicts if e.get("hf_subset") == "default"), None)
    if chosen is None and len(dicts) == 1:
        chosen = dicts[0]
    if chosen is None:
        return None
    return {k: v for k, v in chosen.items() if _number(v)}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _model_name(file: Path) -> str:
    """The model a results file is of: ``model_meta.json``'s name beside it, else the
    repository's folder name (``org__model/revision/Task.json``: ``org/model``)."""
    meta = file.parent / "model_meta.json"
    try:
        name = json.loads(meta.read_text(encoding="utf-8")).get("name")
        if isinstance(name, str) and name:
            return name
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        pass
    folder = file.parent.parent if file.parent.parent.name else file.parent
    return folder.name.replace("__", "/")


def _files(paths: Iterable[PathLike]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.json") if p.name != "model_meta.json")
        elif path.is_file():
            found.append(path)
        else:
            raise MtebFormatError(f"{path}: no such file or folder of MTEB results")
    return found


def mteb_references(paths: Iterable[PathLike]) -> list[Reference]:
    """Reference rows (``heta_eval.data.references.Reference``, compared with the ``beir``
    aggregate) from MTEB results files or folders of them: every BEIR task's retrieval
    metrics on its evaluation split, the system named after the model. Files of other
    tasks (classification, clustering, ...) are left out."""
    references = []
    for file in _files(paths):
        task, splits = read_mteb_file(file)
        dataset = dataset_of(task)
        if dataset is None:
            continue
        scores = splits.get(_SPLITS.get(dataset, "test")) or {}
        model = _model_name(file)
        for key, value in scores.items():
            metric = metric_of(key)
            if metric is not None:
                references.append(
                    Reference(
                        system=model,
                        dataset=dataset,
                        metric=metric,
                        value=float(value),
                        aggregate="beir",
                        source=f"MTEB results file {file} ({task})",
                    )
                )
    return references


def _mode_metrics(summary: Mapping[str, Any], mode: str, where: Path) -> dict[str, float]:
    """A mode's BEIR means, as MTEB writes them; a partial mode is refused."""
    found = summary["modes"][mode]
    if found.get("failed_queries"):
        raise MtebFormatError(
            f"{where}: {mode} has {found['failed_queries']} failed queries; its means are not "
            "the whole task's (rerun the folder to complete it)"
        )
    return {
        name: float(values["beir"])
        for name, values in found["metrics"].items()
        if values.get("kind") == "retrieval" and values.get("beir") is not None
    }


def _task_of(summary: Mapping[str, Any], where: Path, task: str | None) -> str:
    data = summary.get("data") or {}
    reason = unverified_reason(data)
    if data.get("sample") or (reason and not reason.endswith(OWN_DATA)):
        raise MtebFormatError(f"{where}: {reason}: its scores are not the MTEB task's")
    if reason and task is None:
        raise MtebFormatError(f"{where}: {reason}; name its task with --task-name")
    found = task or task_name(str(summary.get("benchmark", "")))
    if found is None:
        raise MtebFormatError(
            f"{where}: {summary.get('benchmark')} is not an MTEB task heta-eval knows; name "
            "one with --task-name"
        )
    return found


def export_mteb(
    folder: PathLike,
    output: PathLike,
    *,
    mode: str,
    model_name: str,
    revision: str = "no_revision_available",
    task: str | None = None,
) -> list[Path]:
    """Write one mode of a results folder (or of a folder of CQADupStack's forums: each
    forum's task and ``CQADupstackRetrieval``, their mean) as MTEB results files under
    ``output/<org>__<model>/<revision>/``, with ``model_meta.json`` naming the model; the
    files written. Refused: a partial mode, a sample, data that is not the dataset."""
    source = Path(folder)
    members = group_members(source) or [source]
    target = Path(output) / model_name.replace("/", "__") / revision
    results: list[tuple[str, str, dict[str, float], float | None, str]] = []
    for member in members:
        summary, _ = read_result_folder(member)
        if mode not in summary["modes"]:
            raise MtebFormatError(f"{member}: no mode {mode!r}; it has {list(summary['modes'])}")
        name = _task_of(summary, member, task if len(members) == 1 else None)
        split = (summary.get("data") or {}).get("split") or _SPLITS.get(
            dataset_key(str(summary.get("benchmark", ""))), "test"
        )
        seconds = summary["modes"][mode].get("timings", {}).get("wall_s")
        revision_of_data = f"heta-eval documents {summary.get('documents')}"
        results.append(
            (name, split, _mode_metrics(summary, mode, member), seconds, revision_of_data)
        )
    if len(members) > 1:  # MTEB's CQADupstackRetrieval: the forums' mean of each metric
        shared = set.intersection(*(set(metrics) for _, _, metrics, _, _ in results))
        mean = {m: sum(r[2][m] for r in results) / len(results) for m in sorted(shared)}
        results.append((TASKS["cqadupstack"], results[0][1], mean, None, ""))
    written = []
    for name, split, metrics, seconds, data_revision in results:
        path = target / f"{name}.json"
        content = task_result(
            name, split, metrics, evaluation_time=seconds, dataset_revision=data_revision
        )
        target.mkdir(parents=True, exist_ok=True)
        write_whole(path, json.dumps(content, indent=2) + "\n")
        written.append(path)
    meta = {"name": model_name, "revision": revision}
    write_whole(target / "model_meta.json", json.dumps(meta, indent=2) + "\n")
    return written
