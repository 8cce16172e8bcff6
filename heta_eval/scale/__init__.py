"""Past one machine: corpus encoding, sharded exact search and sweeps on a Ray cluster.

Nothing here imports ``ray`` at import time: ``heta-eval run`` without ``--ray`` never loads
it. Install it with the extra: ``pip install 'heta-eval[ray]'``.
"""

from heta_eval.scale.search import merge_top_k, sharded_top_k, split_rows

__all__ = ["RayExecutor", "merge_top_k", "sharded_top_k", "split_rows"]


def __getattr__(name: str):  # RayExecutor lives in a module that needs ray at run time only
    if name == "RayExecutor":
        from heta_eval.scale.executor import RayExecutor

        return RayExecutor
    raise AttributeError(name)
