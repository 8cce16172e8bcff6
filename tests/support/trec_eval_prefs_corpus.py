"""trec_eval 9.0.8's outputs with preference judgments (``-R prefs``, ``-R qrels_prefs``),
pinned: ``python tests/support/trec_eval_levels_corpus.py TREC_EVAL [N] --prefs`` runs the C binary
on N seeded random cases (seed -5) and a few chosen by hand, written to
``tests/support/data/trec_eval_prefs.json``; with ``--live`` it compares N fresh cases instead.

Cases: 1-4 queries, 1-3 judgment groups a query and, with ``-R prefs``, 1-3 sub-groups a
group, drawn mostly consistent (each sub-group takes its levels from one hidden order of the
group, ties included), sometimes not (a cycle, a document at 0 and above 0, at two levels of
one sub-group), sometimes with negative levels; runs with ties and unjudged documents,
sometimes a document twice;
``-q``, ``-c``, ``-J``, ``-n``, ``-M``, ``-l``, ``-D 0.QID``, ``-Z``; ``-m all_prefs``,
``prefs`` or single measures; now and then a bad line or a measure of another format.
"""

from __future__ import annotations

import random

from support.trec_eval_levels_corpus import (
    DATA,
    DOCS,
    LEVELS,
    QIDS,
    SCORES,
    Z_MEANS,
    Z_SDS,
    draw_flags,
    draw_run,
    pin_or_compare,
)

PREFS_CORPUS = DATA / "trec_eval_prefs.json"
PREFS_NAMES = [
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
]
PREFS_MEASURES = ["all_prefs", "all_prefs", "prefs", *PREFS_NAMES, "runid", "num_q"]
OTHER_MEASURES = ["map", "official", "P.5", "map_avgjg", "qrels_jg", "num_ret"]
GROUPS = ["a", "b", "u1", "U2", "jg10", "0"]
LEVEL_TEXTS = ["0", "0", "1", "2", "3", "0.5", "1.0", "2e0", "7", "0x1p1"]
SEPARATORS = [" ", "\t", "  "]
BAD_LINES = ["q1 a d1\n", "q1 a s d1 1 x\n", "\n", "   \n", "q1\n", "q1 a b c d e f\n"]


def _group_lines(rng: random.Random, qid: str, group: str, pool: list[str], subgroups: bool):
    """One judgment group's lines: sub-groups cut from one hidden order, or (rarely) not."""
    docs = rng.sample(pool, rng.randint(2, min(len(pool), 8)))
    negative = rng.random() < 0.08
    texts = LEVEL_TEXTS + (["-1", "-2", "-3"] if negative else [])
    hidden = {doc: rng.choice(texts) for doc in docs}
    lines = []
    for sub in rng.sample(["s1", "s2", "x", "10"], rng.randint(1, 3) if subgroups else 1):
        for doc in rng.sample(docs, rng.randint(2, len(docs))):
            level = hidden[doc] if rng.random() < 0.97 else rng.choice(texts)
            middle = f"{group} {sub}" if subgroups else group
            lines.append(f"{qid}{rng.choice(SEPARATORS)}{middle} {doc} {level}\n")
    return lines


def make_prefs_case(rng: random.Random) -> dict:
    subgroups = rng.random() < 0.65
    pool = DOCS if rng.random() < 0.8 else [f"d{i}" for i in range(40)]
    lines: list[str] = []
    prefs_queries = rng.sample(QIDS, rng.randint(1, 4))
    for qid in prefs_queries:
        for group in rng.sample(GROUPS, rng.randint(1, 3)):
            lines += _group_lines(rng, qid, group, pool, subgroups)
    rng.shuffle(lines)
    if rng.random() < 0.04:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(BAD_LINES))
    if rng.random() < 0.05:
        lines.append(lines[0])  # the same line twice
    run_lines = draw_run(rng, pool, prefs_queries)
    if rng.random() < 0.08:  # a document twice (trec_eval stops unless -M cuts a copy)
        qid, _, doc, *_ = rng.choice(run_lines).split()
        run_lines.append(f"{qid} Q0 {doc} 9 {rng.choice(SCORES)} tag{qid}\n")
    argv = ["-R", "prefs" if subgroups else "qrels_prefs"]
    argv += draw_flags(rng)
    level = rng.choice(LEVELS)
    if level is not None and rng.random() < 0.3:
        argv += ["-l", level]
    if rng.random() < 0.08:
        argv += ["-D", "0." + rng.choice([prefs_queries[0], *QIDS])]
    for _ in range(rng.choice([1, 1, 2, 3])):
        other = rng.random() < 0.04
        argv += ["-m", rng.choice(OTHER_MEASURES if other else PREFS_MEASURES)]
    case = {"qrels": "".join(lines), "run": "".join(run_lines), "argv": argv}
    if rng.random() < 0.1:
        names = ["prefs_simp", "prefs_pair", "prefs_num_prefs_poss", "num_q", "prefs_avgjg"]
        entries = [
            f"{q} {n} {rng.choice(Z_MEANS)} {rng.choice(Z_SDS)}\n"
            for q in prefs_queries
            for n in rng.sample(names, 3)
        ]
        case["zscores"] = "".join(entries) + "~ ~ 0 1\n"
        argv += ["-Z", "zscores"]
    return case


