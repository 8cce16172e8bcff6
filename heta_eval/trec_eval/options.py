"""trec_eval's command line: its options (GNU getopt rules) and its ``-m`` measure requests.

Reads ``[options] QRELS RUN`` as trec_eval 9.0.8 does: short options may be clustered
(``-qc``) and glued to their value (``-mndcg_cut.10``, ``-M100``), long options may be
abbreviated (``--measure=P.5``), options may follow the file names, ``--`` ends them.
Where trec_eval silently reads junk as 0 (``-l x``, ``-m P.5x``), this refuses it.

>>> opts = parse_options(["-q", "-c", "-mndcg_cut.10", "-m", "recall.100,1000", "q", "r"])
>>> [m.printed_names() for m in opts.measures], opts.per_query, opts.complete
([('recall_100', 'recall_1000'), ('ndcg_cut_10',)], True, True)
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from heta_eval.measures.params import GAIN_PAIR, NUMBER
from heta_eval.measures.trec_catalogue import FAMILIES, NICKNAMES, TrecFamily, family
from heta_eval.trec_eval.judgment_measures import (
    JG_FAMILIES,
    PREFS_FAMILIES,
    PREFS_NICKNAMES,
    QRELS_JG_MEASURES,
    refusal,
)
from heta_eval.trec_eval.params import (
    LONG_MAX,
    atol,
    float_cutoff_keys,
    float_cutoff_name,
    is_number,
    trec_eval_cutoff_order,
)

__all__ = ["RequestedMeasure", "TrecEvalOptions", "TrecEvalUsageError", "parse_options"]


class TrecEvalUsageError(ValueError):
    """A bad command line or measure request (one line, for the user)."""


@dataclass(frozen=True)
class RequestedMeasure:
    """One measure family to compute, with its parameters as trec_eval would read them."""

    family: TrecFamily
    param_text: str | None = None  # the text after the dot, as given (None: the defaults)
    values: tuple[float, ...] = ()  # parsed parameters (cutoffs sorted) or the defaults

    def printed_names(self) -> tuple[str, ...]:
        """The names trec_eval prints for it: ``P_5``..., or ``utility_1,-1,0,0`` when a
        parameterised single-value measure was given parameters."""
        if self.family.params == "cutoffs":
            return self.keys()
        if self.family.params == "float_cutoffs":  # levels may print alike (0.1, 0.104)
            return tuple(float_cutoff_name(self.family.name, c) for c in self.values)
        if self.param_text is not None and self.family.params != "none":
            return (f"{self.family.name}_{self.param_text}",)
        return (self.family.name,)

    def keys(self) -> tuple[str, ...]:
        """pytrec_eval's keys for its values, in trec_eval's order (``values`` keeps it)."""
        name = self.family.name
        if self.family.params == "cutoffs":
            return tuple(f"{name}_{int(c)}" for c in self.values)
        if self.family.params == "float_cutoffs":
            return float_cutoff_keys(name, self.values)
        return (name,)

    def pytrec_eval_spec(self) -> str:
        """The measure string for pytrec_eval's C extension (trec_eval's ``-m`` syntax)."""
        if self.param_text is None or self.family.params == "none":
            return self.family.name
        return f"{self.family.name}.{self.param_text}"


@dataclass(frozen=True)
class TrecEvalOptions:
    """A parsed ``trec_eval`` command line."""

    qrels: str
    run: str
    measures: tuple[RequestedMeasure, ...]
    per_query: bool = False  # -q
    complete: bool = False  # -c
    relevance_level: int = 1  # -l
    max_per_topic: int | None = None  # -M (None: no limit)
    judged_only: bool = False  # -J
    summary: bool = True  # not -n
    num_docs: int = 0  # -N (documents in the collection: utility's 4th coefficient)
    zscore_file: str | None = None  # -Z (per-query means and standard deviations)
    debug_level: int = 0  # -D LEVEL[.QID]
    debug_query: str | None = None  # -D's .QID: trec_eval evaluates only that query
    rel_format: str = "qrels"  # -R: "qrels", "qrels_jg" (judgment groups), "prefs", "qrels_prefs"
    notes: tuple[str, ...] = field(default=())  # harmless oddities, printed on stderr
    help: bool = False
    version: bool = False


# trec_eval's option table: (short, long, takes a value).
_OPTIONS = (
    ("h", "help", False),
    ("v", "version", False),
    ("q", "query_eval_wanted", False),
    ("m", "measure", True),
    ("c", "complete_rel_info_wanted", False),
    ("l", "level_for_rel", True),
    ("n", "nosummary", False),
    ("D", "Debug_level", True),
    ("J", "Judged_docs_only", False),
    ("N", "Number_docs_in_coll", True),
    ("M", "Max_retrieved_per_topic", True),
    ("R", "Rel_info_format", True),
    ("T", "Results_format", True),
    ("o", "Output_old_results_format", False),  # the long form takes a value (_LONG_VALUE)
    ("Z", "Zscore", True),
)
_TAKES_VALUE = {short: takes for short, _, takes in _OPTIONS}
_LONG_TO_SHORT = {long: short for short, long, _ in _OPTIONS}
# trec_eval's long option table gives --Output_old_results_format a value (ignored, as -o
# is: trec_eval 9.0.8 sets a flag nothing reads).
_LONG_VALUE = {"o"}
# Measures whose trec_eval code prints debugging lines on standard output at -D levels
# above the number given (m_ndcg.c and the others): their traces are not reproduced.
_DEBUG_PRINTS = {
    "ndcg": 0,
    "ndcg_cut": 0,
    "ndcg_rel": 0,
    "Rndcg": 0,
    "G": 0,
    "binG": 0,
    "gm_bpref": 1,
    **{f.name: 2 for f in PREFS_FAMILIES},
}
# trec_eval's -R formats.
_REL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")


def parse_options(argv: Sequence[str]) -> TrecEvalOptions:
    """Parse ``argv`` (the words after ``trec_eval``); a TrecEvalUsageError says what is wrong."""
    flags: dict[str, int] = {}
    values: list[tuple[str, str]] = []
    files: list[str] = []
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word == "--":
            files.extend(words[i:])
            break
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            short = _long_option(name)
            takes = _TAKES_VALUE[short] or short in _LONG_VALUE
            if takes and not eq:
                if i >= len(words):
                    raise TrecEvalUsageError(f"option --{name} needs a value")
                value, i = words[i], i + 1
            elif not takes and eq:
                raise TrecEvalUsageError(f"option --{name} takes no value")
            _record(short, value, flags, values)
            continue
        if word.startswith("-") and word != "-":
            j = 1
            while j < len(word):
                short = word[j]
                if short not in _TAKES_VALUE:
                    raise TrecEvalUsageError(f"unknown option -{short} (see --help)")
                j += 1
                if _TAKES_VALUE[short]:
                    if j < len(word):
                        value = word[j:]
                    elif i < len(words):
                        value, i = words[i], i + 1
                    else:
                        raise TrecEvalUsageError(f"option -{short} needs a value")
                    _record(short, value, flags, values)
                    break
                _record(short, "", flags, values)
            continue
        files.append(word)
    return _build(flags, values, files)


def _long_option(name: str) -> str:
    """getopt_long accepts any unambiguous prefix of a long option."""
    if name in _LONG_TO_SHORT:
        return _LONG_TO_SHORT[name]
    matches = [long for long in _LONG_TO_SHORT if long.startswith(name)] if name else []
    if len(matches) != 1:
        problem = "ambiguous" if matches else "unknown"
        raise TrecEvalUsageError(f"{problem} option --{name} (see --help)")
    return _LONG_TO_SHORT[matches[0]]


def _record(short: str, value: str, flags: dict[str, int], values: list[tuple[str, str]]) -> None:
    flags[short] = flags.get(short, 0) + 1
    if _TAKES_VALUE[short]:
        values.append((short, value))


def _build(
    flags: dict[str, int], values: list[tuple[str, str]], files: list[str]
) -> TrecEvalOptions:
    if flags.get("h") or flags.get("v"):
        return TrecEvalOptions("", "", (), help=bool(flags.get("h")), version=bool(flags.get("v")))
    numbers: dict[str, int] = {"l": 1, "N": 0, "D": 0}
    max_per_topic, measure_specs, notes = None, [], []
    zscore_file = debug_query = None
    rel_format = "qrels"
    for short, value in values:
        if short == "m":
            measure_specs.append(value)
        elif short in ("l", "N"):
            numbers[short] = _integer(value, _WHAT[short], notes)
        elif short == "D":  # LEVEL[.QID]; a later -D without a query keeps the earlier one
            level_text, dot, query = value.partition(".")
            numbers["D"] = _integer(level_text, _WHAT["D"], notes)
            debug_query = query if dot else debug_query
        elif short == "Z":
            zscore_file = value
        elif short == "M":
            max_per_topic = _integer(value, "-M (documents per topic)", notes)
            if max_per_topic < 0:
                raise TrecEvalUsageError(
                    f"-M {value}: must be 0 or more (trec_eval 9.0.8 crashes on it)"
                )
        elif short == "R":  # the last -R counts, as in trec_eval
            rel_format = value
        elif short == "T" and value != "trec_results":
            raise TrecEvalUsageError(f"-T {value}: only the 'trec_results' format is supported")
    if len(files) != 2:
        raise TrecEvalUsageError(
            f"expected 2 files, QRELS and RUN, got {len(files)}"
            + (f": {' '.join(files)}" if files else "")
            + " (see --help)"
        )
    _check_rel_format(rel_format)
    measures, measure_notes = resolve_measures(measure_specs or ["official"], rel_format)
    notes += measure_notes
    _check_debug_level(numbers["D"], measures)
    return TrecEvalOptions(
        qrels=files[0],
        run=files[1],
        measures=measures,
        per_query=bool(flags.get("q")),
        complete=bool(flags.get("c")),
        relevance_level=numbers["l"],
        max_per_topic=max_per_topic,
        judged_only=bool(flags.get("J")),
        summary=not flags.get("n"),
        num_docs=numbers["N"],
        zscore_file=zscore_file,
        debug_level=numbers["D"],
        debug_query=debug_query,
        notes=tuple(notes),
        rel_format=rel_format,
    )


def _check_rel_format(rel_format: str) -> None:
    if rel_format not in _REL_FORMATS:
        raise TrecEvalUsageError(
            f"-R {rel_format}: not a trec_eval 9.0.8 rel_info format (qrels, qrels_jg, "
            "prefs, qrels_prefs)"
        )


_WHAT = {
    "l": "-l (relevance level)",
    "N": "-N (documents in the collection)",
    "D": "-D (debug level)",
}


def _check_debug_level(level: int, measures: Sequence[RequestedMeasure]) -> None:
    """-D only adds lines to standard output, from the measures of ``_DEBUG_PRINTS``."""
    for measure in measures:
        above = _DEBUG_PRINTS.get(measure.family.name)
        if above is not None and level > above:
            raise TrecEvalUsageError(
                f"-D {level} with -m {measure.family.name}: trec_eval 9.0.8 then prints its "
                f"{measure.family.name} computation's debugging trace on standard output, "
                "which is not reproduced (use -D 0, or leave it out)"
            )


def _integer(text: str, what: str, notes: list[str]) -> int:
    """trec_eval's ``atol``; text that is not a number is refused (trec_eval reads it as 0)."""
    if not is_number(text.strip()):
        raise TrecEvalUsageError(f"{what} must be a number, got {text!r}")
    value = atol(text)
    if (
        not re.fullmatch(r"[ \t\n\r\x0b\x0c]*[+-]?[0-9]+[ \t\n\r\x0b\x0c]*", text)
        or value == LONG_MAX
    ):
        notes.append(f"{what} {text} is read as {value}, as trec_eval's atol reads it")
    return value


