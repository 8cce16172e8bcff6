"""The ``--ray`` options shared by ``heta-eval run`` and ``heta-eval sweep``.

Ray is imported only when ``--ray`` is given.
"""

from __future__ import annotations

import argparse
from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.numbers import SHARD, add_number

__all__ = ["add_ray_arguments", "executor_from_args"]


def add_ray_arguments(group: Any) -> None:
    group.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run on Ray: 'local' starts a Ray cluster of its own in this process, 'auto' or "
        "HOST:PORT joins a running cluster (needs pip install 'heta-eval[ray]')",
    )
    add_number(
        group,
        "--ray-shard-size",
        rule=SHARD,
        default=4096,
        metavar="N",
        help="with --ray: chunks per embedding shard, the unit of resumption (default: 4096)",
    )


def executor_from_args(args: argparse.Namespace) -> Any:
    """A started :class:`~heta_eval.scale.RayExecutor` for ``--ray``, else ``None``."""
    if not getattr(args, "ray", None):
        return None
    if getattr(args, "kb_url", None):
        raise CliError("--ray builds the recipe's knowledge base on a cluster; drop --kb-url")
    from heta_eval.scale.cluster import RayUnavailableError, parse_address
    from heta_eval.scale.executor import RayExecutor

    try:
        parse_address(args.ray)
        return RayExecutor(
            args.ray, shard_size=args.ray_shard_size, program=f"heta-eval {args.command}"
        ).start()
    except (ValueError, RayUnavailableError) as error:
        raise CliError(str(error)) from None
