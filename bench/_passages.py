"""Passages of a BEIR corpus for the GPU benchmarks (no dependency beyond the standard
library, so that it loads where only torch is installed)."""

from __future__ import annotations

import json
from pathlib import Path


def read_passages(path: Path, n: int | None = None) -> list[str]:
    """``n`` passages (title + " " + text, as BEIR encodes them), the corpus repeated as
    often as needed (the corpus once where ``n`` is None); a line that is not a BEIR
    corpus line stops the script, naming it."""
    texts = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                try:
                    doc = json.loads(line)
                    texts.append(f"{doc.get('title', '')} {doc['text']}".strip())
                except (ValueError, KeyError, TypeError) as error:
                    raise SystemExit(f"{path}:{number}: not a BEIR corpus line ({error})") from None
    if not texts:
        raise SystemExit(f"{path}: no passages")
    return texts if n is None else (texts * (n // len(texts) + 1))[:n]
