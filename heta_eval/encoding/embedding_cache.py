"""Embeddings cached by what was encoded: the chunk texts and the encoder's identity (model,
precision, device kind, encoding version).

An entry's key is a fingerprint of the exact texts given to the encoder (not of the corpus
or the chunking settings that produced them), so two benchmarks over the same documents
with the same chunks (SciFact and SciFact claims) share one entry. Each entry also keeps a
SHA-256 prefix per text: when no entry matches as a whole, vectors of texts that an entry of
the same model and precision already holds are reused, and only the rest is encoded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval import interrupts
from heta_eval.cache.store import ArtifactCache, cache_key, load_array, save_array
from heta_eval.encoding.partial_embeddings import PartialEmbeddings, kept_rows

__all__ = ["Encode", "cached_embeddings", "text_digests"]

#: ``encode(texts, keep)``: the vectors of ``texts``; ``keep(rows, vectors)`` is called with
#: each finished batch where the encoder can (rows index ``texts``), to keep it for a rerun.
Encode = Callable[[list[str], Callable[[np.ndarray, np.ndarray], None]], Any]

_DIGEST_BYTES = 16


def text_digests(texts: Sequence[str]) -> np.ndarray:
    """One 16-byte SHA-256 prefix per text (dtype ``S16``, saved without pickle).

    >>> text_digests(["a", "a", "b"]).tolist()[0] == text_digests(["a"]).tolist()[0]
    True
    """
    return np.array(
        [hashlib.sha256(t.encode("utf-8")).digest()[:_DIGEST_BYTES] for t in texts],
        dtype=f"S{_DIGEST_BYTES}",
    )


def _reusable(root: Path, meta: dict[str, Any]) -> dict[bytes, tuple[Path, int]]:
    """``{digest: (vectors file, row)}`` over the complete entries made with the same model
    and precision, then the kept batches of unfinished encodes (:mod:`.partial_embeddings`)."""
    found: dict[bytes, tuple[Path, int]] = {}
    for entry in sorted(root.glob("dense-*/meta.json")):
        folder = entry.parent
        try:
            if json.loads(entry.read_text("utf-8")) != meta or not (folder / "COMPLETE").exists():
                continue
            digests = load_array(folder / "digests.npy")
        except (OSError, ValueError):
            continue  # unreadable entry: ignore it, never trust it
        for row, digest in enumerate(digests.tolist()):
            found.setdefault(digest, (folder / "embeddings.npy", row))
    for digest, place in kept_rows(root, meta).items():
        found.setdefault(digest, place)
    return found


def _encode_reusing(
    root: Path,
    meta: dict[str, Any],
    texts: Sequence[str],
    digests: np.ndarray,
    encode: Encode,
    target: Path,
    entry_key: str,
) -> int:
    """Write the vectors of ``texts`` to ``target`` (``.npy``): copied where an entry (or an
    unfinished encode's kept batches) holds the same text, encoded otherwise. Returns how
    many texts were encoded. The matrix is assembled on disk, never whole in memory
    (``encode`` may return a memory map). Finished batches are kept as they come (see
    :mod:`.partial_embeddings`), so an interrupted encode loses at most its last seconds."""
    known = _reusable(root, meta)
    keys = digests.tolist()
    missing = [i for i, key in enumerate(keys) if key not in known]
    partial = PartialEmbeddings(root, entry_key, meta, digests[missing], len(keys) - len(missing))
    interrupts.keep("embeddings", partial.note)
    try:
        with interrupts.phase(f"encoding {len(missing):,} passages"):
            fresh = _encode_keeping(encode, [texts[i] for i in missing], partial)
    finally:
        partial.flush()  # what finished, also when interrupted or failed
    if len(missing) == len(texts):
        assert fresh is not None
        save_array(target, fresh)
        interrupts.keep("embeddings", None)
        return len(texts)
    sources: dict[Path, np.ndarray] = {}

    def stored(key: bytes) -> np.ndarray:
        file, row = known[key]
        if file not in sources:
            sources[file] = np.load(file, mmap_mode="r")
        return sources[file][row]

    sample = fresh[0] if fresh is not None else stored(keys[0])
    out = np.lib.format.open_memmap(
        target, mode="w+", dtype=np.float32, shape=(len(keys), sample.shape[0])
    )
    for i, key in enumerate(keys):
        if key in known:
            out[i] = stored(key)
    if fresh is not None:
        out[missing] = fresh
    out.flush()
    del out
    interrupts.keep("embeddings", None)
    return len(missing)


def _encode_keeping(encode: Encode, texts: list[str], partial: PartialEmbeddings) -> Any:
    """``encode(texts, partial.add)``: each finished batch is kept as it comes; None when
    there is nothing to encode."""
    return np.asarray(encode(texts, partial.add)) if texts else None


def cached_embeddings(
    cache: ArtifactCache,
    identity: Mapping[str, Any],
    texts: Sequence[str],
    encode: Encode,
    *,
    mapped: bool = False,
) -> tuple[np.ndarray, str, Path]:
    """The embeddings of ``texts`` from the cache, building (and partly reusing) on a miss.

    Returns the vectors (a read-only memory map of the entry with ``mapped=True``: the
    caller never holds the whole matrix), how they were obtained (``"cache"``, ``"built"``
    or ``"built (reused N of M)"``) and the entry's folder. An encode that stops early
    (Ctrl-C, a crash) keeps its finished batches; the next call encodes only the rest.
    """
    digests = text_digests(texts)
    # What shapes the vectors besides the texts (kb.dense.embedding_identity: model, resolved
    # precision with its int8 scheme, device kind, encoding version): only equal identities
    # share an entry or reuse each other's rows.
    meta = json.loads(json.dumps(dict(identity), sort_keys=True))
    whole = hashlib.sha256(digests.tobytes()).hexdigest()
    key = cache_key("dense-texts", meta, whole)
    encoded = len(texts)

    def build(folder: Path) -> None:
        nonlocal encoded
        encoded = _encode_reusing(
            cache.root, meta, texts, digests, encode, folder / "embeddings.npy", key
        )
        save_array(folder / "digests.npy", digests)
        (folder / "meta.json").write_text(json.dumps(meta) + "\n", encoding="utf-8")

    path, reused = cache.get_or_build("dense", key, build)
    PartialEmbeddings(cache.root, key, meta, digests[:0]).discard()  # the entry holds it all
    if reused:
        how = "cache"
    elif encoded < len(texts):
        how = f"built (reused {len(texts) - encoded} of {len(texts)})"
    else:
        how = "built"
    if mapped:
        return np.load(path / "embeddings.npy", mmap_mode="r", allow_pickle=False), how, path
    return load_array(path / "embeddings.npy"), how, path
