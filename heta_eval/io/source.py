"""Opening a run or qrels input once: a path, ``-`` (standard input), a pipe or FIFO, a stream
or bytes, as one buffer every reader parses.

A regular file is memory-mapped (no copy; the compiled parser reads the map in slices); any
other input (a pipe, a FIFO such as bash's ``<(...)``, standard input, a stream) is read to
its end into memory, exactly once, and never reopened: the format is told from the buffer.

>>> source = open_input(b"q1 Q0 d1 1 2.5 t\\n")
>>> source.name, len(source), source.is_json()
('<bytes>', 17, False)
"""

from __future__ import annotations

import mmap
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heta_eval.io.grammar import BOM

__all__ = ["InputBytes", "input_size", "is_in_memory", "open_input"]

_SPACE = b" \t\n\r\x0b\x0c"
#: The name standard input goes by on a command line.
STDIN = "-"


@dataclass(eq=False)
class InputBytes:
    """The bytes of one input, read once. ``name`` is what error messages call it (the path,
    ``<stdin>``, ``<bytes>``); ``data`` is ``bytes`` or a read-only memory map."""

    name: str
    data: Any
    regular_file: bool = False

    def __len__(self) -> int:
        return len(self.data)

    def start(self, drop_bom: bool = True) -> int:
        """Where the text starts: after a leading UTF-8 BOM when ``drop_bom``."""
        return len(BOM) if drop_bom and self.data[: len(BOM)] == BOM else 0

    def is_json(self) -> bool:
        """BEIR results JSON: the first byte after a BOM and ASCII whitespace is ``{``."""
        head = bytes(self.data[: 1 << 12])
        return head[self.start() :].lstrip(_SPACE).startswith(b"{")

    def is_blank(self) -> bool:
        """Nothing but ASCII whitespace (checked for inputs up to 64 KiB; a larger one's
        reader names its first blank line)."""
        start = self.start()
        return len(self) - start <= 1 << 16 and not bytes(self.data[start:]).strip(_SPACE)

    def release(self) -> None:
        """Hand a memory-mapped file's pages back once a reader is done with them: they stop
        counting in this process's memory (a run is scored after it is read), and a later read
        of the same input finds them in the page cache again. Bytes in memory are kept."""
        if isinstance(self.data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            self.data.madvise(mmap.MADV_DONTNEED)

    def lines(self, drop_bom: bool = True) -> Iterator[tuple[int, bytes]]:
        """``(line number, bytes)`` of every line, split on ``\\n`` only (a ``\\r`` or
        ``\\x1c`` inside a line is a byte of that line, as in trec_eval)."""
        data = self.data
        pos = self.start(drop_bom)
        end = len(data)
        number = 0
        while pos < end:
            stop = data.find(b"\n", pos)
            if stop < 0:
                stop = end
            number += 1
            yield number, bytes(data[pos:stop])
            pos = stop + 1


def open_input(source: Any) -> InputBytes:
    """``source`` as :class:`InputBytes`: a path (``str`` or path-like; ``-`` is standard
    input), an open binary or text stream, ``bytes``, or an :class:`InputBytes` (returned
    as is). Raises ``OSError`` for a path that cannot be read."""
    if isinstance(source, InputBytes):
        return source
    if isinstance(source, bytes | bytearray | memoryview):
        return InputBytes("<bytes>", bytes(source))
    if hasattr(source, "read"):
        return InputBytes(str(getattr(source, "name", "<stream>")), _read_stream(source))
    if not isinstance(source, str | os.PathLike):
        raise TypeError(f"expected a path, '-', a stream or bytes, got {type(source).__name__}")
    if os.fspath(source) == STDIN:
        return InputBytes("<stdin>", _read_stream(sys.stdin))
    path = Path(source)
    with path.open("rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return InputBytes(str(path), handle.read())  # a pipe or FIFO: once, to its end
        if not os.fstat(handle.fileno()).st_size:
            return InputBytes(str(path), b"", regular_file=True)
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    return InputBytes(str(path), mapped, regular_file=True)


def _read_stream(stream: Any) -> bytes:
    binary = getattr(stream, "buffer", stream)  # sys.stdin: its bytes, not decoded text
    data = binary.read()
    return data.encode("utf-8") if isinstance(data, str) else bytes(data)


def is_in_memory(source: Any) -> bool:
    """True for a run or qrels already in memory (a mapping, a DataFrame, a ranx object):
    not something :func:`open_input` reads."""
    readable = (str, os.PathLike, bytes, bytearray, memoryview, InputBytes)
    return not isinstance(source, readable) and not hasattr(source, "read")


def input_size(source: Any) -> int | None:
    """The size in bytes of an opened input or of a regular file, without reading it; None
    for a pipe, a FIFO or standard input not yet opened (or a path that cannot be sized)."""
    if isinstance(source, InputBytes):
        return len(source)
    if not isinstance(source, str | os.PathLike) or os.fspath(source) == STDIN:
        return None
    try:
        info = os.stat(source)
    except OSError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None
