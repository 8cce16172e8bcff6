"""``heta-eval compare --slice-by FIELD``: the paired tests within each slice of the queries
(:mod:`heta_eval.compare.slicing`), where the slices come from, and how they are written."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from heta_eval.cli import CliError

__all__ = ["add_slice_argument", "render_slices", "slice_comparison", "slice_values"]


def add_slice_argument(parser: argparse.ArgumentParser) -> None:
    """``--slice-by FIELD``."""
    parser.add_argument(
        "--slice-by",
        metavar="FIELD",
        help="also compare within each slice of the queries: query_length, subset (a folder "
        "of sub-benchmarks: CQADupStack's forum), or a field the results folders recorded "
        "(run --slice-by FIELD)",
    )


def slice_values(field: str, systems: Sequence[Any]) -> dict[str, str]:
    """``{query id: slice}`` by ``field`` over every system's queries: what the results
    folders recorded, or for ``query_length`` the query texts."""
    from heta_eval.slices import QUERY_LENGTH, SliceError, canonical_field, length_bucket

    try:
        name = canonical_field(field)
    except SliceError as error:
        raise CliError(f"--slice-by: {error}") from None
    found: dict[str, str] = {}
    for system in systems:
        recorded = system.slices.get(name)
        if recorded is None and name == QUERY_LENGTH:
            lacking = [qid for qid in system.per_query if qid not in system.queries]
            if lacking:
                raise CliError(
                    f"--slice-by {name}: {system.name} has no text for query {lacking[0]!r} "
                    "(a run file scored with --qrels: give --dataset for the query texts)"
                )
            recorded = {qid: length_bucket(system.queries[qid]) for qid in system.per_query}
        if recorded is None:
            how = (
                f"rerun it with --slice-by {name} (it resumes: nothing is queried again)"
                if system.from_results_folder
                else "a run file carries no case metadata: compare results folders"
            )
            where = system.source or system.name
            raise CliError(f"--slice-by {name}: {where} records no {name!r} slices; {how}")
        for qid, value in recorded.items():
            found.setdefault(qid, value)
    return found


def slice_comparison(
    field: str,
    systems: Sequence[Any],
    metrics: Sequence[str],
    settings: Mapping[str, Any],
    *,
    baseline: str | None = None,
    baselines: Mapping[str, str] | None = None,
) -> Any:
    """The :class:`~heta_eval.compare.slicing.SliceComparison` of the systems by ``field``."""
    from heta_eval.compare.slicing import compare_by_slice
    from heta_eval.slices import canonical_field

    slices = slice_values(field, systems)
    per_query = {s.name: s.per_query for s in systems}
    return compare_by_slice(
        per_query,
        slices,
        field=canonical_field(field),
        baseline=baseline,
        baselines=baselines,
        metrics=metrics,
        **settings,
    )


def render_slices(sliced: Any, form: str) -> str:
    """The slices' tables after the overall one, in ``form`` (markdown, latex, html)."""
    from heta_eval.compare.formats import fixed, signed
    from heta_eval.io.tables import Table, markdown_text

    blocks = []
    for value, comparison in sliced.comparisons.items():
        queries = max((row.n for row in comparison.rows), default=0)
        title = f"{sliced.field} = {value} ({queries} queries)"
        table = comparison.table()
        if form == "latex":
            blocks.append(table.latex(spec="llrrrcrrrrc", caption=title))
        elif form == "html":
            blocks.append(table.html(caption=title))
        else:
            plain = Table(table.header, table.rows)  # as the overall table: no alignment row
            blocks.append(f"**{markdown_text(title)}**\n\n" + plain.markdown())
    rows = [
        [
            r.metric,
            r.system,
            r.baseline,
            str(r.slices),
            fixed(r.baseline_mean),
            fixed(r.system_mean),
            signed(r.diff),
        ]
        for r in sliced.macro
    ]
    header = [
        "metric",
        "system",
        "baseline",
        "slices",
        "baseline mean of slices",
        "system mean of slices",
        "Δ",
    ]
    macro = Table(header, rows, align="lllrrrr")
    caption = (
        f"Mean of the slices' means by {sliced.field} (each slice weighs alike; for "
        "CQADupStack's forums, BEIR's number). Within each slice: the tests of the table "
        "above, Holm-adjusted over that slice's comparisons."
    )
    if form == "latex":
        blocks.append(macro.latex(spec="lllrrrr", caption=caption))
    elif form == "html":
        blocks.append(macro.html(caption=caption))
    else:
        blocks.append(macro.markdown() + "\n" + markdown_text(caption) + "\n")
    for value, why in sliced.skipped.items():
        blocks.append(f"Not compared: {sliced.field} = {value}: {why}\n")
    head = "" if form != "markdown" else f"\n## By {markdown_text(sliced.field)}\n\n"
    return head + "\n".join(blocks)
