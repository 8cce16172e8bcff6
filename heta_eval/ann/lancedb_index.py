"""LanceDB in a local folder: a table of the vectors, searched by brute force (``lancedb``) or
through an IVF-PQ (``lancedb-ivfpq``) or IVF-HNSW-SQ (``lancedb-hnsw``) index, by dot
product. LanceDB's ``dot`` distance is ``1 - q.v``; the score is ``1 - distance``."""

from __future__ import annotations

import shutil
import tempfile
import time
import weakref
from typing import Any

import numpy as np

from heta_eval.ann.base import AnnError, library, padded, version
from heta_eval.ann.spec import AnnSpec

__all__ = ["LanceIndex"]

#: Query vectors per LanceDB search call.
_QUERY_BATCH = 256


class LanceIndex:
    """A LanceDB table over ``vectors`` (float32, ``(n, d)``) in a temporary folder."""

    def __init__(self, spec: AnnSpec, vectors: np.ndarray) -> None:
        lancedb = library("lancedb", spec)
        pa = library("pyarrow", spec)
        self.spec = spec
        started = time.perf_counter()
        n, d = vectors.shape
        self._folder = tempfile.mkdtemp(prefix="heta-eval-lancedb-")
        # The folder goes with the index, closed or not.
        self._remove = weakref.finalize(self, shutil.rmtree, self._folder, True)
        column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), d)
        table = pa.table({"row": pa.array(np.arange(n, dtype=np.int64)), "vector": column})
        self._table = lancedb.connect(self._folder).create_table("vectors", table)
        settings = dict(spec.settings)
        index = "none (brute force)"
        if spec.kind != "lancedb":
            index = self._index(lancedb, settings, d)
        self.record: dict[str, Any] = {
            "library": "lancedb",
            "version": version("lancedb"),
            "index": index,
            "metric": "dot",
            "settings": settings,
            "vectors": n,
            "dimension": d,
            "build_seconds": round(time.perf_counter() - started, 3),
        }

    def _index(self, lancedb: Any, settings: dict[str, int], dimension: int) -> str:
        from_index = library("lancedb.index", self.spec)
        build = {k: settings[k] for k in ("partitions",) if k in settings}
        options: dict[str, Any] = {"distance_type": "dot"}
        if "partitions" in build:
            options["num_partitions"] = build["partitions"]
        if self.spec.kind == "lancedb-ivfpq":
            if "sub_vectors" in settings:
                if dimension % settings["sub_vectors"]:
                    raise AnnError(
                        f"lancedb-ivfpq: sub_vectors={settings['sub_vectors']} does "
                        f"not divide the dimension {dimension}"
                    )
                options["num_sub_vectors"] = settings["sub_vectors"]
            config = from_index.IvfPq(**options)
        else:
            options.update(
                {name: settings[name] for name in ("m", "ef_construction") if name in settings}
            )
            config = from_index.IvfHnswSq(**options)
        try:
            self._table.create_index("vector", config=config)
        except (ValueError, RuntimeError, OSError) as error:
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise AnnError(
                f"{self.spec.label}: LanceDB could not build the index ({first})"
            ) from None
        return type(config).__name__

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        settings = self.spec.settings
        rows: list[np.ndarray] = []
        scores: list[np.ndarray] = []
        for first in range(0, len(queries), _QUERY_BATCH):
            batch = np.asarray(queries[first : first + _QUERY_BATCH], dtype=np.float32)
            query = self._table.search(list(batch)).distance_type("dot").limit(k)
            if "nprobes" in settings:
                query = query.nprobes(settings["nprobes"])
            if "refine" in settings:
                query = query.refine_factor(settings["refine"])
            if "ef" in settings:  # LanceDB refuses ef < k; FAISS searches max(efSearch, k)
                query = query.ef(max(settings["ef"], k))
            try:
                found = query.select(["row", "_distance"]).to_arrow()
            except (ValueError, RuntimeError, OSError) as error:
                first = (str(error).strip().splitlines() or [type(error).__name__])[0]
                raise AnnError(f"{self.spec.label}: LanceDB could not search ({first})") from None
            names = found.column_names
            which = found.column("query_index").to_numpy() if "query_index" in names else None
            row = found.column("row").to_numpy().astype(np.int64)
            score = (1 - found.column("_distance").to_numpy()).astype(np.float32)
            for i in range(len(batch)):
                mine = slice(None) if which is None else which == i
                order = np.argsort(-score[mine], kind="stable")
                rows.append(row[mine][order])
                scores.append(score[mine][order])
        return padded(rows, scores, k)

    def close(self) -> None:
        self._remove()
