"""Embeddings are cached by the texts encoded: the same chunks of the same documents reuse
one entry whatever benchmark brought them (SciFact and SciFact claims), and a corpus that
shares most chunks with a cached one encodes only the rest. Real encoder, real files."""

from __future__ import annotations

import numpy as np

from heta_eval.evaluation import Document
from heta_eval.reference import Recipe

TEXTS = {
    "d1": "Cats purr when they are content.",
    "d2": "Dogs bark at strangers.",
    "d3": "Birds sing at dawn.",
}


def build(documents, cache):
    recipe = Recipe(modes=["vector_search"], dense={"precision": "float32"})
    return recipe.build("kb", documents, cache_dir=cache, progress=False)


def test_same_chunks_from_another_benchmark_reuse_the_entry(tmp_path):
    plain = [Document(id=d, text=t) for d, t in TEXTS.items()]
    # The claims adapter's form: the same text with sentence spans and other metadata.
    spanned = [
        Document(id=d, text=t, sentences=[(0, len(t))], metadata={"source": "claims"})
        for d, t in TEXTS.items()
    ]
    first = build(plain, tmp_path)
    second = build(spanned, tmp_path)
    assert first.build_info["embeddings"] == "built"
    assert second.build_info["embeddings"] == "cache"
    assert second.build_info["embeddings_path"] == first.build_info["embeddings_path"]
    assert second.encoder.calls == 0


def test_a_corpus_sharing_most_chunks_encodes_only_the_new_ones(tmp_path):
    first = build([Document(id=d, text=t) for d, t in TEXTS.items()], tmp_path)
    grown = {**TEXTS, "d4": "Fish breathe through gills."}
    second = build([Document(id=d, text=t) for d, t in grown.items()], tmp_path)
    assert second.build_info["embeddings"] == "built (reused 3 of 4)"
    assert second.encoder.calls == 1
    np.testing.assert_array_equal(second.embeddings[:3], first.embeddings)
    fresh = build([Document(id="d4", text=grown["d4"])], False)
    np.testing.assert_allclose(second.embeddings[3], fresh.embeddings[0], atol=1e-6)
