"""The drop-in's core: the files named in trec_eval's options, read and evaluated as
trec_eval 9.0.8 does (:func:`evaluate_options`, :func:`trec_eval_lines`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence

from heta_eval.io.qrels import Qrels
from heta_eval.io.run import read_run_columnar
from heta_eval.io.source import open_input
from heta_eval.trec_eval.compute import (
    TrecEvalResult,
    check_engine_inputs,
    evaluate,
    evaluated_queries,
    make_result,
)
from heta_eval.trec_eval.fast import (
    RepeatedDocument,
    RunView,
    engine_computes,
    engine_values,
    last_tag,
    reads_columnar,
)
from heta_eval.trec_eval.inputs import read_trec_eval_qrels, read_trec_eval_run
from heta_eval.trec_eval.judgment_groups import evaluate_groups, read_qrels_jg
from heta_eval.trec_eval.options import TrecEvalOptions, parse_options
from heta_eval.trec_eval.output import report_lines
from heta_eval.trec_eval.params import c_long
from heta_eval.trec_eval.preferences import read_prefs
from heta_eval.trec_eval.prefs_measures import evaluate_prefs
from heta_eval.trec_eval.utility import missing_counts, with_num_docs
from heta_eval.trec_eval.zscores import apply_zscores, read_zscores

# Families whose values are not pytrec_eval's: text, or counts this package forms itself.
_NOT_FROM_PYTREC_EVAL = ("runid", "relstring", "num_q")
# Families that need no ranking: trec_eval reads a run with repeated documents for them.
_NO_RANKING = ("runid", "num_q")


def evaluate_options(options: TrecEvalOptions) -> TrecEvalResult:
    """Read the files named in ``options`` and evaluate them as trec_eval would. A large
    run is read into arrays (:mod:`~heta_eval.trec_eval.fast`) and scored by the compiled
    engine when it computes every measure, else handed to pytrec_eval a query at a time;
    the same output either way. ``-Z`` converts the values (:mod:`~.zscores`)."""
    result = _evaluate_files(options)
    if options.zscore_file is not None:
        apply_zscores(options, result, read_zscores(options.zscore_file))
    return result


def _evaluate_files(options: TrecEvalOptions) -> TrecEvalResult:
    groups = options.rel_format != "qrels"  # judgment groups or preferences
    qrels = _read_judgments(options)
    data = open_input(options.run)  # read once: a pipe or "-" is never reopened
    ranking = any(m.family.name not in _NO_RANKING for m in options.measures)
    # trec_eval refuses a repeated document only in a query it ranks.
    ranked = {qid for qid, docs in qrels.items() if docs} if ranking else set()
    if options.debug_query is not None:  # -D LEVEL.QID: trec_eval evaluates only QID
        ranked &= {options.debug_query}
    if not groups and reads_columnar(options, data) and options.debug_query is None:
        columnar = read_run_columnar(data, ignore_identical_ids=False)
        if columnar is not None:
            tag = last_tag(data)
            if engine_computes(options):
                values = engine_values(options, qrels, columnar, ranked)
                if values is not None:
                    query_ids = evaluated_queries(qrels, columnar.query_ids)
                    if ranking:
                        check_engine_inputs(qrels, query_ids)
                    return make_result(qrels, query_ids, values, {}, tag)
            else:
                with contextlib.suppress(RepeatedDocument):  # the line reader names it
                    return _evaluate(options, qrels, RunView(columnar, ranked), tag, True)
            del columnar
    run, tag = read_trec_eval_run(
        data,
        repeats_refused_in=ranked,
        max_per_topic=options.max_per_topic,
        ties_by_increasing_docno=options.rel_format in ("prefs", "qrels_prefs"),
    )
    if options.debug_query is not None:
        run = {qid: docs for qid, docs in run.items() if qid == options.debug_query}
    if options.rel_format == "qrels_jg":
        return evaluate_groups(options, qrels, run, tag)
    if groups:
        return evaluate_prefs(options, qrels, run, tag)
    return _evaluate(options, qrels, run, tag, False)


def _read_judgments(options: TrecEvalOptions) -> Mapping:
    if options.rel_format == "qrels_jg":
        return read_qrels_jg(options.qrels)
    if options.rel_format in ("prefs", "qrels_prefs"):
        return read_prefs(options.qrels, subgroups=options.rel_format == "prefs")
    return read_trec_eval_qrels(options.qrels)


def _evaluate(
    options: TrecEvalOptions, qrels: Qrels, run: Mapping, tag: str, ids_checked: bool
) -> TrecEvalResult:
    relstring = next((m for m in options.measures if m.family.name == "relstring"), None)
    utility = next((m for m in options.measures if m.family.name == "utility"), None)
    specs = [
        m.pytrec_eval_spec() for m in options.measures if m.family.name not in _NOT_FROM_PYTREC_EVAL
    ]
    counts = [] if utility is None or not options.num_docs else missing_counts(specs)
    result = evaluate(
        qrels,
        run,
        tag,
        specs + counts,
        relevance_level=options.relevance_level,
        max_per_topic=options.max_per_topic,
        judged_only=options.judged_only,
        relstring_length=c_long(relstring.values[0]) if relstring else None,
        ids_checked=ids_checked,
    )
    if utility is not None and options.num_docs:
        with_num_docs(result, utility.values, options.num_docs, counts)
    return result


def trec_eval_lines(argv: Sequence[str | os.PathLike[str]]) -> Iterator[str]:
    """The lines ``trec_eval *argv`` prints (the command's core, without error handling)."""
    options = parse_options([os.fspath(word) for word in argv])
    return report_lines(options, evaluate_options(options))
