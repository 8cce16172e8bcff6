"""A trec_eval 9.0.8-compatible evaluator: ``heta-eval trec_eval [options] QRELS RUN``.

Modules: :mod:`~heta_eval.trec_eval.options` (the command line and ``-m`` requests),
:mod:`~heta_eval.trec_eval.inputs` (the two files), :mod:`~heta_eval.trec_eval.compute`
(values through pytrec_eval, trec_eval's summaries), :mod:`~heta_eval.trec_eval.output`
(its exact output lines). The measures themselves are catalogued in
:mod:`heta_eval.measures.trec_catalogue`. See docs/trec_eval.md.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "qrels").write_text("q1 0 d1 1\\nq1 0 d2 0\\n")
>>> _ = (folder / "run").write_text("q1 Q0 d2 1 0.9 demo\\nq1 Q0 d1 2 0.5 demo\\n")
>>> for text in trec_eval_lines(["-m", "P.1,2", "-mmap", folder / "qrels", folder / "run"]):
...     print(text.split("\\t"))
['map                   ', 'all', '0.5000']
['P_1                   ', 'all', '0.0000']
['P_2                   ', 'all', '0.5000']
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

from heta_eval.trec_eval.compute import TrecEvalResult, evaluate, per_query_values
from heta_eval.trec_eval.inputs import read_trec_eval_qrels, read_trec_eval_run
from heta_eval.trec_eval.options import TrecEvalOptions, TrecEvalUsageError, parse_options
from heta_eval.trec_eval.output import report_lines
from heta_eval.trec_eval.params import c_long

__all__ = [
    "TrecEvalOptions",
    "TrecEvalResult",
    "TrecEvalUsageError",
    "evaluate",
    "evaluate_options",
    "parse_options",
    "per_query_values",
    "report_lines",
    "trec_eval_lines",
]

# Families whose values are not pytrec_eval's: text, or counts this package forms itself.
_NOT_FROM_PYTREC_EVAL = ("runid", "relstring", "num_q")


def evaluate_options(options: TrecEvalOptions) -> TrecEvalResult:
    """Read the files named in ``options`` and evaluate them as trec_eval would."""
    qrels = read_trec_eval_qrels(options.qrels)
    run, tag = read_trec_eval_run(options.run)
    relstring = next((m for m in options.measures if m.family.name == "relstring"), None)
    return evaluate(
        qrels,
        run,
        tag,
        [m.pytrec_eval_spec() for m in options.measures
         if m.family.name not in _NOT_FROM_PYTREC_EVAL],
        relevance_level=options.relevance_level,
        max_per_topic=options.max_per_topic,
        judged_only=options.judged_only,
        relstring_length=c_long(relstring.values[0]) if relstring else None,
    )  # fmt: skip


def trec_eval_lines(argv: Sequence[str | os.PathLike[str]]) -> Iterator[str]:
    """The lines ``trec_eval *argv`` prints (the command's core, without error handling)."""
    options = parse_options([os.fspath(word) for word in argv])
    return report_lines(options, evaluate_options(options))
