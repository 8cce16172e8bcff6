"""What the command line prints of the library's log records.

Library code never prints: each module logs through ``logging.getLogger(__name__)``
(``heta_eval.*``); status lines at INFO, what warns the user at WARNING. While a command
runs, :func:`printed_log_lines` shows those records as the command's own lines: each
record's message alone (no level, no logger name), on standard error, the stream every
such line went to when the library printed it. ``--quiet`` needs nothing here: the library
logs its progress lines only for a call made with progress on (``progress=not args.quiet``).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["printed_log_lines"]


class _StandardErrorLines(logging.StreamHandler):
    """Each record's message as one line on ``sys.stderr`` as it is when the record comes
    (a test's captured stream, a redirected one), flushed at once as a print was."""

    def __init__(self) -> None:
        logging.Handler.__init__(self, logging.INFO)
        self.setFormatter(logging.Formatter("%(message)s"))

    @property
    def stream(self) -> TextIO:  # type: ignore[override]
        return sys.stderr


@contextmanager
def printed_log_lines() -> Iterator[None]:
    """Print the ``heta_eval`` loggers' records of INFO and above while the block runs.

    They are printed here only (not passed on to handlers of the root logger, which would
    print them a second time); on leaving, the ``heta_eval`` logger is as it was, so a
    program that calls :func:`heta_eval.cli.main` twice gets each line once.

    >>> import io, logging, sys
    >>> sys.stderr, saved = io.StringIO(), sys.stderr
    >>> try:
    ...     with printed_log_lines():
    ...         logging.getLogger("heta_eval.report.hook").info("report: out/report.html")
    ...     logging.getLogger("heta_eval.report.hook").info("not shown: no handler now")
    ...     said = sys.stderr.getvalue()
    ... finally:
    ...     sys.stderr = saved
    >>> said
    'report: out/report.html\\n'
    """
    logger = logging.getLogger("heta_eval")
    if any(isinstance(handler, _StandardErrorLines) for handler in logger.handlers):
        yield  # an enclosing command prints them already
        return
    handler = _StandardErrorLines()
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
