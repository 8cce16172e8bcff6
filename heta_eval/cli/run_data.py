"""``heta-eval run``'s options on what part of a dataset runs and how its results are cut:
``--sample N`` (a seeded quick subset of a BEIR dataset: :mod:`heta_eval.data.sample`) and
``--slice-by FIELD`` (per-slice means: :mod:`heta_eval.slices`)."""

from __future__ import annotations

import argparse
from typing import Any

from heta_eval.cli import CliError
from heta_eval.cli.numbers import SAMPLE, SEED, add_number

__all__ = ["add_sample_arguments", "add_slice_argument", "sample_spec"]


def add_sample_arguments(group: Any) -> None:
    """``--sample N``, ``--sample-seed``, ``--sample-documents``."""
    add_number(
        group,
        "--sample",
        rule=SAMPLE,
        help="run a seeded sample of N judged queries of a BEIR dataset, with every "
        "document they judge and unjudged distractors (written once under the cache; named "
        "NAME-sample-N-seed-S, never compared with the full dataset's results)",
    )
    add_number(
        group,
        "--sample-seed",
        rule=SEED,
        default=0,
        help="the sample's seed (default 0; one seed's samples nest: 50 inside 100)",
    )
    add_number(
        group,
        "--sample-documents",
        rule=SAMPLE,
        help="documents in the sample in all (default: the full corpus's documents per "
        "query, times N)",
    )


def add_slice_argument(group: Any) -> None:
    """``--slice-by FIELD`` (repeatable)."""
    group.add_argument(
        "--slice-by",
        action="append",
        default=[],
        metavar="FIELD",
        help="keep per-slice means in summary.json, the table and the report: query_length, "
        "subset (CQADupStack's forum), or a case or query metadata field (repeatable)",
    )


def sample_spec(args: argparse.Namespace) -> Any:
    """The :class:`~heta_eval.data.sample.SampleSpec` of ``--sample``, or None; the sample
    options without ``--sample``, or with ``--benchmark``, are usage errors."""
    if args.sample is None:
        if args.sample_documents is not None or args.sample_seed != 0:
            raise CliError("--sample-seed and --sample-documents go with --sample N")
        return None
    if args.benchmark:
        raise CliError("--sample takes a BEIR dataset (--dataset NAME|PATH), not --benchmark")
    from heta_eval.data.sample import SampleSpec

    return SampleSpec(args.sample, args.sample_seed, args.sample_documents)
