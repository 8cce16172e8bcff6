"""How tokenized texts are shaped for the model, so that a text's vector depends on the text
and the encoding route only, never on the texts encoded with it.

Padding and batch shapes change the arithmetic: a longer padded length changes how the
attention's sums are blocked, a taller batch can change which matrix kernel runs, and a text
encoded beside others came out different in its last bits (bfloat16: up to 1e-3), so a
corpus's vectors, and through the embedding cache its nDCG, depended on which texts had shared
a batch. Two shapes fix that:

* :func:`alone` (the CPU): each text runs by itself, cut to its own tokens (no padding), one
  text per thread, each single-threaded; texts spread over the cores (no padding to pay for,
  no barrier between threads inside small matrix products, and a vector that does not depend
  on the thread count either);
* :class:`FixedShapes` (GPUs): batches of exactly ``rows`` texts and a length rounded up to a
  multiple of :data:`BUCKET` tokens, texts grouped by that length; a short batch is filled
  with copies of its first text, whose outputs are dropped. A text always runs in the same
  shape, and the rows of a batch are computed independently of each other.

>>> import numpy as np
>>> batch = {"input_ids": np.array([[101, 7, 102, 0], [101, 102, 0, 0]]),
...          "attention_mask": np.array([[1, 1, 1, 0], [1, 1, 0, 0]])}
>>> [one["input_ids"].tolist() for one in alone(batch)]
[[[101, 7, 102]], [[101, 102]]]
>>> shaper = FixedShapes(rows=4, max_length=256, pad_id=0)
>>> list(shaper.add(np.array([5, 9]), batch))
[]
>>> [(rows.tolist(), features["input_ids"].shape) for rows, features in shaper.flush()]
[([5, 9], (4, 32))]
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

__all__ = ["BUCKET", "FixedShapes", "alone", "shapes"]

#: A fixed-shape batch's length is its texts' token count rounded up to a multiple of this.
BUCKET = 32


def shapes(device_kind: str, rows: int) -> str:
    """The shaping on a kind of device, as the embedding identity records it: ``alone`` on
    the CPU, ``fixed:<rows>x<BUCKET>`` on a GPU (its vectors depend on the batch's rows).

    >>> shapes("cpu", 16), shapes("cuda", 512)
    ('alone', 'fixed:512x32')
    """
    return "alone" if device_kind == "cpu" else f"fixed:{rows}x{BUCKET}"


def _span(mask_row: np.ndarray) -> slice:
    """Where a row's tokens are (right or left padding: one run of ones)."""
    kept = np.flatnonzero(mask_row)
    return slice(int(kept[0]), int(kept[-1]) + 1) if len(kept) else slice(0, 1)


def alone(features: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    """Each text of a padded batch as a batch of one, cut to its own tokens."""
    mask = features["attention_mask"]
    out = []
    for row in range(len(mask)):
        span = _span(mask[row])
        out.append({name: value[row : row + 1, span] for name, value in features.items()})
    return out


class FixedShapes:
    """Regroups tokenized texts into batches of ``rows`` texts and one length per bucket
    (their token count rounded up to :data:`BUCKET`, at most ``max_length``).

    :meth:`add` takes a padded batch (row numbers and features) and yields every batch that
    fills up; :meth:`flush` yields the rest, each filled to ``rows`` with copies of its first
    text. Each yielded batch is ``(row numbers, features)``: the row numbers of its real texts,
    which come first; the model's outputs past them are to be dropped.
    """

    def __init__(self, rows: int, max_length: int, pad_id: int, left_padding: bool = False):
        if rows <= 0:
            raise ValueError(f"a fixed-shape batch needs at least one row, got {rows}")
        self.rows = rows
        self.max_length = max_length
        self.pad_id = pad_id
        self.left_padding = left_padding
        self._pending: dict[int, list[tuple[int, dict[str, np.ndarray]]]] = {}

    def bucket(self, tokens: int) -> int:
        """The padded length of a text of ``tokens`` tokens.

        >>> FixedShapes(8, 256, 0).bucket(33), FixedShapes(8, 250, 0).bucket(249)
        (64, 250)
        """
        return min(self.max_length, -(-max(tokens, 1) // BUCKET) * BUCKET)

    def add(
        self, rows: np.ndarray, features: dict[str, np.ndarray]
    ) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
        mask = features["attention_mask"]
        for index, row in enumerate(np.asarray(rows).tolist()):
            span = _span(mask[index])
            text = {name: value[index, span] for name, value in features.items()}
            length = self.bucket(span.stop - span.start)
            waiting = self._pending.setdefault(length, [])
            waiting.append((row, text))
            if len(waiting) == self.rows:
                del self._pending[length]
                yield self._batch(length, waiting)

    def flush(self) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
        for length in sorted(self._pending, reverse=True):
            yield self._batch(length, self._pending[length])
        self._pending.clear()

    def _batch(
        self, length: int, texts: list[tuple[int, dict[str, np.ndarray]]]
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        names = list(texts[0][1])
        filled = texts + [texts[0]] * (self.rows - len(texts))
        out = {}
        for name in names:
            pad = self.pad_id if name == "input_ids" else 0
            array = np.full((self.rows, length), pad, dtype=np.int64)
            for row, (_, text) in enumerate(filled):
                values = text[name]
                start = length - len(values) if self.left_padding else 0
                array[row, start : start + len(values)] = values
            out[name] = array
        return np.array([row for row, _ in texts], dtype=np.int64), out
