"""The drop-in on the compiled core: a large run file read straight into arrays
(:func:`heta_eval.io.run.read_run_columnar`) and scored by the compiled engine
(:mod:`heta_eval.providers.engine`), with no dict of the run.

It applies when every requested measure is one the engine computes with trec_eval 9.0.8's
arithmetic — ``P``, ``recall``, ``ndcg_cut``, ``map_cut`` at rank cutoffs and ``map`` (``map_cut``
at a cutoff past the longest ranking), besides ``runid`` and ``num_q`` — at the default
relevance level, without ``-M`` or ``-J``, on a run file of at least
:data:`~heta_eval.providers.backends.COMPILED_MIN_BYTES` without a byte-order mark, whose
every line the compiled parser reads exactly as the trec_eval-mode line reader does. The
engine ranks as trec_eval does (float32 scores descending, then doc id bytes descending),
counts label >= 1 as relevant and gains the label itself in nDCG, which is what trec_eval
does at ``-l 1``. Anything else, or any doubt (a repeated document, a line the compiled
parser leaves to the line reader), returns None: the caller then reads the same opened
input with the line reader, which names the bad line. The numbers are the same either way
(tested against the trec_eval binary on both sides of the size threshold).
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Any

import numpy as np

from heta_eval.io.run import read_run_columnar
from heta_eval.io.source import InputBytes
from heta_eval.providers.backends import compiled_run_file

__all__ = ["ENGINE_FAMILIES", "engine_applies", "engine_values"]

#: trec_eval families the engine computes, and its column block for each (METRIC_ORDER).
ENGINE_FAMILIES = {"ndcg_cut": 0, "map_cut": 1, "map": 1, "recall": 2, "P": 3}
# Families formed around the values (no per-query computation).
_AROUND = ("runid", "num_q")
# Cutoffs above this go to pytrec_eval: the engine's ideal-DCG loop runs to the largest.
MAX_CUTOFF = 100_000


def engine_applies(options: Any, data: InputBytes) -> bool:
    """Whether ``options`` on the run ``data`` can be scored by the engine (see module doc)."""
    if options.relevance_level != 1 or options.max_per_topic is not None:
        return False
    if options.judged_only or not compiled_run_file(data):
        return False
    for measure in options.measures:
        name = measure.family.name
        if name in _AROUND:
            continue
        if name not in ENGINE_FAMILIES:
            return False
        cutoffs = [int(c) for c in measure.values]
        if name != "map" and (cutoffs != sorted(cutoffs) or not 0 < cutoffs[-1] <= MAX_CUTOFF):
            return False
    return data.start() == data.start(drop_bom=True) and not data.is_json()


def engine_values(
    options: Any,
    qrels: Mapping[str, Mapping[str, int]],
    data: InputBytes,
    *,
    repeats_refused_in: Container[str] = (),
) -> tuple[list[str], dict[str, dict[str, float]], str] | None:
    """``(run query ids, {qid: {key: value}} for the judged ones, run tag)`` from the
    engine, or None when the run is not for it (the line reader then reads ``data``). A
    repeated document in a query of ``repeats_refused_in`` gives None."""
    from heta_eval.providers.engine import evaluate_columnar

    run = read_run_columnar(data, ignore_identical_ids=False)
    if run is None:
        return None
    wanted = [m for m in options.measures if m.family.name in ENGINE_FAMILIES]
    longest = int(np.diff(run.offsets).max())
    cutoffs = {int(c) for m in wanted if m.family.name != "map" for c in m.values}
    if any(m.family.name == "map" for m in wanted):
        cutoffs.add(max(longest, 1))  # map_cut past every ranking is map
    ks = sorted(cutoffs) or [1]
    judged = {qid: qrels[qid] for qid in run.query_ids if qrels.get(qid)}
    values, stats = evaluate_columnar(run, judged, ks)
    repeated = np.flatnonzero(stats[:, 1]).tolist()
    if any(run.query_ids[q] in repeats_refused_in for q in repeated):
        return None  # the line reader names the line
    per_query: dict[str, dict[str, float]] = {}
    columns = []
    for m in wanted:
        block = ENGINE_FAMILIES[m.family.name] * len(ks)
        if m.family.name == "map":
            columns.append((m.keys()[0], block + ks.index(max(longest, 1))))
        else:
            columns += [
                (k, block + ks.index(int(c))) for k, c in zip(m.keys(), m.values, strict=True)
            ]
    rows = values.tolist()
    for position, qid in enumerate(run.query_ids):
        if qid in judged:
            row = rows[position]
            per_query[qid] = {key: row[column] for key, column in columns}
    return list(run.query_ids), per_query, _last_tag(data)


def _last_tag(data: InputBytes) -> str:
    """The last line's run tag: the compiled parser read every line as six fields."""
    buffer = data.data
    end = len(buffer)
    if buffer[end - 1 : end] == b"\n":
        end -= 1
    start = buffer.rfind(b"\n", 0, end) + 1
    last = bytes(buffer[start:end])
    delimiter = b"\t" if b"\t" in last else b" "
    return last.rsplit(delimiter, 1)[-1].decode("utf-8")
