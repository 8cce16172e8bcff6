"""``heta-eval compare --fail-if-worse``: the regression gate's options, its pairing of
each candidate with a baseline, and what it reports (stderr lines, JSON, markdown, the
GitHub Actions step summary)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from heta_eval.cli import CliError

__all__ = ["add_gate_arguments", "gate_baselines", "json_text", "report_gate"]


def add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """``--fail-if-worse``, ``--gate-json``, ``--gate-markdown``."""
    gate = parser.add_argument_group("regression gate")
    gate.add_argument(
        "--fail-if-worse",
        action=_ConditionAction,
        dest="conditions",
        default=[],
        metavar="CONDITION",
        help="exit 1 when a candidate is worse than the baseline (the first RESULTS): "
        "METRIC>MARGIN, METRIC>PERCENT%%, METRIC:p<ALPHA or METRIC>MARGIN:p<ALPHA (repeatable)",
    )
    gate.add_argument(
        "--gate-json", metavar="FILE", help="write the gate's verdict and every check as JSON"
    )
    gate.add_argument(
        "--gate-markdown",
        metavar="FILE",
        help="write the gate's markdown table (also added to "
        "$GITHUB_STEP_SUMMARY when that is set)",
    )


class _ConditionAction(argparse.Action):
    """Reads a ``--fail-if-worse`` condition as the command line is parsed (one line, exit
    2, before anything is loaded)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        from heta_eval.measures.conditions import Condition

        try:
            condition = Condition.parse(values)
        except ValueError as error:
            raise CliError(f"{option}: {error}") from None
        setattr(namespace, self.dest, [*getattr(namespace, self.dest), condition])


def gate_baselines(results: Sequence[str], systems: Sequence[Any]) -> dict[str, str]:
    """Each candidate's baseline: the first RESULTS's system, or where it holds several modes
    the one of the candidate's mode (a candidate of a mode it lacks is refused)."""
    first = str(Path(results[0]))
    base = [s for s in systems if s.source == first] or [systems[0]]
    candidates = [s for s in systems if s not in base]
    if not candidates:
        raise CliError(
            f"the gate needs a candidate beside the baseline {results[0]}: give the "
            "results to check after it"
        )
    if len(base) == 1:
        return {s.name: base[0].name for s in candidates}
    by_mode = {s.mode: s.name for s in base}
    pairs = {}
    for candidate in candidates:
        if candidate.mode is None:
            raise CliError(
                f"{candidate.name} is a run file and the baseline {results[0]} holds several "
                f"modes ({', '.join(map(str, by_mode))}): choose one with --mode"
            )
        if candidate.mode not in by_mode:
            raise CliError(
                f"{candidate.name}: the baseline {results[0]} holds no {candidate.mode!r} mode "
                f"(it holds {', '.join(map(str, by_mode))}); choose modes with --mode"
            )
        pairs[candidate.name] = by_mode[candidate.mode]
    return pairs


def report_gate(verdict: Any, json_file: str | None, markdown_file: str | None) -> int:
    """The gate's lines on stderr, its JSON and markdown where asked (the markdown also
    added to ``$GITHUB_STEP_SUMMARY``, a GitHub Actions job's summary); its exit status."""

    from heta_eval.io.write import write_whole

    for line in verdict.lines():
        print(line, file=sys.stderr)
    outputs = [(json_file, verdict.to_json()), (markdown_file, verdict.to_markdown())]
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:  # GitHub's convention: each step appends its own section
        try:
            earlier = Path(summary).read_text(encoding="utf-8")
        except FileNotFoundError:
            earlier = ""
        except (OSError, UnicodeDecodeError) as error:
            raise CliError(f"$GITHUB_STEP_SUMMARY {summary}: {error}") from None
        outputs.append((summary, earlier + ("\n" if earlier else "") + verdict.to_markdown()))
    for path, text in outputs:
        if path:
            try:
                write_whole(path, text)
            except OSError as error:
                raise CliError(f"{path}: {error.strerror or error}") from None
    return verdict.exit_status()


def json_text(data: Any) -> str:
    """``data`` as JSON text, non-ASCII as it is unless a name holds a lone surrogate (a file
    name that is not UTF-8): then every non-ASCII character escaped."""
    import json

    from heta_eval.compare.formats import plain_data

    data = plain_data(data)
    text = json.dumps(data, indent=2, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, indent=2)
    return text + "\n"
