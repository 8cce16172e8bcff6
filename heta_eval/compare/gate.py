"""A regression gate: a comparison's rows held to the conditions a CI job sets
(:class:`~heta_eval.measures.conditions.Condition`: ``nDCG@10>0.005``, ``nDCG@10>1%``,
``nDCG@10:p<0.05``), passed or failed, with one line per failed condition, a JSON verdict
and a markdown table for a CI log.

>>> from heta_eval.compare import compare
>>> result = compare({"main": {"q1": {"ndcg@10": 0.5}, "q2": {"ndcg@10": 0.7}},
...                   "pr": {"q1": {"ndcg@10": 0.4}, "q2": {"ndcg@10": 0.7}}})
>>> verdict = gate(result, [Condition.parse("nDCG@10>0.01"), Condition.parse("nDCG@10>20%")])
>>> verdict.passed, [check.failed for check in verdict.checks]
(False, [True, False])
>>> print(verdict.checks[0].line())  # doctest: +NORMALIZE_WHITESPACE
FAIL ndcg@10 > 0.01: pr 0.5500 vs main 0.6000, Δ -0.0500 (95% CI [-0.1000, +0.0000]),
p (perm, Holm) 1.0000; a drop of more than 0.01 fails
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from heta_eval.compare import stats
from heta_eval.compare.compare import Comparison, MetricComparison, SystemsInput, compare_many
from heta_eval.compare.formats import fixed, plain_data, pval, signed
from heta_eval.io.tables import Table, markdown_text
from heta_eval.measures.conditions import Condition

__all__ = [
    "EXIT_GATE_FAILED",
    "Condition",
    "GateCheck",
    "GateResult",
    "compare_against",
    "gate",
]

#: The exit status of ``heta-eval compare --fail-if-worse`` when a condition fails (the
#: status of every failed check: ``check --system``, ``datasets validate``).
EXIT_GATE_FAILED = 1


@dataclass(frozen=True)
class GateCheck:
    """One condition against one candidate: the comparison row and whether it failed."""

    condition: Condition
    row: MetricComparison
    failed: bool
    confidence: float = 0.95

    def line(self) -> str:
        """One line (names keep it one: a line break in one is a space, hidden characters
        visible): the verdict, both means, Δ with its CI and the Holm p (perm)."""
        r = self.row
        level = round(100 * self.confidence)
        return markdown_text(
            f"{'FAIL' if self.failed else 'pass'} {self.condition.label()}: {r.system} "
            f"{fixed(r.mean_system)} vs {r.baseline} {fixed(r.mean_baseline)}, Δ "
            f"{signed(r.diff)} ({level}% CI [{signed(r.ci_low)}, {signed(r.ci_high)}]), "
            f"p (perm, Holm) {pval(r.p_permutation_holm)}; {self.condition.describe()}"
        )

    def to_dict(self) -> dict[str, Any]:
        r, c = self.row, self.condition
        return {
            "condition": c.text or c.label(),
            "metric": c.metric,
            "failed": self.failed,
            "margin": c.margin,
            "margin_kind": c.kind if c.margin is not None else None,
            "allowed_drop": c.allowed_drop(r.mean_baseline),
            "alpha": c.alpha,
            "baseline": r.baseline,
            "candidate": r.system,
            "queries": r.n,
            "baseline_mean": r.mean_baseline,
            "candidate_mean": r.mean_system,
            "diff": r.diff,
            "ci": [r.ci_low, r.ci_high],
            "p_permutation": r.p_permutation,
            "p_permutation_holm": r.p_permutation_holm,
            "p_ttest": r.p_ttest,
            "p_ttest_holm": r.p_ttest_holm,
            "wins": r.wins,
            "ties": r.ties,
            "losses": r.losses,
        }


@dataclass
class GateResult:
    """Every condition checked against every candidate; ``passed`` when none failed."""

    checks: list[GateCheck]
    settings: dict[str, Any]
    #: What the comparison said about its data (folders of different data compared anyway).
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not any(check.failed for check in self.checks)

    @property
    def failed(self) -> list[GateCheck]:
        return [check for check in self.checks if check.failed]

    def exit_status(self) -> int:
        """0 when every condition held, :data:`EXIT_GATE_FAILED` otherwise."""
        return 0 if self.passed else EXIT_GATE_FAILED

    def verdict(self) -> str:
        """The last line: ``gate: passed (3 checks)`` or ``gate: FAILED (1 of 3 checks)``."""
        total = len(self.checks)
        noun = "check" if total == 1 else "checks"
        if self.passed:
            return f"gate: passed ({total} {noun})"
        return f"gate: FAILED ({len(self.failed)} of {total} {noun})"

    def lines(self) -> list[str]:
        """One line per failed condition, then the verdict."""
        return [check.line() for check in self.failed] + [self.verdict()]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--gate-json`` (NaN becomes None)."""
        return plain_data(
            {
                "passed": self.passed,
                "failed": len(self.failed),
                "checks": [check.to_dict() for check in self.checks],
                "settings": self.settings,
                "notes": self.notes,
            }
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    def to_markdown(self) -> str:
        """A markdown section for a CI log or a GitHub Actions step summary: the verdict,
        then one row per check."""
        level = round(100 * self.settings["confidence"])
        header = [
            "",
            "condition",
            "candidate",
            "baseline",
            "candidate mean",
            "baseline mean",
            "Δ",
            f"{level}% CI",
            "p (perm, Holm)",
        ]
        rows = [
            [
                "❌" if c.failed else "✅",
                c.condition.label(),
                c.row.system,
                c.row.baseline,
                fixed(c.row.mean_system),
                fixed(c.row.mean_baseline),
                signed(c.row.diff),
                f"[{signed(c.row.ci_low)}, {signed(c.row.ci_high)}]",
                pval(c.row.p_permutation_holm),
            ]
            for c in self.checks
        ]
        title = "✅ " + self.verdict() if self.passed else "❌ " + self.verdict()
        lines = [f"### heta-eval {markdown_text(title)}", "", Table(header, rows).markdown()]
        s = self.settings
        lines.append(
            markdown_text(
                f"Δ = candidate − baseline, paired over queries; {s['n_resamples']} resamples, "
                f"seed {s['seed']}; Holm over the {s['holm_family']} comparisons of the table."
            )
        )
        lines += [f"\nNote: {markdown_text(note)}" for note in self.notes]
        return "\n".join(lines) + "\n"


def gate(comparison: Comparison, conditions: Sequence[Condition]) -> GateResult:
    """Hold every non-baseline system of ``comparison`` to ``conditions``. A condition's
    metric must be among the comparison's metrics (a :class:`ValueError` otherwise)."""
    checks = []
    for condition in conditions:
        rows = [row for row in comparison.rows if row.metric == condition.metric]
        if not rows:
            raise ValueError(
                f"the gate's {condition.metric} is not among the compared metrics "
                f"({', '.join(comparison.metrics)})"
            )
        for row in rows:
            checks.append(
                GateCheck(condition, row, condition.fails(row), comparison.settings["confidence"])
            )
    settings = {**comparison.settings, "holm_family": len(comparison.rows)}
    return GateResult(checks, settings, list(comparison.notes))


def compare_against(
    systems: SystemsInput,
    baselines: Mapping[str, str],
    metrics: Sequence[str] | None = None,
    **settings: Any,
) -> Comparison:
    """Each system against its own baseline (``baselines``: ``{system: baseline}``, as a
    gate pairs each mode of a candidate folder with the same mode of the baseline folder),
    as one :class:`Comparison`: each row equal to its pair's :func:`compare` row but for
    Holm's correction, which is over all the rows. ``settings`` are :func:`compare_many`'s.

    >>> scores = {"a": {"q1": {"ndcg@10": 0.2}}, "b": {"q1": {"ndcg@10": 0.4}},
    ...           "c": {"q1": {"ndcg@10": 0.5}}, "d": {"q1": {"ndcg@10": 0.4}}}
    >>> result = compare_against(scores, {"b": "a", "d": "c"})
    >>> [(r.system, r.baseline, round(r.diff, 2)) for r in result.rows]
    [('b', 'a', 0.2), ('d', 'c', -0.1)]
    """
    if not baselines:
        raise ValueError("no system to compare: give at least one system and its baseline")
    grouped: dict[str, list[str]] = {}
    for system, baseline in baselines.items():
        for name in (system, baseline):
            if name not in systems:
                raise ValueError(f"{name!r} is not one of the systems {list(systems)}")
        grouped.setdefault(baseline, []).append(system)
    families = [
        ({name: systems[name] for name in (baseline, *others)}, baseline, metrics)
        for baseline, others in grouped.items()
    ]
    parts = compare_many(families, **settings)
    rows = [row for part in parts for row in part.rows]
    for attribute in ("p_ttest", "p_permutation"):
        adjusted = stats.holm([getattr(row, attribute) for row in rows])
        for row, value in zip(rows, adjusted, strict=True):
            setattr(row, f"{attribute}_holm", value)
    names = list(dict.fromkeys(name for part in parts for name in part.systems))
    label = ", ".join(grouped) if len(grouped) > 1 else next(iter(grouped))
    return Comparison(label, names, parts[0].metrics, rows, dict(parts[0].settings))
