"""trec_eval's ``-Z ZSCORE_FILE``: each per-query value as a z-score, ``(value - mean) / sd``.

The file has lines ``qid measure mean stddev`` (four whitespace-separated fields; the
numbers read by ``atof``; a blank line is malformed). Measure names are those printed
(``P_5``, ``utility_1,-1,0,0``). As trec_eval 9.0.8 does: a query or measure the file lacks
gets -1000000, as does a value other than the mean where ``stddev`` is 0 (a value equal to
it gets 0); the summaries average the converted values; every line is printed ``Z``-prefixed,
counts included, as ``%6.4f``.

trec_eval finds entries by a binary search that also looks one place past the end: past a
query's own measures it reads the next query's first entry (and uses it when its name
matches), past the last query or the last entry it reads outside its table: what it
finds there depends on memory, and it mostly crashes (seen: 35 crashes in 43 such cases,
the others counted the entry missing). The first is reproduced, the second refused
(ValueError); a last line whose query and measure sort after every other (``~ ~ 0 1``)
keeps every lookup inside the table.

>>> table = ZscoreTable.parse(b"q1 map 0.5 0.25\\nq2 map 0.2 0.1\\n", "z")
>>> table.convert("q1", "map", 1.0), table.convert("q1", "P_5", 1.0)
(2.0, -1000000.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from heta_eval.io.grammar import atof

if TYPE_CHECKING:
    from heta_eval.trec_eval.compute import TrecEvalResult
    from heta_eval.trec_eval.options import TrecEvalOptions

__all__ = ["MISSING", "ZscoreTable", "apply_zscores", "is_negative_nan", "read_zscores"]

# trec_eval's MISSING_ZSCORE_VALUE.
MISSING = -1000000.0


def read_zscores(path: str) -> ZscoreTable:
    """Read a zscore file (OSError, or ValueError naming the file and line)."""
    with open(path, "rb") as handle:
        return ZscoreTable.parse(handle.read(), path)


@dataclass(frozen=True)
class ZscoreTable:
    """The entries in trec_eval's order (sorted by query id, then measure name, as ``strcmp``
    compares them; ``qsort`` keeps equal ones in file order) and each query's span of them."""

    entries: tuple[tuple[bytes, bytes, float, float], ...]
    queries: tuple[tuple[bytes, int, int], ...]  # (qid, first entry, number of entries)
    name: str

    @classmethod
    def parse(cls, data: bytes, name: str) -> ZscoreTable:
        if not data:
            raise ValueError(f"{name}: empty zscore file (trec_eval 9.0.8 cannot read it)")
        if not data.endswith(b"\n"):
            data += b"\n"
        lines = data[:-1].split(b"\n")
        rows = []
        for number, raw in enumerate(lines, 1):
            if raw.startswith(b"\0"):  # trec_eval's reading stops at a NUL starting a line
                break
            if b"\0" in raw:
                raise ValueError(f"{name}: line {number}: a NUL byte (trec_eval 9.0.8 crashes)")
            parts = raw.split()  # bytes.split: ASCII whitespace, C's isspace
            if len(parts) != 4:
                raise ValueError(
                    f"{name}: line {number}: malformed, expected 'qid measure mean stddev' "
                    "(trec_eval 9.0.8: Malformed line)"
                )
            rows.append(
                (
                    parts[0],
                    parts[1],
                    atof(parts[2].decode("latin-1")),
                    atof(parts[3].decode("latin-1")),
                )
            )
        if not rows:
            raise ValueError(f"{name}: no zscore lines (trec_eval 9.0.8 crashes)")
        rows.sort(key=lambda row: (row[0], row[1]))  # stable, as glibc's merge sort
        queries: list[tuple[bytes, int, int]] = []
        for index, row in enumerate(rows):
            if not queries or queries[-1][0] != row[0]:
                queries.append((row[0], index, 0))
            qid, first, count = queries[-1]
            queries[-1] = (qid, first, count + 1)
        return cls(tuple(rows), tuple(queries), name)

    def convert(self, qid: str, measure: str, value: float) -> float:
        """``value`` of ``measure`` in ``qid`` as trec_eval's ``te_convert_to_zscore``."""
        queries = self.queries
        query = self._search(
            len(queries), qid.encode(), lambda i: queries[i][0], len(queries), f"query {qid}"
        )
        if query is None:
            return MISSING
        _, first, count = queries[query]
        found = self._search(
            count,
            measure.encode(),
            lambda i: self.entries[first + i][1],
            len(self.entries) - first,  # past the last query's entries: outside the table
            f"query {qid}, measure {measure}",
        )
        if found is None:
            return MISSING
        _, _, mean, stddev = self.entries[first + found]
        if stddev:  # NaN included, as C's test
            return (value - mean) / stddev
        return 0.0 if value == mean else MISSING

    def _search(
        self, end: int, key: bytes, at: Callable[[int], bytes], limit: int, what: str
    ) -> int | None:
        """trec_eval's find_qid/find_meas: a binary search over ``[0, end]``, one past the end
        (``at(i)``: the key at ``i``; ``limit``: the first index outside trec_eval's table)."""
        start = 0
        while start <= end:
            current = (start + end) // 2
            if current >= limit:
                raise ValueError(
                    f"{self.name}: looking up {what} (after every name the file holds there), "
                    "trec_eval 9.0.8 reads past the end of its zscore table: undefined, it "
                    "mostly crashes (add the entry, or a last line such as '~ ~ 0 1')"
                )
            probe = at(current)
            if key < probe:
                end = current - 1
            elif key > probe:
                start = current + 1
            else:
                return current
        return None


def is_negative_nan(value: float) -> bool:
    """Whether a NaN has its sign bit set (printf prints it ``-nan``)."""
    return math.isnan(value) and math.copysign(1.0, value) < 0


def apply_zscores(options: TrecEvalOptions, result: TrecEvalResult, table: ZscoreTable) -> None:
    """Convert ``result``'s per-query values in place, as trec_eval converts each evaluated
    query's values (``num_q``'s and ``relstring``'s too: their values are never printed,
    but looking them up can crash trec_eval)."""
    for qid in result.query_ids:
        values = result.values[qid]
        for measure in options.measures:
            if measure.family.name == "runid":  # no value
                continue
            for key, name in zip(measure.keys(), measure.printed_names(), strict=True):
                value = values.get(key, 0.0)
                if math.isnan(value):  # trec_eval's NaNs are x86's default one, sign set
                    value = math.copysign(math.nan, -1.0)
                converted = table.convert(qid, name, value)
                if key in values:
                    values[key] = converted
