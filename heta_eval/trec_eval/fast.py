"""The drop-in on the compiled core: a large run file read straight into arrays
(:func:`heta_eval.io.run.read_run_columnar`) and never held as a dict of the whole run.

A run file of at least :data:`~heta_eval.providers.backends.COMPILED_MIN_BYTES`, without a
byte-order mark and without ``-M``, is read by the compiled parser when every line is one it
reads exactly as the trec_eval-mode line reader does (:func:`reads_columnar`). Then:

* when every measure is one the compiled engine (:data:`~heta_eval.providers.compiled.COMPILED`)
  computes with trec_eval 9.0.8's arithmetic — ``P``, ``recall``, ``ndcg_cut``, ``map_cut`` at
  rank cutoffs and ``map`` (``map_cut`` at a cutoff past the longest ranking), besides
  ``runid`` and ``num_q`` — at the default relevance level without ``-J``
  (:func:`engine_computes`), the engine computes them (:func:`engine_values`): it ranks as
  trec_eval does (float32 scores descending, then doc id bytes descending), counts label
  >= 1 as relevant and gains the label itself in nDCG, which is trec_eval at ``-l 1``;
* otherwise pytrec_eval gets the run through :class:`RunView`, which builds each query's
  ``{doc: score}`` only when its batch is evaluated.

Any doubt (a line the compiled parser leaves to the line reader, a query split over blocks,
a refused repeated document) sends the same bytes to the line reader, which names a bad
line. The output is the same either way (tested against trec_eval's binary on both sides of
the size threshold).
"""

from __future__ import annotations

from collections.abc import Container, Iterator, Mapping
from typing import Any

import numpy as np

from heta_eval.io.columnar import ColumnarRun
from heta_eval.io.source import InputBytes
from heta_eval.measures.measure import Measure
from heta_eval.providers.backends import compiled_run_file
from heta_eval.providers.compiled import COMPILED

__all__ = [
    "ENGINE_FAMILIES",
    "RepeatedDocument",
    "RunView",
    "engine_computes",
    "engine_values",
    "last_tag",
    "reads_columnar",
]

#: trec_eval families the engine computes, and the measure family each is asked as (``map``
#: is ``map_cut`` at a cutoff past every ranking).
ENGINE_FAMILIES = {
    "ndcg_cut": "ndcg_cut",
    "map_cut": "map_cut",
    "map": "map_cut",
    "recall": "recall",
    "P": "P",
}
# Families formed around the values (no per-query computation).
_AROUND = ("runid", "num_q")
# Cutoffs above this go to pytrec_eval: the engine's ideal-DCG loop runs to the largest.
MAX_CUTOFF = 100_000


def reads_columnar(options: Any, data: InputBytes) -> bool:
    """Whether the run ``data`` is read into arrays: a large file (no byte-order mark, not
    JSON), without ``-M`` (whose cut the line reader's path applies)."""
    if options.max_per_topic is not None or not compiled_run_file(data):
        return False
    return data.start() == data.start(drop_bom=True) and not data.is_json()


def engine_computes(options: Any) -> bool:
    """Whether the engine computes every measure of ``options`` (see the module doc)."""
    if options.relevance_level != 1 or options.judged_only:
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
    return True


def engine_values(
    options: Any,
    qrels: Mapping[str, Mapping[str, int]],
    run: ColumnarRun,
    repeats_refused_in: Container[str] = (),
) -> dict[str, dict[str, float]] | None:
    """``{qid: {key: value}}`` of the judged run queries from the engine, or None when a
    query of ``repeats_refused_in`` holds a document twice (the line reader names it)."""
    wanted = [m for m in options.measures if m.family.name in ENGINE_FAMILIES]
    longest = max(int(np.diff(run.offsets).max()), 1)
    keyed: dict[str, Measure] = {}  # trec_eval's key -> the measure the engine computes
    for m in wanted:
        family = ENGINE_FAMILIES[m.family.name]
        if m.family.name == "map":  # map_cut past every ranking is map
            keyed[m.keys()[0]] = Measure(family, str(longest))
        else:
            pairs = zip(m.keys(), m.values, strict=True)
            keyed.update((key, Measure(family, str(int(c)))) for key, c in pairs)
    judged = {qid: qrels[qid] for qid in run.query_ids if qrels.get(qid)}
    table = COMPILED.table(judged, run, list(dict.fromkeys(keyed.values())))
    repeated = np.flatnonzero(table.stats[:, 1]).tolist()
    if any(run.query_ids[q] in repeats_refused_in for q in repeated):
        return None
    columns = [(key, table.columns[m]) for key, m in keyed.items()]
    rows = table.values.tolist()
    return {
        qid: {key: rows[position][column] for key, column in columns}
        for position, qid in enumerate(run.query_ids)
        if qid in judged
    }


_NL = ord("\n")


class RepeatedDocument(Exception):
    """A query in which trec_eval refuses repeats holds a document twice."""


class RunView(Mapping[str, dict[str, float]]):
    """A columnar run as ``{qid: {doc: score}}``: each query's dict is built when asked for
    (and dropped by the caller), so the whole run never exists as Python objects. Raises
    :class:`RepeatedDocument` for a repeat in a query of ``repeats_refused_in``."""

    def __init__(self, run: ColumnarRun, repeats_refused_in: Container[str]):
        self._run = run
        self._index = {qid: i for i, qid in enumerate(run.query_ids)}
        self._refused = repeats_refused_in

    def __getitem__(self, qid: str) -> dict[str, float]:
        run = self._run
        i = self._index[qid]
        a, b = int(run.offsets[i]), int(run.offsets[i + 1])
        offsets = run.doc_offsets[a : b + 1]
        chunk = run.doc_data[offsets[0] : offsets[-1]]
        # One decode and split: "\n" ends lines, so it is in no id (nor inside a UTF-8
        # sequence).
        joined = np.insert(chunk, offsets[1:-1] - offsets[0], _NL)
        docs = joined.tobytes().decode("utf-8").split("\n")
        out = dict(zip(docs, run.scores[a:b].tolist(), strict=True))
        if len(out) < b - a and qid in self._refused:
            raise RepeatedDocument(qid)
        return out

    def __iter__(self) -> Iterator[str]:
        return iter(self._run.query_ids)

    def __len__(self) -> int:
        return len(self._run.query_ids)


def last_tag(data: InputBytes) -> str:
    """The last line's run tag, for a run the compiled parser read (six fields a line)."""
    buffer = data.data
    end = len(buffer)
    if buffer[end - 1 : end] == b"\n":
        end -= 1
    start = buffer.rfind(b"\n", 0, end) + 1
    last = bytes(buffer[start:end])
    delimiter = b"\t" if b"\t" in last else b" "
    return last.rsplit(delimiter, 1)[-1].decode("utf-8")
