"""TREC and BEIR files in and out, under one name: the readers of :mod:`heta_eval.io.run` and
:mod:`heta_eval.io.qrels`, the grammar of :mod:`heta_eval.io.grammar` and the writers of
:mod:`heta_eval.io.write` (this module only gathers them).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
>>> write_run({"q1": {"d1": 0.5, "d2": 0.5, "d3": 2.0}}, path, tag="demo")
>>> read_run(path)
{'q1': {'d3': 2.0, 'd2': 0.5, 'd1': 0.5}}
"""

from __future__ import annotations

from heta_eval.io.grammar import PathLike, Reading, TrecFormatError, parse_label, parse_score
from heta_eval.io.qrels import Qrels, iter_qrels, read_qrels
from heta_eval.io.run import Duplicates, Run, read_run, read_run_and_tag, read_run_columnar
from heta_eval.io.run_table import arrow_to_numpy
from heta_eval.io.write import ranked, write_qrels, write_run, write_run_json

__all__ = [
    "Duplicates",
    "PathLike",
    "Qrels",
    "Reading",
    "Run",
    "TrecFormatError",
    "arrow_to_numpy",
    "iter_qrels",
    "parse_label",
    "parse_score",
    "ranked",
    "read_qrels",
    "read_run",
    "read_run_and_tag",
    "read_run_columnar",
    "write_qrels",
    "write_run",
    "write_run_json",
]
