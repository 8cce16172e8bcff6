"""What ``heta-eval run`` prints beside each results table: the LLM judge's spending, a
dry run's estimate, and the mean over sub-benchmarks (CQADupStack)."""

from __future__ import annotations

from typing import Any

__all__ = ["dry_run_lines", "macro_table", "usage_lines"]


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
    lines = [
        f"## {name}: unweighted mean of {len(all_results)} sub-benchmarks",
        "",
        "| evaluator | " + " | ".join(modes) + " |",
        "|---|" + "---:|" * len(modes),
    ]
    for evaluator in first.evaluators:
        cells = []
        for mode in modes:
            values = [r.summary.modes[mode].metrics[evaluator].value for r in all_results]
            numeric = [v for v in values if isinstance(v, float)]
            cells.append(
                f"{sum(numeric) / len(numeric):.5f}" if len(numeric) == len(values) else "–"
            )
        lines.append(f"| {evaluator} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
