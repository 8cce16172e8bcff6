"""The content fingerprint of a corpus: the one hash of the documents that both the artifact
cache (:mod:`heta_eval.cache.store`, its keys) and the runner (a results folder resumes only on
the same documents) use, taken once per run."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from heta_eval.models.records import Document

__all__ = ["corpus_fingerprint"]


def corpus_fingerprint(documents: Iterable[Document], *, ids: set[str] | None = None) -> str:
    """SHA-256 over every document's id, title, text, sentence and page spans, in order;
    ``ids``, when given, collects the document ids on the same pass.

    >>> seen: set[str] = set()
    >>> a = corpus_fingerprint([Document(id="1", text="x")], ids=seen)
    >>> a == corpus_fingerprint([Document(id="1", text="y")]), seen
    (False, {'1'})
    """
    digest = hashlib.sha256()
    for doc in documents:
        record = [doc.id, doc.title, doc.text, doc.sentences, doc.pages]
        digest.update(json.dumps(record, ensure_ascii=False).encode())
        digest.update(b"\n")
        if ids is not None:
            ids.add(doc.id)
    return digest.hexdigest()
