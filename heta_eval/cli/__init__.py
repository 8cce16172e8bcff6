"""The ``heta-eval`` command line. Each sub-command lives in its own module and registers
itself through ``add_parser(subparsers)``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module

__all__ = ["main"]

# Module names under heta_eval.cli; each defines add_parser(subparsers) -> None and sets
# a ``handler`` default (a callable taking the parsed args and returning an exit code).
_COMMANDS = (
    "run",
    "evaluate",
    "fuse",
    "trec_eval",
    "datasets",
    "compare",
    "check",
    "leaderboard",
    "sweep",
    "ann",
    "report",
    "export",
)


# A reader that stops early (`heta-eval datasets list | head`) closes the pipe: the command
# then ends quietly with the status a shell gives a process killed by SIGPIPE (128 + 13), as
# `yes | head` does, so `set -o pipefail` scripts see what they see for any Unix filter.
CLOSED_STDOUT_STATUS = 141


class CliError(Exception):
    """A user-facing error: printed without a traceback, exit status 2."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with a known ``command``, only that sub-command's module is imported (a
    one-shot command starts fast), else all of them (help, a typo'd command)."""
    parser = argparse.ArgumentParser(
        prog="heta-eval",
        description="Evaluate retrieval and RAG systems on BEIR and custom benchmarks.",
        epilog="Example: heta-eval run --dataset scifact --modes keyword_search",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from heta_eval import __version__

    parser.add_argument("--version", action="version", version=f"heta-eval {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in (command,) if command in _COMMANDS else _COMMANDS:
        try:
            module = import_module(f"heta_eval.cli.{name}")
        except ModuleNotFoundError as error:
            if error.name == f"heta_eval.cli.{name}":
                continue  # command not built yet
            raise
        module.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``heta-eval`` command; its exit status."""
    try:
        try:
            return _run(argv)
        finally:
            sys.stdout.flush()  # buffered output meets a closed pipe here, not at exit
    except BrokenPipeError:
        _discard_stdout()
        return CLOSED_STDOUT_STATUS


def write_stdout(data: bytes) -> None:
    """Write ``data`` to standard output, every byte of it or a :class:`BrokenPipeError`.

    One large buffered write into a pipe whose reader left (``| head -1``) can end without
    an error; writing to the descriptor directly, in a loop, always reports it.
    """
    sys.stdout.flush()
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by an object without one
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def _discard_stdout() -> None:
    """Point stdout at devnull: Python flushes it once more at exit, which must not fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout replaced by an object without a descriptor
        pass


def _run(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    try:
        args = parser.parse_args(argv)
    except CliError as error:  # a number outside its option's rule (heta_eval.cli.numbers)
        print(f"heta-eval {argv[0]}: error: {error}", file=sys.stderr)
        return 2
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    from heta_eval import interrupts
    from heta_eval.cli.log_lines import printed_log_lines

    try:
        # Ctrl-C and SIGTERM: stop within 2 s, say what is kept; the library's log lines
        # (status, warnings) printed on stderr while the command runs, and only then.
        with interrupts.handled(), printed_log_lines():
            return int(args.handler(args) or 0)
    except CliError as error:
        print(f"heta-eval {args.command}: error: {error}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        from heta_eval.extras import MissingExtraError, extra_for

        if extra_for(error) is None:
            raise
        print(
            f"heta-eval {args.command}: error: {MissingExtraError(error.name or '')}",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt as error:
        return interrupts.report(error)


if __name__ == "__main__":
    sys.exit(main())
