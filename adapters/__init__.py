"""Benchmark adapters: turn a dataset into documents, cases and a scoring policy."""

from __future__ import annotations

import os
from typing import Any

from heta_eval.data.folders import is_folder_argument
from heta_eval.data.registry import get_dataset

__all__ = ["load_benchmark"]


def load_benchmark(
    name: str,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    split: str | None = None,
    sample: Any = None,
) -> Any:
    """The benchmark for a registered dataset name, by the adapter its registry entry names
    (``beir`` unless the entry says otherwise), or for a folder in the BEIR layout
    (``./my_dataset``). ``sample``: a :class:`~heta_eval.data.sample.SampleSpec` (BEIR
    datasets only; a ``ValueError`` for another adapter).

    >>> load_benchmark("cqadupstack").aggregate
    'mean'
    """

    if is_folder_argument(name):
        from heta_eval.adapters.beir import BeirBenchmark

        return BeirBenchmark(name, split=split, sample=sample)
    info = get_dataset(name)
    adapter = getattr(info, "adapter", None) or "beir"
    if adapter == "scifact-claims":
        if sample is not None:
            raise ValueError(f"{name} is not in the BEIR layout: --sample takes a BEIR dataset")
        from heta_eval.adapters.scifact_claims import SciFactClaimsBenchmark

        return SciFactClaimsBenchmark(data_dir=data_dir, **({"split": split} if split else {}))
    from heta_eval.adapters.beir import BeirBenchmark

    return BeirBenchmark(name, data_dir=data_dir, split=split, sample=sample)
