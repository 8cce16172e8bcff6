"""``heta-eval trec_eval``: a drop-in for the trec_eval 9.0.8 command line."""

from __future__ import annotations

import argparse
import sys

from heta_eval._runtime import single_threaded_blas
from heta_eval.cli import CliError, write_stdout

HELP = """\
usage: heta-eval trec_eval [-q] [-c] [-n] [-J] [-m MEASURE[.PARAMS]]... [-l LEVEL] [-M N]
                           [-N N] [-Z ZSCORE_FILE] [-D LEVEL[.QID]] [-R FORMAT] [-o]
                           QRELS RUN

trec_eval 9.0.8's command line (the trec_eval inside pytrec_eval, so the numbers are
BEIR's): the same options, and standard output identical to trec_eval's, byte for byte.

options:
  -q, --query_eval_wanted       also print every query's values
  -c, --complete_rel_info_wanted
                                average over every query in QRELS (missing ones count 0)
  -m, --measure M[.P]           measures to print, repeatable, may be glued (-mP.5):
                                a trec_eval name (map, ndcg_cut.10, recall.100,1000,
                                iprec_at_recall.0.5, utility.1,-1,0,0, ndcg.0=0,1=1,2=3) or
                                a nickname: official (the default), all_trec, set
  -l, --level_for_rel N         lowest label that counts as relevant (default 1; 0: every
                                judged document)
  -M, --Max_retrieved_per_topic N
                                use only each query's top N documents
  -J, --Judged_docs_only        drop unjudged documents before scoring
  -n, --nosummary               no summary ("all") lines
  -N, --Number_docs_in_coll N   documents in the collection (default 0): utility's 4th
                                coefficient counts N + num_rel_ret - num_ret - num_rel
  -Z, --Zscore FILE             print z-scores: FILE has lines "qid measure mean stddev";
                                a missing entry gives -1000000
  -D, --Debug_level L[.QID]     debug level (standard output unchanged); .QID evaluates
                                only that query
  -R, --Rel_info_format F       QRELS's format: qrels (the default) or qrels_jg, lines
                                "qid group docno rel" with -m map_avgjg, P_avgjg[.CUTS],
                                Rprec_mult_avgjg[.MULTS] averaged over each query's
                                groups (-m qrels_jg: all three, runid and num_q);
                                prefs ("qid jg jsg docno rel") or qrels_prefs ("qid jg
                                docno rel"): preference judgments, -m all_prefs (the 14
                                prefs_* measures), -m prefs (six of them)
  -o                            accepted and ignored, as trec_eval 9.0.8 does
  -h, --help                    this help;  -v, --version: the version emulated

examples:
  heta-eval trec_eval qrels.test run.trec
  heta-eval trec_eval -c -m ndcg_cut.10 -m recall.100,1000 qrels.trec run.trec
  heta-eval trec_eval -q -m all_trec -l2 qrels.trec run.trec
  heta-eval trec_eval -mndcg_cut.10 -mP.5 -M100 qrels.trec run.trec
  heta-eval trec_eval -R qrels_jg -m qrels_jg -q qrels.jg run.trec
  heta-eval trec_eval -R prefs -m all_prefs prefs.txt run.trec

Numbers are read as trec_eval reads them (-m ndcg_cut.23.4 is ndcg_cut_23). Negative labels
are "pooled but unjudged", as in trec_eval. Where trec_eval 9.0.8 stops or crashes (a
-Z lookup past the end of its table included), for -D with a measure whose debugging trace
trec_eval prints on standard output (ndcg, ndcg_cut, ndcg_rel, Rndcg, G, binG, gm_bpref,
prefs_*), for measures trec_eval stops on under the -R format given, and for preference
judgments it stops, aborts or reads past an array on, the error is one line on stderr,
exit status 2.
See docs/trec_eval.md.
"""

VERSION = "trec_eval version 9.0.8 (heta-eval, through pytrec_eval)"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "trec_eval",
        help="trec_eval 9.0.8's command line, byte-identical output",
        description="trec_eval 9.0.8's command line; see heta-eval trec_eval --help.",
        add_help=False,
        prefix_chars="\0",  # every word, options included, goes to trec_eval's own parser
    )
    parser.add_argument("words", nargs=argparse.REMAINDER)
    parser.set_defaults(handler=run_trec_eval)


def run_trec_eval(args: argparse.Namespace) -> int:
    single_threaded_blas()  # before numpy's import: nothing here calls BLAS
    # The options, help and usage errors first: they need neither numba nor numpy.
    from heta_eval.trec_eval.options import TrecEvalUsageError, parse_options

    try:
        options = parse_options(args.words)
    except TrecEvalUsageError as error:
        raise CliError(str(error)) from None
    if options.help:
        sys.stdout.write(HELP)
        return 0
    if options.version:
        print(VERSION, file=sys.stderr)
        return 0
    for note in options.notes:
        print(f"heta-eval trec_eval: note: {note}", file=sys.stderr)
    from heta_eval.io.trec import TrecFormatError
    from heta_eval.trec_eval.drop_in import evaluate_options
    from heta_eval.trec_eval.output import report_lines

    try:
        result = evaluate_options(options)
    except (OSError, TrecFormatError, ValueError) as error:
        raise CliError(_one_line(error)) from None
    # Bytes, as trec_eval writes them: ids come back exactly as read, whatever the locale.
    data = "".join(f"{line}\n" for line in report_lines(options, result)).encode("utf-8")
    write_stdout(data)  # a closed pipe (`| head`) is handled by heta_eval.cli.main
    return 0


def _one_line(error: Exception) -> str:
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    return str(error).splitlines()[0]
