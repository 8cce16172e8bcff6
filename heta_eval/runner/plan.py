"""What a run is asked to do, checked before anything runs: the modes, the evaluators, the
hits asked per query, the knowledge base's modes and connection, and whether a results
folder may take the run (the same run resumes, a new mode extends it, another run is refused).
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heta_eval.io import json_text
from heta_eval.io.ids import mode_name_problem
from heta_eval.io.write import write_whole
from heta_eval.models.protocol import BenchmarkEvaluatorProtocol
from heta_eval.models.records import BenchmarkCase
from heta_eval.retrieval.metric import BeirRetrievalMetric
from heta_eval.runner.benchmark import Benchmark
from heta_eval.runner.checks import cases_fingerprint, system_identity
from heta_eval.sizes import MAX_HITS, MAX_VALUES
from heta_eval.systems.protocol import member, protocol_problem

__all__ = [
    "FolderClaim",
    "RunConfigurationError",
    "RunPlan",
    "check_knowledge_base",
    "check_mode_names",
    "claim_folder",
    "plan_run",
]


class RunConfigurationError(ValueError):
    """The run cannot start as asked (unknown mode, a results folder of another run, ...)."""


@dataclass(frozen=True)
class RunPlan:
    """A run as asked: the benchmark, its recipe (``None`` with a ready knowledge base),
    the knowledge base's name and the system under test (:func:`system_identity`), the modes,
    cases and evaluators (``retrieval``: those scored per mode in one batch), and the hits
    asked per query (``top_k``) beside the ``top_k`` the caller gave."""

    benchmark: Benchmark
    recipe: Any
    knowledge_base_name: str
    system: dict[str, Any]
    modes: tuple[str, ...]
    cases: list[BenchmarkCase]
    evaluators: tuple[BenchmarkEvaluatorProtocol, ...]
    retrieval: list[BeirRetrievalMetric]
    top_k: int
    top_k_requested: int
    knowledge_base: Any = None

    @property
    def names(self) -> list[str]:
        return [evaluator.name for evaluator in self.evaluators]

    def recipe_dump(self) -> dict[str, Any] | None:
        return self.recipe.model_dump(mode="json") if self.recipe is not None else None

    def folder_identity(self, documents: str) -> dict[str, Any]:
        """What ``run.json`` records (``documents``: their content fingerprint); a rerun
        into the folder must match it to resume."""
        # The recipe's modes only say which indexes to build: a folder of the same recipe
        # with other modes is the same system, extended.
        dump = self.recipe_dump() or {}
        recipe = {k: v for k, v in dump.items() if k not in ("modes", "rerank")} or None
        rerank = rerank_identity(self.recipe, self.knowledge_base)
        return {
            **({"rerank": rerank} if rerank is not None else {}),
            "benchmark": self.benchmark.name,
            "knowledge_base": self.knowledge_base_name,
            "system": self.system,
            "recipe": recipe,
            "evaluators": self.names,
            "top_k": self.top_k,
            "top_k_requested": self.top_k_requested,
            "cases": cases_fingerprint(self.cases),
            "documents": documents,
        }


def plan_run(
    benchmark: Benchmark,
    recipe: Any,
    knowledge_base: Any,
    knowledge_base_name: str,
    query_modes: Sequence[str],
    evaluators: Sequence[BenchmarkEvaluatorProtocol] | None,
    top_k: int,
) -> RunPlan:
    """The run asked for, or :class:`RunConfigurationError` when it cannot start."""
    if recipe is None and knowledge_base is None:
        from heta_eval.reference import Recipe

        # A benchmark may say how its protocol builds the reference (BEIR: whole documents).
        default = getattr(benchmark, "recipe", None)
        recipe = default(query_modes) if default else Recipe(modes=list(query_modes))
    if knowledge_base is not None:  # before anything runs: its first query would fail
        problem = protocol_problem(knowledge_base)
        if problem is not None:
            kind = type(knowledge_base).__name__
            raise RunConfigurationError(
                f"knowledge base {knowledge_base_name!r} ({kind}) cannot be run: {problem}"
            )
    modes = tuple(dict.fromkeys(query_modes))
    if not modes:
        raise RunConfigurationError("query_modes is empty: name at least one mode")
    check_mode_names(modes)
    cases = list(benchmark.cases())
    chosen = tuple(evaluators) if evaluators is not None else tuple(benchmark.evaluators())
    repeated = [n for n, count in Counter(e.name for e in chosen).items() if count > 1]
    if repeated:
        raise RunConfigurationError(f"evaluator names must be unique; repeated: {repeated}")
    retrieval = [e for e in chosen if isinstance(e, BeirRetrievalMetric)]
    # Every metric@k must see k documents, and one extra hit keeps a self-hit removed by
    # the metrics from costing a rank at k: the knowledge base is asked for
    # max(top_k, largest k) + 1 hits.
    asked = max([top_k, *(m.k for m in retrieval)]) + 1
    _check_size(asked, len(chosen) * len(cases))
    system = system_identity(recipe, knowledge_base, knowledge_base_name)
    return RunPlan(
        benchmark,
        recipe,
        knowledge_base_name,
        system,
        modes,
        cases,
        chosen,
        retrieval,
        asked,
        top_k,
        knowledge_base,
    )


def rerank_identity(recipe: Any, knowledge_base: Any) -> dict[str, Any] | None:
    """The second stage's record (model, depth, level, precision; ``None``: none): apart
    from the system's, so that a folder of a first stage takes its reranked modes later.

    >>> rerank_identity(None, type("Kb", (), {"rerank_identity": {"depth": 10}})())
    {'depth': 10}
    """
    if knowledge_base is not None:
        return member(knowledge_base, "rerank_identity")
    spec = getattr(recipe, "rerank", None)
    return spec.identity() if spec is not None else None


def _check_size(asked: int, values: int) -> None:
    """Refuse a run asking more hits per query, or more scores, than can be held
    (:mod:`heta_eval.sizes`)."""
    if asked - 1 > MAX_HITS:
        raise RunConfigurationError(
            f"the run would ask the knowledge base for {asked:,} hits per query (top_k and "
            f"the largest metric k, + 1); at most {MAX_HITS:,}"
        )
    if values > MAX_VALUES:
        raise RunConfigurationError(
            f"the evaluators × the cases make {values:,} scores per mode; at most "
            f"{MAX_VALUES:,}: fewer cutoffs or measures"
        )


def check_mode_names(modes: Sequence[str]) -> None:
    """Refuse a mode that is not a plain name (:func:`~heta_eval.io.ids.mode_name_problem`),
    before anything runs.

    >>> check_mode_names(["keyword_search", "bm25+rerank", "v1.2"])
    >>> check_mode_names(["../../x"])
    Traceback (most recent call last):
    ...
    heta_eval.runner.plan.RunConfigurationError: mode '../../x' is not a plain name: ...
    """
    for mode in modes:
        problem = mode_name_problem(mode)
        if problem:
            raise RunConfigurationError(problem)


async def check_knowledge_base(kb: Any, modes: Sequence[str], name: str) -> None:
    """Refuse a knowledge base without one of the modes, or a service that does not answer."""
    unknown = [mode for mode in modes if mode not in kb.modes]
    if unknown:
        raise RunConfigurationError(
            f"knowledge base {name!r} has no mode {unknown[0]!r}; its modes are {list(kb.modes)}"
        )
    check = member(kb, "check_connection")
    if check is not None:
        try:
            await check()
        except Exception as error:  # the service is down: say so before 300 failures
            raise RunConfigurationError(str(error)) from None


#: What a run writes into its folder besides run.json and runs/.
_RESULT_FILES = ("per_query.jsonl", "hits.jsonl", "summary.json", "table.md", "report.html")


@dataclass
class FolderClaim:
    """What a run records in ``run.json``, written by :meth:`write` just before its first
    result: a run that stops before it (a service that does not answer, a model that does
    not load) leaves no claim on the folder. ``modes``: every mode the folder holds."""

    path: Path
    record: dict[str, Any]
    modes: tuple[str, ...]
    pending: bool
    #: What changed from the run whose failed queries this run replaces (``""``: none).
    replaces: str = ""

    def write(self) -> None:
        if self.replaces:  # that run answered nothing: its files go, this run's come
            for name in _RESULT_FILES:
                (self.path.parent / name).unlink(missing_ok=True)
            shutil.rmtree(self.path.parent / "runs", ignore_errors=True)
            self.replaces = ""
        if self.pending:
            write_whole(self.path, json.dumps(self.record, indent=2) + "\n")
            self.pending = False


def claim_folder(
    folder: Path, identity: dict[str, Any], modes: tuple[str, ...], *, answered: bool = True
) -> FolderClaim:
    """The claim of this run on ``folder``, or a refusal when it holds another run's results.

    The same benchmark, documents, system, evaluators and cases resume; a new mode extends
    the folder (earlier modes first). A run that answered no query (``answered``: whether
    the folder's journal holds an answered one) has no claim: another run replaces its
    failed queries. Call it holding the folder's lock
    (:func:`heta_eval.runner.folder_lock.folder_lock`); nothing is written until
    :meth:`FolderClaim.write`.
    """
    path = folder / "run.json"
    earlier: list[str] = []
    if path.exists():
        try:
            previous = json_text.loads(path.read_text(encoding="utf-8"))
            earlier = list(previous.pop("modes", []))
        except (ValueError, AttributeError, TypeError) as error:
            raise RunConfigurationError(f"{path}: not a heta-eval run record ({error})") from None
        # A second stage is added to a folder, or left out of a run of its first stages only.
        if "rerank" in previous and "rerank" not in identity:
            identity = {**identity, "rerank": previous["rerank"]}
        elif "rerank" in identity and "rerank" not in previous:
            previous = {**previous, "rerank": identity["rerank"]}
        if previous != identity:
            changed = [
                _change(key, previous.get(key), identity.get(key))
                for key in sorted(set(identity) | set(previous))
                if previous.get(key) != identity.get(key)
            ]
            if not answered:
                record = {**identity, "modes": list(modes)}
                return FolderClaim(path, record, modes, True, replaces="; ".join(changed))
            raise RunConfigurationError(
                f"{folder} holds results of a different run (changed: {'; '.join(changed)})"
                "; choose another output folder, or delete this one (--fresh) to start over"
            )
    all_modes = tuple(dict.fromkeys([*earlier, *modes]))
    record = {**identity, "modes": list(all_modes)}
    return FolderClaim(path, record, all_modes, pending=list(all_modes) != earlier)


def _change(key: str, before: Any, after: Any) -> str:
    if key == "documents":
        return f"documents (content fingerprint {before} -> {after})"
    if key == "system" and isinstance(before, dict) and isinstance(after, dict):
        keys = sorted(set(before) | set(after))
        parts = [
            f"{k} {before.get(k)!r} -> {after.get(k)!r}"
            for k in keys
            if before.get(k) != after.get(k)
        ]
        return "system (" + ", ".join(parts) + ")"
    if isinstance(before, (str, int, float)) and isinstance(after, (str, int, float)):
        return f"{key} ({before!r} -> {after!r})"
    return key
