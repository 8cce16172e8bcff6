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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from heta_eval.kb.cache import ArtifactCache, cache_key, load_array, save_array

__all__ = ["cached_embeddings", "text_digests"]

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
    """``{digest: (entry, row)}`` over the complete entries made with the same model and
    precision."""
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
            found.setdefault(digest, (folder, row))
    return found


def _encode_reusing(
    root: Path,
    meta: dict[str, Any],
    texts: Sequence[str],
    digests: np.ndarray,
    encode: Any,
    target: Path,
) -> int:
    """Write the vectors of ``texts`` to ``target`` (``.npy``): copied where an entry holds
    the same text, encoded otherwise. Returns how many texts were encoded. The matrix is
    assembled on disk, never whole in memory (``encode`` may return a memory map)."""
    known = _reusable(root, meta)
    keys = digests.tolist()
    missing = [i for i, key in enumerate(keys) if key not in known]
    if len(missing) == len(texts):
        save_array(target, np.asarray(encode(list(texts))))
        return len(texts)
    fresh = np.asarray(encode([texts[i] for i in missing])) if missing else None
    sources: dict[Path, np.ndarray] = {}

    def stored(key: bytes) -> np.ndarray:
        folder, row = known[key]
        if folder not in sources:
            sources[folder] = np.load(folder / "embeddings.npy", mmap_mode="r")
        return sources[folder][row]

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
    return len(missing)


def cached_embeddings(
    cache: ArtifactCache,
    identity: Mapping[str, Any],
    texts: Sequence[str],
    encode: Any,
    *,
    mapped: bool = False,
) -> tuple[np.ndarray, str, Path]:
    """The embeddings of ``texts`` from the cache, building (and partly reusing) on a miss.

    Returns the vectors (a read-only memory map of the entry with ``mapped=True``: the
    caller never holds the whole matrix), how they were obtained (``"cache"``, ``"built"``
    or ``"built (reused N of M)"``) and the entry's folder.
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
            cache.root, meta, texts, digests, encode, folder / "embeddings.npy"
        )
        save_array(folder / "digests.npy", digests)
        (folder / "meta.json").write_text(json.dumps(meta) + "\n", encoding="utf-8")

    path, reused = cache.get_or_build("dense", key, build)
    if reused:
        how = "cache"
    elif encoded < len(texts):
        how = f"built (reused {len(texts) - encoded} of {len(texts)})"
    else:
        how = "built"
    if mapped:
        return np.load(path / "embeddings.npy", mmap_mode="r", allow_pickle=False), how, path
    return load_array(path / "embeddings.npy"), how, path
