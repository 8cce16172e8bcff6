"""The readers' size thresholds, in one table. Each is a speed choice only: the same input
reads to the same values on either side of every threshold.

========================  ==========  ==================================================
name                      value       effect
========================  ==========  ==================================================
``PARSE_SLICED_BYTES``    1 MiB       from this size the compiled run parser reads the
                                      buffer in slices, about two per core (threads)
``COPY_SLICED_ROWS``      100,000     from this many rows the compiled run parser copies
                                      doc ids in slices, about two per core
``PYARROW_BLOCK_BYTES``   16 MiB      pyarrow's CSV block (one thread a block)
``SCAN_WINDOW_BYTES``     64 KiB      the run dict reader's empty-field and ASCII scan
                                      reads the buffer in windows of this size: its
                                      temporary arrays stay in cache and are reused (a
                                      pass over the whole file at once touches fresh
                                      memory: several times slower)
========================  ==========  ==================================================

The metric engine's own thresholds (when to use it, how to split queries over threads) are
not readers' and live with it (:mod:`heta_eval.providers`).
"""

from __future__ import annotations

PARSE_SLICED_BYTES = 1 << 20
COPY_SLICED_ROWS = 100_000
PYARROW_BLOCK_BYTES = 1 << 24
SCAN_WINDOW_BYTES = 1 << 16
