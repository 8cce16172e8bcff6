"""Compare systems query by query: means, paired tests, a bootstrap CI, Holm, win/tie/loss.

Every non-baseline system is compared with the baseline on every metric. Each comparison is
paired over the queries both systems scored (or, with ``missing="zero"``, over the union with
absent values counted as 0). The family for Holm's correction is all (system, metric)
comparisons of one report, corrected separately for the t-test and the permutation test.

>>> systems = {
...     "bm25": {"q1": {"ndcg@10": 0.2}, "q2": {"ndcg@10": 0.5}, "q3": {"ndcg@10": 0.1}},
...     "dense": {"q1": {"ndcg@10": 0.4}, "q2": {"ndcg@10": 0.6}, "q3": {"ndcg@10": 0.1}},
... }
>>> result = compare(systems, queries={"q1": "what is x?"})
>>> row = result.rows[0]
>>> row.system, row.baseline, round(row.diff, 3), (row.wins, row.ties, row.losses)
('dense', 'bm25', 0.1, (2, 1, 0))
>>> row.top_gains[0].qid, row.top_gains[0].query
('q1', 'what is x?')
>>> print(result.to_markdown(deltas=0).splitlines()[2][:62])
| ndcg@10 | dense | 0.2667 | 0.3667 | +0.1000 | [+0.0000, +0.2
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from heta_eval.compare import stats
from heta_eval.compare.formats import fixed, plain_data, pval, shorten, signed
from heta_eval.io.tables import Cell, CellValue, Table, latex_text, markdown_text
from heta_eval.measures.measure import canonical_metric

__all__ = ["Comparison", "MetricComparison", "QueryDelta", "compare", "compare_many"]

SystemsInput = Mapping[str, Mapping[str, Mapping[str, float]]]


@dataclass(frozen=True)
class QueryDelta:
    """One query's values under the baseline and the system, and ``delta = system - baseline``."""

    qid: str
    baseline: float
    system: float
    delta: float
    query: str | None = None


@dataclass
class MetricComparison:
    """One system against the baseline on one metric, paired over ``n`` queries."""

    metric: str
    baseline: str
    system: str
    n: int
    mean_baseline: float
    mean_system: float
    diff: float
    ci_low: float
    ci_high: float
    t_statistic: float
    p_ttest: float
    p_permutation: float
    p_ttest_holm: float = float("nan")
    p_permutation_holm: float = float("nan")
    wins: int = 0
    ties: int = 0
    losses: int = 0
    unpaired: int = 0  # queries scored by only one of the two systems (left out)
    top_gains: list[QueryDelta] = field(default_factory=list)
    top_losses: list[QueryDelta] = field(default_factory=list)

    def significant(self, alpha: float = 0.05) -> bool:
        """True when the Holm-adjusted permutation p-value is below ``alpha``."""
        return self.p_permutation_holm < alpha


