"""One text, one vector: a text's vector depends on the text and the encoding route only, on
every route this machine runs (torch float32, bfloat16 and float16, ONNX Runtime int8,
OpenVINO int8), whatever the texts beside it, their order, the batch size or the number of
worker threads: byte for byte. Before, texts of different lengths were padded together and a
text's vector moved with its neighbours (bfloat16: 28 of 40 SciFact vectors changed between
two batchings), and through the embedding cache, a corpus's nDCG with them.

The GPU's fixed shapes (heta_eval.encoding.shapes.FixedShapes) are exercised here on the CPU (the
shaping code is the same; a GPU's kernels are checked by bench/gpu_encode.py on a GPU). Ray's
encode is checked in tests/scale/test_scale_ray.py (a system test)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from support.paths import shared_path

from heta_eval.cache.store import ArtifactCache
from heta_eval.encoding.dense import ENCODING_VERSION, DenseEncoder, embedding_identity
from heta_eval.encoding.embedding_cache import cached_embeddings
from heta_eval.encoding.onnx_int8 import onnxruntime_available
from heta_eval.encoding.openvino_int8 import openvino_available
from heta_eval.encoding.shapes import BUCKET, FixedShapes, shapes


def _texts() -> list[str]:
    """SciFact abstracts of mixed lengths (some truncated at 256 word pieces), SciFact claims,
    and odd strings: empty, one word, a long repeated word."""
    docs = []
    with shared_path("datasets", "beir", "scifact", "corpus.jsonl").open() as f:
        for line in f:
            doc = json.loads(line)
            docs.append(f"{doc.get('title', '')} {doc['text']}".strip())
            if len(docs) == 60:
                break
    docs.sort(key=len)
    abstracts = docs[::6]  # 10, from the shortest to the longest
    claims = []
    with shared_path("datasets", "beir", "scifact", "queries.jsonl").open() as f:
        for line in f:
            claims.append(json.loads(line)["text"])
            if len(claims) == 5:
                break
    return [*abstracts, *claims, "", "cat", "mitochondria " * 300]


TEXTS = _texts()
ROUTES = [
    "torch-float32",
    "torch-bfloat16",
    # float16 on a CPU is emulated (13-16 s here): CUDA's route, checked with the system tests
    pytest.param("torch-float16", marks=pytest.mark.system),
    pytest.param(
        "onnxruntime-int8",
        marks=pytest.mark.skipif(
            not onnxruntime_available(), reason="onnxruntime/onnx not installed (kb extra)"
        ),
    ),
    pytest.param(
        "openvino-int8",
        marks=pytest.mark.skipif(
            not openvino_available(), reason="openvino/nncf not installed (kb extra)"
        ),
    ),
]


def _shuffled(encoder: DenseEncoder, seed: int) -> np.ndarray:
    """The texts encoded in a shuffled order, put back in their own order."""
    order = list(range(len(TEXTS)))
    random.Random(seed).shuffle(order)
    vectors = encoder.encode([TEXTS[i] for i in order])
    back = np.empty_like(vectors)
    back[order] = vectors
    return back


@pytest.mark.parametrize("route", ROUTES)
def test_a_vector_is_the_same_bytes_however_its_text_is_batched(route: str) -> None:
    alone = DenseEncoder(device="cpu", precision=route)
    assert alone.shapes == "alone"
    expected = np.concatenate([alone.encode([text]) for text in TEXTS])  # one call each
    for seed, (batch_size, workers) in enumerate([(1, 2), (3, 1), (7, 2), (32, 2)]):
        encoder = DenseEncoder(
            device="cpu", precision=route, batch_size=batch_size, workers=workers
        )
        got = _shuffled(encoder, seed)
        differ = [
            TEXTS[i][:40] for i in range(len(TEXTS)) if got[i].tobytes() != expected[i].tobytes()
        ]
        assert not differ, (batch_size, workers, differ)
    # Units given by the caller (Ray's actors give theirs) change nothing either.
    units = [np.arange(0, len(TEXTS), 2), np.arange(1, len(TEXTS), 2)]
    assert alone.encode_batches(TEXTS, units).tobytes() == expected.tobytes()


@pytest.mark.parametrize("route", ["torch-float32", "torch-bfloat16"])
def test_fixed_shapes_give_a_text_the_same_bytes_in_any_batch(route: str) -> None:
    # The GPU's shaping, run on the CPU: batches of 8 rows, lengths in buckets of 32 tokens.
    def encoder(workers: int = 0) -> DenseEncoder:
        made = DenseEncoder(device="cpu", precision=route, batch_size=8, tokenizer_workers=workers)
        made.shapes = shapes("cuda", 8)
        return made

    expected = encoder().encode_batches(TEXTS, [np.array([i]) for i in range(len(TEXTS))])
    assert _shuffled(encoder(), 1).tobytes() == expected.tobytes()
    assert _shuffled(encoder(workers=2), 2).tobytes() == expected.tobytes()
    odd = [np.arange(0, 5), np.arange(5, len(TEXTS))[::-1]]
    assert encoder(workers=2).encode_batches(TEXTS, odd).tobytes() == expected.tobytes()


def test_fixed_shapes_group_texts_by_length_bucket_and_fill_short_batches() -> None:
    def padded(lengths: list[int], left: bool = False) -> dict[str, np.ndarray]:
        width = max(lengths)
        mask = np.zeros((len(lengths), width), dtype=np.int64)
        for row, n in enumerate(lengths):
            if left:
                mask[row, width - n :] = 1
            else:
                mask[row, :n] = 1
        ids = np.where(mask == 1, np.arange(1, width + 1)[None, :] + 1000, 0)
        return {"input_ids": ids, "attention_mask": mask}

    shaper = FixedShapes(rows=2, max_length=100, pad_id=0)
    full = list(shaper.add(np.array([10, 11, 12]), padded([5, 40, 31])))
    # 5 and 31 tokens share the first bucket (32): a full batch of 2 at once.
    assert [(rows.tolist(), f["input_ids"].shape) for rows, f in full] == [([10, 12], (2, 32))]
    assert full[0][1]["attention_mask"][1].sum() == 31
    rest = list(shaper.flush())
    assert len(rest) == 1
    rows, features = rest[0]
    assert rows.tolist() == [11] and features["input_ids"].shape == (2, 2 * BUCKET)
    # The short batch is filled with a copy of its first text.
    assert np.array_equal(features["input_ids"][0], features["input_ids"][1])
    assert shaper.bucket(100) == 100 and shaper.bucket(99) == 100  # capped at max_length
    # Left padding keeps the tokens at the end.
    left = FixedShapes(rows=1, max_length=64, pad_id=0, left_padding=True)
    ((_, features),) = list(left.add(np.array([0]), padded([3, 1], left=True)))[:1]
    assert features["attention_mask"][0].tolist() == [0] * 29 + [1, 1, 1]


def test_the_identity_records_the_shapes_and_old_vectors_are_not_served(tmp_path) -> None:
    cpu = embedding_identity(model="m", precision="bfloat16", device="cpu")
    assert cpu["shapes"] == "alone" and cpu["encoding"] == ENCODING_VERSION == 3
    gpu = embedding_identity(model="m", precision="float16", device="cuda", batch_size=256)
    assert gpu["shapes"] == "fixed:256x32"
    assert gpu != embedding_identity(model="m", precision="float16", device="cuda")
    # Vectors cached under the identity of before (encoding 2, no shapes: texts batched
    # with their neighbours) are not served for today's.
    cache, texts = ArtifactCache(tmp_path), ["a cat", "a dog"]
    old = {k: v for k, v in cpu.items() if k != "shapes"} | {"encoding": 2}
    cached_embeddings(cache, old, texts, lambda batch, keep=None: np.ones((len(batch), 2)))
    encoded: list[str] = []

    def encode(batch: list[str], keep=None) -> np.ndarray:
        encoded.extend(batch)
        return np.zeros((len(batch), 2), dtype=np.float32)

    vectors, how, _ = cached_embeddings(cache, cpu, texts, encode)
    assert how == "built" and encoded == texts and not vectors.any()