def resolve_measures(
    specs: Sequence[str], rel_format: str = "qrels"
) -> tuple[tuple[RequestedMeasure, ...], list[str]]:
    """trec_eval's ``mark_measure``: nicknames mark their families; ``name.params`` sets a
    family's parameters, the first time only (trec_eval ignores later ones, silently; this
    says so in a note). Families come back in trec_eval's print order.

    >>> measures, notes = resolve_measures(["P.10", "P.5", "official"])
    >>> [m.family.name for m in measures][:3], measures[-1].printed_names(), notes[0][:33]
    (['runid', 'num_q', 'num_ret'], ('P_10',), "trec_eval uses the first '-m P.…'")
    """
    marked: set[str] = set()
    param_texts: dict[str, str] = {}
    notes: list[str] = []
    for spec in specs:
        name, dot, text = spec.partition(".")
        if dot and not text:
            raise TrecEvalUsageError(f"-m {spec}: no parameters after the dot")
        problem = refusal(name, rel_format)
        if problem is not None:
            default = " (the default set)" if spec == "official" else ""
            raise TrecEvalUsageError(f"-m {spec}{default} {problem}")
        if name == "yaap":
            raise TrecEvalUsageError(
                f"-m {spec}: yaap is in trec_eval but not in all_trec, and pytrec_eval does "
                "not compute it"
            )
        if dot:
            if name in param_texts:
                notes.append(
                    f"trec_eval uses the first '-m {name}.…' it is given "
                    f"({name}.{param_texts[name]}); '-m {spec}' is ignored"
                )
            else:
                param_texts[name] = text
        if name in NICKNAMES or name == "qrels_jg" or name in PREFS_NICKNAMES:
            marked.update({**NICKNAMES, **PREFS_NICKNAMES}.get(name, QRELS_JG_MEASURES))
            continue
        if name in _JG_BY_NAME:
            marked.add(name)
            continue
        try:
            family(name)
        except ValueError as error:
            raise TrecEvalUsageError(f"-m {spec}: {error}") from None
        marked.add(name)
    measures = []
    for fam in (*FAMILIES, *PREFS_FAMILIES, *JG_FAMILIES):  # trec_eval's print order
        if fam.name not in marked:
            continue
        text = param_texts.get(fam.name)
        if text is not None and fam.params == "none":
            notes.append(f"{fam.name} takes no parameters; '.{text}' is ignored, as trec_eval does")
        measures.append(_with_params(fam, text))
    return tuple(measures), notes