@dataclass
class Comparison:
    """The result of :func:`compare`; render with ``to_markdown``, ``to_latex``, ``to_json``."""

    baseline: str
    systems: list[str]
    metrics: list[str]
    rows: list[MetricComparison]
    settings: dict[str, Any]
    #: Lines printed under the table (e.g. what a comparison of different data paired).
    notes: list[str] = field(default_factory=list)

    def row(self, system: str, metric: str) -> MetricComparison:
        """The comparison of ``system`` with the baseline on ``metric``."""
        wanted = canonical_metric(metric)
        for row in self.rows:
            if row.system == system and row.metric == wanted:
                return row
        raise KeyError(f"no comparison of {system!r} on {metric!r}")

    # -- rendering ---------------------------------------------------------------------

    def caption(self) -> str:
        """What the table's numbers are, in one paragraph: the baseline, the CI, the tests and
        their settings, the Holm family and the W/T/L tolerance (the line under
        :meth:`to_markdown`'s table and :meth:`to_latex`'s caption).

        >>> r = compare({"a": {"q1": {"ndcg@10": 0.1}}, "b": {"q1": {"ndcg@10": 0.3}}})
        >>> r.caption()[:57]
        'Baseline: a. Δ = system − baseline, paired over queries; '
        """
        s = self.settings
        level = round(100 * s["confidence"])
        return (
            f"Baseline: {self.baseline}. Δ = system − baseline, paired over queries; "
            f"{level}% paired bootstrap CI ({s['n_resamples']} resamples), two-sided paired "
            f"t-test and randomization test ({s['n_resamples']} sign flips, seed {s['seed']}); "
            f"Holm-adjusted over {len(self.rows)} comparisons; W/T/L: queries where the system "
            f"wins/ties/loses (tie tolerance {s['tie_tolerance']:g}); * Holm p (perm) < "
            f"{s['alpha']:g}."
        )

    def table(self) -> Table:
        """The comparison table (markdown's words; LaTeX's own in each cell's ``latex``)."""
        level = round(100 * self.settings["confidence"])
        header: list[CellValue] = [
            Cell("metric", latex="Metric"),
            Cell("system", latex="System"),
            Cell("baseline", latex="Baseline"),
            Cell("system mean", latex="System"),
            Cell("Δ", latex=r"$\Delta$"),
            Cell(f"{level}% CI", latex=f"{level}\\% CI"),
            Cell("p (t)", latex="$p_t$"),
            Cell("p (perm)", latex="$p_{perm}$"),
            Cell("p Holm (t)", latex="$p_t^{Holm}$"),
            Cell("p Holm (perm)", latex="$p_{perm}^{Holm}$"),
            "W/T/L",
        ]
        rows = []
        for r in self.rows:
            star = r.significant(self.settings["alpha"])
            diff = Cell(
                signed(r.diff) + ("*" if star else ""),
                latex=latex_text(signed(r.diff)) + ("$^*$" if star else ""),
            )
            rows.append(
                [
                    r.metric,
                    r.system,
                    fixed(r.mean_baseline),
                    fixed(r.mean_system),
                    diff,
                    f"[{signed(r.ci_low)}, {signed(r.ci_high)}]",
                    pval(r.p_ttest),
                    pval(r.p_permutation),
                    pval(r.p_ttest_holm),
                    pval(r.p_permutation_holm),
                    f"{r.wins}/{r.ties}/{r.losses}",
                ]
            )
        return Table(header, rows, align="llrrrcrrrrc")

    def to_markdown(self, deltas: int = 5) -> str:
        """A markdown table, then (``deltas > 0``) the queries that changed most per row."""
        table = self.table()
        lines = [Table(table.header, table.rows).markdown(), markdown_text(self.caption())]
        lines += [f"\nNote: {markdown_text(note)}" for note in self.notes]
        if deltas > 0:
            for r in self.rows:
                title = markdown_text(f"{r.metric}, {r.system} vs {r.baseline}")
                lines += ["", f"**{title}**: largest changes", ""]
                if not (r.top_gains or r.top_losses):
                    lines.append("No query changed.")
                    continue
                rows = [
                    [
                        d.qid,
                        signed(d.delta),
                        fixed(d.baseline),
                        fixed(d.system),
                        shorten(markdown_text(d.query or ""), 90),
                    ]
                    for d in [*r.top_gains[:deltas], *r.top_losses[:deltas]]
                ]
                header = ["query id", "Δ", "baseline", "system", "query"]
                lines.append(Table(header, rows).markdown().rstrip("\n"))
        return "\n".join(lines) + "\n"

    def to_latex(self) -> str:
        """A booktabs ``table`` environment (needs ``\\usepackage{booktabs}``)."""
        caption = " ".join([self.caption(), *self.notes])
        return self.table().latex(spec="llrrrcrrrrc", caption=caption)

    def to_html(self) -> str:
        """An HTML ``<table>`` with the caption (and the notes on what was paired)."""
        return self.table().html(caption=" ".join([self.caption(), *self.notes]))

    def to_dict(self) -> dict[str, Any]:
        """Plain data (NaN and infinities become ``None``), ready for ``json.dumps``."""
        return plain_data(
            {
                "baseline": self.baseline,
                "systems": self.systems,
                "metrics": self.metrics,
                "settings": self.settings,
                "comparisons": [asdict(row) for row in self.rows],
                "notes": self.notes,
            }
        )

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text (non-ASCII as it is, unless a name holds a lone
        surrogate, a file name that is not UTF-8: then every non-ASCII character escaped)."""
        text = json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(self.to_dict(), indent=indent)
        return text + "\n"


def _common_metrics(systems: SystemsInput) -> list[str]:
    # Metrics in first-seen order that every system scored on at least one query.
    per_system = []
    for per_query in systems.values():
        seen: dict[str, None] = {}
        for values in per_query.values():
            for metric in values:
                seen.setdefault(canonical_metric(metric), None)
        per_system.append(seen)
    first = list(per_system[0]) if per_system else []
    return [metric for metric in first if all(metric in seen for seen in per_system[1:])]


def _values(per_query: Mapping[str, Mapping[str, float]], metric: str) -> dict[str, float]:
    out = {}
    canonical: dict[str, str] = {}  # each distinct name parsed once, not once per query
    for qid, values in per_query.items():
        for name, value in values.items():
            if name not in canonical:
                canonical[name] = canonical_metric(name)
            if canonical[name] == metric and value is not None:
                out[str(qid)] = float(value)
    return out


def compare(
    systems: SystemsInput,
    baseline: str | None = None,
    metrics: Sequence[str] | None = None,
    *,
    queries: Mapping[str, str] | None = None,
    n_resamples: int = stats.N_RESAMPLES,
    seed: int = stats.SEED,
    confidence: float = 0.95,
    alpha: float = 0.05,
    tie_tolerance: float = 1e-9,
    top_k: int = 10,
    missing: Literal["intersect", "zero"] = "intersect",
) -> Comparison:
    """Compare every system with ``baseline`` (default: the first) on each metric.

    ``systems`` maps a system name to ``{query id: {metric: value}}``; metric names are
    matched case-insensitively (``NDCG@10`` = ``ndcg@10``). ``metrics`` defaults to those every
    system has. ``queries`` maps query ids to texts for the per-query deltas; ``top_k`` is how
    many gains and losses to keep per comparison. Every random step uses ``seed``, so reruns
    give identical numbers.
    """
    return compare_many(
        [(systems, baseline, metrics)],
        queries=queries,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        alpha=alpha,
        tie_tolerance=tie_tolerance,
        top_k=top_k,
        missing=missing,
    )[0]


def compare_many(
    families: Sequence[tuple[SystemsInput, str | None, Sequence[str] | None]],
    *,
    queries: Mapping[str, str] | None = None,
    n_resamples: int = stats.N_RESAMPLES,
    seed: int = stats.SEED,
    confidence: float = 0.95,
    alpha: float = 0.05,
    tie_tolerance: float = 1e-9,
    top_k: int = 10,
    missing: Literal["intersect", "zero"] = "intersect",
) -> list[Comparison]:
    """:func:`compare` of each ``(systems, baseline, metrics)``, each result equal to that
    call's with the same settings (Holm's family is each one's own rows), but faster:
    comparisons over the same number of queries share one set of random draws.
    """
    if missing not in ("intersect", "zero"):
        raise ValueError(f"missing must be 'intersect' or 'zero', got {missing!r}")
    if not 0 < alpha < 1:  # NaN too: a star on any difference, or on none, means nothing
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    prepared = [_prepare(systems, base, metrics, missing) for systems, base, metrics in families]
    arrays = [(a, b) for *_, paired in prepared for *_, a, b, _ in paired]
    permutations = iter(stats.permutation_tests(arrays, n_resamples=n_resamples, seed=seed))
    cis = iter(
        stats.bootstrap_cis(arrays, confidence=confidence, n_resamples=n_resamples, seed=seed)
    )
    settings = {
        "n_resamples": n_resamples,
        "seed": seed,
        "confidence": confidence,
        "alpha": alpha,
        "tie_tolerance": tie_tolerance,
        "missing": missing,
        "correction": "holm",
    }
    out = []
    for baseline, names, chosen, paired in prepared:
        rows = [
            _compare_pair(
                metric,
                baseline,
                name,
                qids,
                a,
                b,
                unpaired,
                next(permutations),
                next(cis),
                queries or {},
                tie_tolerance=tie_tolerance,
                top_k=top_k,
            )
            for metric, name, qids, a, b, unpaired in paired
        ]
        for attribute in ("p_ttest", "p_permutation"):
            adjusted = stats.holm([getattr(row, attribute) for row in rows])
            for row, value in zip(rows, adjusted, strict=True):
                setattr(row, f"{attribute}_holm", value)
        out.append(Comparison(baseline, names, chosen, rows, dict(settings)))
    return out


_Paired = tuple[str, str, list[str], np.ndarray, np.ndarray, int]


def _prepare(
    systems: SystemsInput, baseline: str | None, metrics: Sequence[str] | None, missing: str
) -> tuple[str, list[str], list[str], list[_Paired]]:
    """The baseline, the systems, the metrics, and each comparison's paired values."""
    if len(systems) < 2:
        raise ValueError(f"need at least two systems to compare, got {len(systems)}")
    names = list(systems)
    if baseline is None:
        baseline = names[0]
    if baseline not in systems:
        raise ValueError(f"baseline {baseline!r} is not one of the systems {names}")
    chosen = [canonical_metric(m) for m in metrics] if metrics else _common_metrics(systems)
    if not chosen:
        raise ValueError("the systems have no metric in common")
    paired: list[_Paired] = []
    for metric in chosen:
        base = _values(systems[baseline], metric)
        if not base:
            raise ValueError(f"baseline {baseline!r} has no values for {metric!r}")
        for name in (name for name in names if name != baseline):
            other = _values(systems[name], metric)
            if not other:
                raise ValueError(f"system {name!r} has no values for {metric!r}")
            paired.append((metric, name, *_pair(metric, baseline, name, base, other, missing)))
    return baseline, names, chosen, paired


