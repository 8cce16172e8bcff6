"""What ``heta-eval run`` prints beside each results table: the LLM judge's spending, a
dry run's estimate, the mean over sub-benchmarks (CQADupStack), and its exit status."""

from __future__ import annotations

import sys
from typing import Any

from heta_eval.io.tables import Table, markdown_text

__all__ = [
    "EXIT_BUSY",
    "EXIT_NOTHING_ANSWERED",
    "EXIT_PARTIAL",
    "dry_run_lines",
    "exit_status",
    "macro_table",
    "usage_lines",
]


def usage_lines(usage: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for name, u in usage.items():
        cost = f", ${u['cost_usd']:.4f}" if u.get("cost_usd") is not None else ""
        lines.append(
            f"{name} ({u['model']}): {u['calls']} calls, {u['cached_calls']} from the cache; "
            f"{u['prompt_tokens']} prompt + {u['completion_tokens']} completion tokens{cost}"
        )
        if u.get("mean_agreement") is not None:
            lines.append(
                f"{name} agreement over {u['repeats']} repeats: mean {u['mean_agreement']:.3f}, "
                f"unanimous {u['unanimous_cases']}/{u['repeated_cases']} cases"
            )
        lines.extend(f"{name} note: {note}" for note in u.get("notes", []))
        if u["failed"]:
            lines.append(f"{name}: {u['failed']} judgments FAILED:")
            lines.extend(
                f"  case {f['case_id']} ({f['mode']}): {f['error']}" for f in u["failures"]
            )
    return lines


def dry_run_lines(usage: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for name, u in usage.items():
        cost = (
            f", about ${u['estimated_cost_usd']:.4f}"
            if u.get("estimated_cost_usd") is not None
            else ""
        )
        lines.append(
            f"dry run, {name} ({u['model']}): would make {u['estimated_calls']} calls "
            f"(about {u['estimated_prompt_tokens']} prompt + "
            f"{u['estimated_completion_tokens']} completion tokens{cost}); "
            f"{u['cached_calls']} more are in the cache. Nothing was sent to the judge."
        )
    return lines


def macro_table(name: str, all_results: list[Any]) -> str:
    """The unweighted mean over sub-benchmarks (how CQADupStack is reported)."""
    first = all_results[0].summary
    modes = list(first.modes)
    rows = []
    for evaluator in first.evaluators:
        cells = []
        for mode in modes:
            values = [r.summary.modes[mode].metrics[evaluator].value for r in all_results]
            numeric = [v for v in values if isinstance(v, float)]
            cells.append(
                f"{sum(numeric) / len(numeric):.5f}" if len(numeric) == len(values) else "–"
            )
        rows.append([evaluator, *cells])
    table = Table(["evaluator", *modes], rows, align="l" + "r" * len(modes))
    title = markdown_text(f"## {name}: unweighted mean of {len(all_results)} sub-benchmarks")
    return f"{title}\n\n{table.markdown().rstrip()}"


#: Exit statuses of `heta-eval run` (2 is a usage or input error, as for every command).
EXIT_PARTIAL = 3
EXIT_NOTHING_ANSWERED = 4
#: ``--no-wait`` and another run holds the results folder: nothing was done; try again later.
EXIT_BUSY = 5


def exit_status(all_results: list[Any]) -> int:
    modes = [m for results in all_results for m in results.summary.modes.values()]
    reasons: dict[str, int] = {}
    for mode in modes:
        for reason, count in mode.failure_reasons.items():
            reasons[reason] = reasons.get(reason, 0) + count
    if reasons:
        failed = sum(reasons.values())
        print(f"error: {failed} queries failed; most common reasons:", file=sys.stderr)
        for reason, count in sorted(reasons.items(), key=lambda item: -item[1])[:5]:
            print(f"  {count:>6} × {reason}", file=sys.stderr)
        print("  (every error is in per_query.jsonl)", file=sys.stderr)
    if any(mode.answered == 0 and mode.cases for mode in modes):
        print(
            "error: no query was answered in some mode; its numbers mean nothing", file=sys.stderr
        )
        return EXIT_NOTHING_ANSWERED
    if any(results.partial for results in all_results):
        print(
            "warning: some queries or evaluators failed; the aggregates are partial (*): "
            "failed queries count as 0, the answered-only mean is in parentheses",
            file=sys.stderr,
        )
        return EXIT_PARTIAL
    return 0
