"""A trec_eval 9.0.8-compatible evaluator: ``heta-eval trec_eval [options] QRELS RUN``.

Modules: :mod:`~heta_eval.trec_eval.options` (the command line and ``-m`` requests),
:mod:`~heta_eval.trec_eval.drop_in` (the files read and evaluated),
:mod:`~heta_eval.trec_eval.inputs` (the two files), :mod:`~heta_eval.trec_eval.compute`
(values through pytrec_eval, trec_eval's summaries), :mod:`~heta_eval.trec_eval.fast`
(large runs read into arrays, the compiled engine), :mod:`~heta_eval.trec_eval.output`
(its exact output lines), :mod:`~heta_eval.trec_eval.utility` (``-N``),
:mod:`~heta_eval.trec_eval.zscores` (``-Z``), :mod:`~heta_eval.trec_eval.judgment_groups`
(``-R qrels_jg``), :mod:`~heta_eval.trec_eval.preferences` (``-R prefs``, ``qrels_prefs``).
The measures themselves are catalogued in
:mod:`heta_eval.measures.trec_catalogue`. See docs/trec_eval.md.

>>> import tempfile, pathlib
>>> from heta_eval.trec_eval import trec_eval_lines
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

from typing import TYPE_CHECKING

from heta_eval._lazy import attach

# Names load on first use (PEP 562): the command's options, help and usage errors are read
# without numba and numpy, which the evaluation (``drop_in``) imports.
if TYPE_CHECKING:  # what editors and type checkers read; _LAZY is what runs
    from heta_eval.trec_eval.compute import TrecEvalResult, evaluate, per_query_values
    from heta_eval.trec_eval.drop_in import evaluate_options, trec_eval_lines
    from heta_eval.trec_eval.options import TrecEvalOptions, TrecEvalUsageError, parse_options
    from heta_eval.trec_eval.output import report_lines


_LAZY = {
    "TrecEvalOptions": "options",
    "TrecEvalResult": "compute",
    "TrecEvalUsageError": "options",
    "evaluate": "compute",
    "evaluate_options": "drop_in",
    "parse_options": "options",
    "per_query_values": "compute",
    "report_lines": "output",
    "trec_eval_lines": "drop_in",
}

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
__getattr__, __dir__ = attach(__name__, _LAZY)