def _pair(
    metric: str,
    baseline: str,
    system: str,
    base: Mapping[str, float],
    other: Mapping[str, float],
    missing: str,
) -> tuple[list[str], np.ndarray, np.ndarray, int]:
    """The paired queries, the baseline's and the system's values, and how many were unpaired."""
    if missing == "zero":
        qids = list(dict.fromkeys([*base, *other]))
        unpaired = 0
    else:
        qids = [qid for qid in base if qid in other]
        unpaired = len(set(base) ^ set(other))
    if not qids:
        raise ValueError(f"{baseline!r} and {system!r} share no query on {metric!r}")
    a = np.array([base.get(qid, 0.0) for qid in qids])
    b = np.array([other.get(qid, 0.0) for qid in qids])
    return qids, a, b, unpaired


def _compare_pair(
    metric: str,
    baseline: str,
    system: str,
    qids: list[str],
    a: np.ndarray,
    b: np.ndarray,
    unpaired: int,
    permutation: stats.PermutationResult,
    ci: stats.BootstrapResult,
    queries: Mapping[str, str],
    *,
    tie_tolerance: float,
    top_k: int,
) -> MetricComparison:
    ttest = stats.paired_ttest(a, b)
    wins, ties, losses = stats.win_tie_loss(a, b, tolerance=tie_tolerance)
    d = b - a
    # Stable sorts: equal deltas keep query order, so the lists are deterministic.
    order = np.argsort(-d, kind="stable")
    gains = [i for i in order if d[i] > tie_tolerance][:top_k]
    losses_order = [i for i in np.argsort(d, kind="stable") if d[i] < -tie_tolerance][:top_k]

    def delta(i: int) -> QueryDelta:
        qid = qids[i]
        return QueryDelta(qid, float(a[i]), float(b[i]), float(d[i]), queries.get(qid))

    return MetricComparison(
        metric=metric,
        baseline=baseline,
        system=system,
        n=len(qids),
        mean_baseline=float(a.mean()),
        mean_system=float(b.mean()),
        diff=float(d.mean()),
        ci_low=ci.low,
        ci_high=ci.high,
        t_statistic=ttest.statistic,
        p_ttest=ttest.pvalue,
        p_permutation=permutation.pvalue,
        wins=wins,
        ties=ties,
        losses=losses,
        unpaired=unpaired,
        top_gains=[delta(i) for i in gains],
        top_losses=[delta(i) for i in losses_order],
    )
