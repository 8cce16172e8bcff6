"""The options of ``heta-eval run`` that say what system runs: your own service (``--kb-url``,
``--kb-header``, ``--rate`` and the bearer token of ``HETA_EVAL_KB_TOKEN``), your run files
(``--kb-run``), and your own vectors for the reference (``--corpus-embeddings``,
``--query-embeddings``, ``--score-function``, ``--ann``).

A header is ``'Name: value'``; the value may name environment variables as ``${NAME}``, so
a secret stays out of your shell history and your scripts:

>>> import os
>>> os.environ["DEMO_KEY"] = "s3cret"
>>> parse_header("X-Api-Key: ${DEMO_KEY}")
('X-Api-Key', 's3cret')

No message ever shows a header's value, only its name; a value, and every form a service
may echo it in, is redacted from every reply (:mod:`heta_eval.redaction`).
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any

from heta_eval.cli import CliError
from heta_eval.io.ids import mode_name_problem

__all__ = [
    "add_kb_arguments",
    "add_vector_arguments",
    "given_vectors",
    "knowledge_base_from_args",
    "parse_header",
    "run_file_modes",
]

# RFC 9110 token characters: what a header name may hold.
_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def add_kb_arguments(group: Any) -> None:
    """Add ``--kb-url``, ``--kb-header`` and ``--rate`` to an argument group."""
    group.add_argument("--kb-url", help="evaluate a deployed service: its query endpoint URL")
    group.add_argument(
        "--kb-header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="with --kb-url: a header sent with every query (repeatable); VALUE may name "
        "environment variables as ${NAME}; results and messages record only the name. "
        "HETA_EVAL_KB_TOKEN, when set, is sent as 'Authorization: Bearer <token>'",
    )
    group.add_argument(
        "--kb-run",
        action="append",
        default=[],
        metavar="MODE=FILE",
        help="evaluate run files as the system (repeatable): MODE's answer to a case is its "
        "query's ranking in FILE (a fused run, another toolkit's); the modes are these",
    )
    group.add_argument(
        "--rate",
        metavar="N/s",
        help="with --kb-url: start at most N queries per second (N/s, N/min; retries count)",
    )


def parse_header(text: str) -> tuple[str, str]:
    """``(name, value)`` of ``'Name: value'``, with ``${VAR}`` replaced by its value."""
    name, colon, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not colon or not _NAME.fullmatch(name):
        # The text may be a bare secret (a value without its name): never echo it.
        raise CliError("--kb-header takes 'Name: value', e.g. 'X-Api-Key: ${RAG_API_KEY}'")

    def variable(match: re.Match[str]) -> str:
        found = os.environ.get(match.group(1))
        if found is None:
            raise CliError(f"--kb-header {name}: environment variable {match.group(1)} is not set")
        return found

    value = _VARIABLE.sub(variable, value)
    if not value:
        raise CliError(f"--kb-header {name}: the value is empty")
    if "\r" in value or "\n" in value:
        raise CliError(f"--kb-header {name}: the value holds a line break")
    if not value.isascii():  # HTTP sends header values as ASCII
        raise CliError(f"--kb-header {name}: the value holds a character outside ASCII")
    return name, value


def run_file_modes(args: argparse.Namespace) -> dict[str, Path]:
    """``--kb-run MODE=FILE``s as ``{mode: file}`` (empty without them), checked."""
    runs: dict[str, Path] = {}
    for text in args.kb_run:
        mode, equals, file = text.partition("=")
        mode, file = mode.strip(), file.strip()
        if not equals or not mode or not file:
            raise CliError(f"--kb-run takes MODE=FILE, e.g. rrf=fused.trec; got {text!r}")
        if problem := mode_name_problem(mode):
            raise CliError(f"--kb-run: {problem}")
        if mode in runs:
            raise CliError(f"--kb-run: mode {mode!r} is given twice")
        if not Path(file).is_file():
            raise CliError(f"--kb-run {mode}: {file} is not a file")
        runs[mode] = Path(file)
    if runs and args.kb_url:
        raise CliError("--kb-run and --kb-url are two systems: give one")
    return runs


def knowledge_base_from_args(args: argparse.Namespace, modes: tuple[str, ...]) -> Any:
    """The :class:`~heta_eval.systems.HttpKnowledgeBase` of ``--kb-url``, the
    :class:`~heta_eval.systems.run_files.RunFileKnowledgeBase` of ``--kb-run``, else ``None``."""
    if runs := run_file_modes(args):
        from heta_eval.systems.run_files import RunFileKnowledgeBase

        try:
            return RunFileKnowledgeBase(runs)
        except (ValueError, OSError) as error:  # TrecFormatError names the file and line
            raise CliError(str(error).splitlines()[0]) from None
    if not args.kb_url:
        for option, value in (("--kb-header", args.kb_header), ("--rate", args.rate)):
            if value:
                raise CliError(f"{option} goes with --kb-url (your own service)")
        return None
    headers: dict[str, str] = {}
    for text in args.kb_header:
        name, value = parse_header(text)
        if name.lower() in (known.lower() for known in headers):
            raise CliError(f"--kb-header {name} is given twice")
        headers[name] = value
    from heta_eval import config
    from heta_eval.remote import RequestRate
    from heta_eval.systems import HttpKnowledgeBase

    try:
        rate = RequestRate.parse(args.rate) if args.rate else None
    except ValueError as error:
        raise CliError(f"--rate: {error}") from None
    return HttpKnowledgeBase(
        args.kb_url, modes=modes, headers=headers, token=config.kb_token(), rate=rate
    )


def add_vector_arguments(parser: Any) -> None:
    """Add ``--corpus-embeddings``, ``--query-embeddings`` and ``--score-function``."""
    vectors = parser.add_argument_group(
        "your own vectors (vector_search, hybrid_search; docs/scale.md)"
    )
    vectors.add_argument(
        "--corpus-embeddings",
        type=Path,
        metavar="C.npy",
        help="the documents' vectors instead of encoding them: a .npy of float16 or float32 "
        "rows, one per line of corpus.jsonl, in its order (memory-mapped; documents are not "
        "chunked)",
    )
    vectors.add_argument(
        "--query-embeddings",
        type=Path,
        metavar="Q.npy",
        help="the queries' vectors too: one row per line of queries.jsonl (default: the "
        "recipe's model encodes the queries)",
    )
    vectors.add_argument(
        "--score-function",
        choices=["cos_sim", "dot"],
        help="how vectors score (BEIR's names; default: cos_sim)",
    )
    vectors.add_argument(
        "--ann",
        metavar="KIND[:NAME=N,...]",
        help="search the vectors through an approximate index instead of exactly: faiss-flat, "
        "faiss-hnsw (M, efConstruction, efSearch), faiss-ivf (nlist, nprobe), qdrant, lancedb, "
        "lancedb-ivfpq, lancedb-hnsw; the modes are named after it (vector_search+faiss-hnsw; "
        "docs/ann.md)",
    )


def given_vectors(args: argparse.Namespace, modes: list[str]) -> dict[str, Any]:
    """``--corpus-embeddings`` / ``--query-embeddings`` described (header, size, SHA-256):
    what the recipe, and so the results folder, records of them."""
    if args.query_embeddings is not None and args.corpus_embeddings is None:
        raise CliError("--query-embeddings needs --corpus-embeddings")
    if args.corpus_embeddings is None:
        return {}
    if not {"vector_search", "hybrid_search"} & set(modes):
        raise CliError(
            "--corpus-embeddings is searched by vector_search and hybrid_search; "
            f"--modes has neither ({', '.join(modes)})"
        )
    from heta_eval.reference.given_vectors import VectorsError, VectorsFile

    try:
        progress = not args.quiet
        given = {"corpus_vectors": VectorsFile.describe(args.corpus_embeddings, progress=progress)}
        if args.query_embeddings is not None:
            given["query_vectors"] = VectorsFile.describe(args.query_embeddings, progress=progress)
    except VectorsError as error:
        raise CliError(str(error)) from None
    return given
