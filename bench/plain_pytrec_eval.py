"""The peer of the one-shot row: the plain script a user would write instead of heta-eval.

Reads a TREC run and BEIR qrels tsv, drops self-hits (BEIR's rule), runs one pytrec_eval pass
for BEIR's four measures at k = 1, 3, 5, 10, 100 and prints ``name mean`` lines (5 decimals,
as BEIR rounds). Kept minimal on purpose: its start-up is what a one-shot command competes with.

    python bench/plain_pytrec_eval.py RUN QRELS_TSV
"""

import sys

import pytrec_eval

qrels: dict[str, dict[str, int]] = {}
with open(sys.argv[2], encoding="utf-8") as handle:
    next(handle)
    for line in handle:
        qid, doc, label = line.split("\t")
        qrels.setdefault(qid, {})[doc] = int(label)
run: dict[str, dict[str, float]] = {}
with open(sys.argv[1], encoding="utf-8") as handle:
    for line in handle:
        qid, _, doc, _, score, _ = line.split()
        if qid != doc:
            run.setdefault(qid, {})[doc] = float(score)
measures = {f"{name}.1,3,5,10,100" for name in ("ndcg_cut", "map_cut", "recall", "P")}
scores = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
for name in sorted(next(iter(scores.values()))):
    print(name, round(sum(values[name] for values in scores.values()) / len(scores), 5))
