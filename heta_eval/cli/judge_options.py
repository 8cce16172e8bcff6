"""The ``--judge`` options of ``heta-eval run``: grading answers with an LLM, and its cost."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.numbers import REPEATS, SECONDS, add_number

__all__ = ["add_judge_arguments", "judge_from_args", "with_judge"]


def add_judge_arguments(parser: Any) -> None:
    """The ``--judge`` options: grading answers with an LLM, and what it costs."""
    judge = parser.add_argument_group(
        "the LLM judge (model from HETA_EVAL_LLM_MODEL / _BASE_URL / _API_KEY)"
    )
    judge.add_argument("--judge", action="store_true", help="also grade answers with LLMJudge")
    add_number(judge, "--judge-repeats", rule=REPEATS, default=1, help="judgments per case")
    judge.add_argument(
        "--judge-prices", type=Path, metavar="FILE", help="JSON: model -> USD per 1M tokens"
    )
    judge.add_argument(
        "--judge-cache", type=Path, metavar="PATH", help="SQLite cache of judge calls"
    )
    add_number(
        judge,
        "--judge-timeout",
        rule=SECONDS,
        default=30.0,
        metavar="SECONDS",
        help="seconds per judge call (default: 30)",
    )
    judge.add_argument(
        "--dry-run",
        action="store_true",
        help="with --judge: query, then count the judge calls and tokens; call no judge, "
        "write no results",
    )


def judge_from_args(args: argparse.Namespace) -> Any:
    """The ``LLMJudge`` that ``--judge`` asks for (None without it)."""
    if not args.judge:
        if args.dry_run:
            raise CliError("--dry-run estimates what the LLM judge would spend: add --judge")
        return None
    from heta_eval.llm import LLMClient, RetryPolicy
    from heta_eval.rag.judge.judge import LLMJudge

    cache = args.judge_cache if args.judge_cache else (False if args.no_cache else None)
    try:
        client = LLMClient.from_env(policy=RetryPolicy(timeout=args.judge_timeout))
        return LLMJudge(
            client,
            repeats=args.judge_repeats,
            prices=args.judge_prices,
            cache=cache,
            dry_run=args.dry_run,
        )
    except ValueError as error:
        raise CliError(str(error)) from None


def with_judge(args: argparse.Namespace, scoring: list[Any] | None, benchmark: Any) -> Any:
    """The evaluators of a run (``None``: the benchmark's own) with ``--judge``'s added."""
    judge = judge_from_args(args)
    if judge is None:
        return scoring
    return [*(scoring if scoring is not None else benchmark.evaluators()), judge]