_JG_BY_NAME = {f.name: f for f in (*JG_FAMILIES, *PREFS_FAMILIES)}
_NUMBER = NUMBER  # the catalogue's reading of a number (measures/params.py)


def _with_params(fam: TrecFamily, text: str | None) -> RequestedMeasure:
    if text is None or fam.params == "none":
        return RequestedMeasure(fam, text, fam.defaults)
    where = f"-m {fam.name}.{text}"
    parts = text.split(",")
    if fam.params == "gains":
        if not all(GAIN_PAIR.fullmatch(part) for part in parts):
            raise TrecEvalUsageError(f"{where}: gains must be label=gain pairs, e.g. 0=0,1=1,2=3")
        return RequestedMeasure(fam, text, ())
    if not all(re.fullmatch(_NUMBER, part) for part in parts):
        raise TrecEvalUsageError(f"{where}: parameters must be comma-separated numbers")
    numbers = [float(part) for part in parts]
    if fam.params == "cutoffs":
        return _cutoffs(fam, text, where)
    if fam.params == "float_cutoffs":
        cuts = sorted(numbers)
        if not all(math.isfinite(c) for c in cuts):
            raise TrecEvalUsageError(f"{where}: cutoffs must be finite numbers")
        if len(set(cuts)) != len(cuts):  # trec_eval's refusal; 0.1,0.104 print alike, both
            raise TrecEvalUsageError(f"{where}: duplicate cutoffs (trec_eval reads {cuts})")
        return RequestedMeasure(fam, text, tuple(cuts))
    if fam.name == "utility" and len(numbers) != 4:
        raise TrecEvalUsageError(f"{where}: utility takes exactly 4 coefficients")
    if not all(math.isfinite(n) for n in numbers):
        raise TrecEvalUsageError(f"{where}: parameters must be finite numbers")
    return RequestedMeasure(fam, text, tuple(numbers))


def _cutoffs(fam: TrecFamily, text: str, where: str) -> RequestedMeasure:
    """Rank cutoffs as trec_eval reads them: ``atol`` each (23.4 is 23), its sort, its checks.
    The text goes to pytrec_eval unchanged, whose trec_eval reads it the same way."""
    cutoffs = trec_eval_cutoff_order([atol(part) for part in text.split(",")])
    if cutoffs[0] <= 0:
        raise TrecEvalUsageError(f"{where}: cutoffs must be positive (trec_eval reads {cutoffs})")
    if any(a == b for a, b in itertools.pairwise(cutoffs)):
        raise TrecEvalUsageError(f"{where}: duplicate cutoffs (trec_eval reads {cutoffs})")
    return RequestedMeasure(fam, text, tuple(cutoffs))
