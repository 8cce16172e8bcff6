"""trec_eval 9.0.8's standard output, line for line.

Each line is ``"%-22s\\t%s\\t%s"``: the measure name padded to 22 characters, the query id
(``all`` for the summary), the value as ``%6.4f``, or ``%ld`` for counts, or the run tag,
or ``'relstring'`` quoted. With ``-q`` every evaluated query's lines come first (queries in
``strcmp`` order, measures in trec_eval's order, no ``runid``/``num_q``/``gm_*`` lines), then
the summary (unless ``-n``). With ``-c`` trec_eval 9.0.8 prints no line for a query missing
from the run; it only counts it in the averages.

>>> line("P_5", "all", 0.26666666666666666, integer=False)
'P_5                   \\tall\\t0.2667'
>>> line("num_ret", "301", 500.0, integer=True)
'num_ret               \\t301\\t500'
>>> line("11pt_avg", "301", math.nan, integer=False)
'11pt_avg              \\t301\\t  -nan'
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from heta_eval.trec_eval.compute import TrecEvalResult, summary_value
from heta_eval.trec_eval.options import TrecEvalOptions
from heta_eval.trec_eval.zscores import is_negative_nan

__all__ = ["line", "report_lines"]


def line(name: str, qid: str, value: float | str, *, integer: bool, zscore: bool = False) -> str:
    """One trec_eval output line (without the newline); ``zscore`` (``-Z``): ``Z`` before the
    name, every number as ``%6.4f``, and a NaN printed by its sign (a mean or standard
    deviation read as ``nan`` gives one with the sign clear)."""
    if zscore and not isinstance(value, str):
        if math.isnan(value):
            return f"Z{name:<22}\t{qid}\t{'-nan' if is_negative_nan(value) else 'nan':>6}"
        return f"Z{name:<22}\t{qid}\t{value:6.4f}"
    if isinstance(value, str):
        text = value
    elif integer:
        text = str(int(value))  # C's (long) cast truncates toward zero
    elif math.isnan(value):
        # trec_eval's NaNs come from 0/0 and the like: x86's default NaN, sign bit set, which
        # printf writes "-nan" (pytrec_eval's build returns some with the bit clear).
        text = "  -nan"
    else:
        text = f"{value:6.4f}"
    return f"{name:<22}\t{qid}\t{text}"


def report_lines(options: TrecEvalOptions, result: TrecEvalResult) -> Iterator[str]:
    """Every line trec_eval prints for ``options`` and ``result``, in its order."""
    zscore = options.zscore_file is not None
    if options.per_query:
        for qid in result.query_ids:
            values = result.values[qid]
            for measure in options.measures:
                fam = measure.family
                if not fam.per_query:
                    continue
                if fam.name == "relstring":
                    name = measure.printed_names()[0]
                    yield line(name, qid, f"'{result.relstrings[qid]}'", integer=False)
                    continue
                for key, name in zip(measure.keys(), measure.printed_names(), strict=True):
                    yield line(name, qid, values[key], integer=fam.integer, zscore=zscore)
    if not options.summary:
        return
    for measure in options.measures:
        fam = measure.family
        for key, name in zip(measure.keys(), measure.printed_names(), strict=True):
            value = summary_value(fam, key, result, options.complete)
            if value is not None:  # runid's tag is printed as it is, -Z or not
                yield line(name, "all", value, integer=fam.integer, zscore=zscore)