# Chosen by hand: the format's own example (trec_eval's documentation of -R prefs), a BOM
# kept in the first query id, levels read by atof, a cycle across sub-groups, odd levels and
# whitespace, repeated documents and ties at the -M cut, non-ASCII ids, -3.
_EXAMPLE = (
    "\ufeffq1 u1 s1 d1 3.0\nq1 u1 s1 d2 2.0\nq1 u1 s1 d3 0.0\nq1 u1 s1 d4 6.0\n"
    "q1 u1 s1 d5 0.0\nq1 u1 s1 d6 2.0\nq1 u2 s1 d1 3.0\nq1 u2 s1 d2 2.0\n"
    "q1 u2 s1 d3 1.0\nq1 u2 s2 d1 2.0\nq1 u2 s2 d2 1.0\nq1 u2 s2 d4 3.0\n"
    "q2 u1 s1 d1 1e0\nq2 u1 s1 d9 abc\nq2 u1 s1 d8 0x0\nq2 u1 s2 d8 -0\n"
)
_RUN = (
    "\ufeffq1 Q0 d2 1 0.9 r\n\ufeffq1 Q0 d1 2 0.8 r\n\ufeffq1 Q0 d7 3 0.8 r\n"
    "\ufeffq1 Q0 d5 4 0.5 r\nq2 Q0 d9 1 0.9 r\nq2 Q0 d1 2 0.9 r\nq2 Q0 d8 3 0.7 r\n"
)
_ODD = (
    "q1 a s1 d1 inf\nq1 a s1 d2 1e40\nq1 a s1 d3 -inf\nq1 a s2 d3 0x\nq1 a s2 d4 .5e1\n"
    "q1 b s1 d1 1\r\nq1\x0bb\x0cs1 d5 0\nq2 a s1 d1 1\nq2 a s1 d2 0"
)
_ODD_RUN = (
    "q1 Q0 d1 1 1 r\nq1 Q0 d2 1 1 r\nq1 Q0 d3 1 0.5 r\nq1 Q0 d1 1 0.1 r\n"
    "q2 Q0 d2 1 3 r\nq2 Q0 d1 1 3 r\n"
)
_CYCLE = "q1 a s1 d1 2\nq1 a s1 d2 1\nq1 a s2 d2 2\nq1 a s2 d1 1\n"
PREFS_FIXED = [
    {"qrels": _EXAMPLE, "run": _RUN, "argv": ["-R", "prefs", "-q", "-m", "all_prefs"]},
    {"qrels": _EXAMPLE, "run": _RUN, "argv": ["-R", "prefs", "-q", "-c", "-M", "2"]},
    {
        "qrels": _EXAMPLE.replace(" s2 ", " s1 ").replace(" s1 ", " "),
        "run": _RUN,
        "argv": ["-R", "qrels_prefs", "-q", "-m", "all_prefs"],
    },
    {"qrels": _CYCLE, "run": _RUN, "argv": ["-R", "prefs", "-m", "prefs_simp"]},
    {"qrels": _CYCLE, "run": _RUN, "argv": ["-R", "prefs", "-m", "runid", "-m", "num_q"]},
    # Levels inf, 1e40, -inf, "0x", ".5e1"; \r\n, \v and \f; a document twice in the run
    # (trec_eval stops unless -M leaves one copy out), score ties at the -M cut.
    *[
        {"qrels": _ODD, "run": _ODD_RUN, "argv": ["-R", "prefs", "-m", "all_prefs", *extra]}
        for extra in (["-q"], ["-q", "-M", "1"], ["-q", "-M", "2"], ["-c", "-D", "0.q2"])
    ],
    {
        "qrels": "q\u00e9 a d\u00e9 2\nq\u00e9 a d2 1\n",
        "run": "q\u00e9 Q0 d\u00e9 1 1 r\nq\u00e9 Q0 d2 1 2 r\n",
        "argv": ["-R", "qrels_prefs", "-q", "-m", "all_prefs"],
    },
    # A group whose highest level is -3 (trec_eval's own "no level yet" marker).
    {
        "qrels": "q1 a d1 -3\nq1 a d2 -5\nq1 a d3 -5\nq1 b d1 1\nq1 b d2 0\n",
        "run": _RUN,
        "argv": ["-R", "qrels_prefs", "-q", "-m", "all_prefs"],
    },
]


def prefs_corpus(binary: str, count: int, fresh: bool) -> int:
    """Pin ``count`` cases (seed -5) or, ``fresh``, compare new ones with the binary."""
    from support.trec_eval_pinned import prefs_mismatch as mismatch

    return pin_or_compare(
        binary,
        count,
        fresh,
        seed=-5,
        make=make_prefs_case,
        fixed=PREFS_FIXED,
        corpus=PREFS_CORPUS,
        mismatch=mismatch,
    )
