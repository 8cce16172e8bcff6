"""Runs and judgments in and out: TREC run and qrels files, BEIR results JSON, DataFrames and
ranx objects, read by one grammar (trec_eval's) into the types every evaluator takes.

:mod:`~heta_eval.io.run` and :mod:`~heta_eval.io.qrels` are the readers (one entry per
kind), :mod:`~heta_eval.io.grammar` the rules they share, :mod:`~heta_eval.io.source` how
an input is opened once, :mod:`~heta_eval.io.interop` the in-memory forms,
:mod:`~heta_eval.io.write` the writers; :mod:`~heta_eval.io.trec` gathers their names."""
