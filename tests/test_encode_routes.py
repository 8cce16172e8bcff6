"""Encoding routes on the CPU: the measured choice as a pure function of injected timings,
the routes worth measuring per CPU kind, the stored choice being reused, the route forced by
the environment, and the quality bound (cosine to float32) of the OpenVINO int8 route on a few
dozen real SciFact abstracts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from heta_eval.kb import routes
from heta_eval.kb.dense import DenseEncoder, default_model_path, embedding_identity
from heta_eval.kb.onnx_int8 import onnxruntime_available
from heta_eval.kb.openvino_int8 import openvino_available
from heta_eval.kb.routes import (
    COSINE_BOUND,
    RouteTiming,
    candidate_routes,
    choose_route,
    resolve_route,
)
from tests.conftest import shared_path

MODEL = "all-MiniLM-L6-v2"


def test_the_fastest_route_within_the_cosine_bound_wins() -> None:
    measured = {
        "torch-float32": RouteTiming(10.0, 1.0),
        "torch-bfloat16": RouteTiming(4.0, 0.9999),
        "onnxruntime-int8": RouteTiming(3.0, 0.9949),
        "openvino-int8": RouteTiming(2.0, 0.9899),  # fastest, but one vector below 0.99
    }
    assert choose_route(measured) == "onnxruntime-int8"
    assert choose_route(measured, bound=0.98) == "openvino-int8"
    assert choose_route(measured, bound=0.99995) == "torch-float32"
    assert choose_route({}) == "torch-float32"
    # A tie goes to the first name, so the choice never depends on dict order.
    tie = {"openvino-int8": RouteTiming(1.0, 1.0), "onnxruntime-int8": RouteTiming(1.0, 1.0)}
    assert choose_route(tie) == choose_route(dict(reversed(tie.items()))) == "onnxruntime-int8"


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({"avx2", "avx512f", "avx512_vnni"}, ["onnxruntime-int8", "openvino-int8"]),
        (
            {"avx2", "avx512f", "avx512_bf16"},
            ["torch-bfloat16", "onnxruntime-int8", "openvino-int8"],
        ),
        (
            {"avx2", "amx_bf16", "avx512_bf16"},
            ["torch-bfloat16", "onnxruntime-int8", "openvino-int8"],
        ),
        ({"avx2", "fma"}, ["onnxruntime-int8", "openvino-int8"]),  # AVX2 only
        ({"asimd"}, []),  # ARM: float32 alone, nothing to measure
    ],
)
def test_routes_measured_per_cpu_kind(flags: set[str], expected: list[str]) -> None:
    found = candidate_routes(flags, onnxruntime=True, openvino=True)
    assert found == ["torch-float32", *expected]
    assert "openvino-int8" not in candidate_routes(flags, onnxruntime=True, openvino=False)


def test_auto_measures_once_and_reuses_the_stored_choice(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HETA_EVAL_ENCODE_ROUTE", "measure")
    monkeypatch.setattr(routes, "cpu_flags", lambda: frozenset({"avx2", "avx512f"}))
    monkeypatch.setattr(routes, "_available", lambda: (True, True))
    calls = []

    def fake_calibrate(
        model: str, device: str, names: list[str], encoder
    ) -> dict[str, RouteTiming]:
        calls.append(names)
        return {"torch-float32": RouteTiming(9.0, 1.0), "onnxruntime-int8": RouteTiming(5.0, 0.995),
                "openvino-int8": RouteTiming(3.0, 0.995)}  # fmt: skip

    monkeypatch.setattr(routes, "calibrate", fake_calibrate)
    assert resolve_route("auto", "cpu", MODEL, DenseEncoder) == "openvino-int8"
    assert resolve_route("auto", "cpu", MODEL, DenseEncoder) == "openvino-int8"
    assert calls == [["torch-float32", "onnxruntime-int8", "openvino-int8"]]
    (stored,) = (tmp_path / "kb").glob("routes-*.json")
    record = json.loads(stored.read_text())
    assert record["route"] == "openvino-int8"
    assert record["measured"]["onnxruntime-int8"] == {"seconds": 5.0, "min_cosine": 0.995}
    # Off the CPU, or for a named precision, nothing is measured.
    assert resolve_route("float32", "cpu", MODEL) == "torch-float32"
    assert resolve_route("int8", "cpu", MODEL) == "onnxruntime-int8"
    assert len(calls) == 1


@pytest.mark.parametrize(
    ("kind", "flags", "measures"),
    [
        ("amx", {"avx2", "avx512f", "avx512_bf16", "amx_bf16"}, False),  # the rule was measured
        ("avx512-bf16-amd", {"avx2", "avx512f", "avx512_bf16", "avx512_vnni"}, True),
        ("avx512-bf16-intel", {"avx2", "avx512f", "avx512_bf16"}, True),
        ("vnni", {"avx2", "avx512f", "avx512_vnni"}, True),
        ("avx2", {"avx2", "fma"}, True),
    ],
)
def test_unset_auto_measures_only_where_the_rule_was_not_measured(
    kind: str, flags: set[str], measures: bool, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("HETA_EVAL_ENCODE_ROUTE", raising=False)
    vendor = "AuthenticAMD" if kind == "avx512-bf16-amd" else "GenuineIntel"
    monkeypatch.setattr(routes, "cpu_kind", lambda: routes.cpu_kind_of(flags, vendor))
    monkeypatch.setattr(routes, "cpu_flags", lambda: frozenset(flags))
    monkeypatch.setattr(routes, "_available", lambda: (True, True))
    calls: list[list[str]] = []

    def fake_calibrate(model: str, device: str, names: list[str], encoder) -> dict:
        calls.append(names)
        return {"torch-float32": RouteTiming(9.0, 1.0), "openvino-int8": RouteTiming(3.0, 0.995)}

    monkeypatch.setattr(routes, "calibrate", fake_calibrate)
    assert routes.cpu_kind() == kind
    route = resolve_route("auto", "cpu", MODEL, DenseEncoder)
    assert (route == "openvino-int8") is measures
    assert bool(calls) is measures
    assert bool(list(tmp_path.rglob("routes-*.json"))) is measures
    # static applies the rule on any kind: nothing more is measured.
    monkeypatch.setenv("HETA_EVAL_ENCODE_ROUTE", "static")
    assert resolve_route("auto", "cpu", MODEL, DenseEncoder) != "openvino-int8"
    assert len(calls) == int(measures)


def test_the_environment_forces_a_route(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HETA_EVAL_ENCODE_ROUTE", "torch-float32")
    assert resolve_route("auto", "cpu", MODEL) == "torch-float32"
    assert resolve_route("bfloat16", "cpu", MODEL) == "torch-bfloat16"  # a named one wins
    monkeypatch.setenv("HETA_EVAL_ENCODE_ROUTE", "fastest")
    with pytest.raises(ValueError, match="HETA_EVAL_ENCODE_ROUTE"):
        resolve_route("auto", "cpu", MODEL)


def test_openvino_and_onnxruntime_int8_vectors_are_never_shared() -> None:
    base = {"model": MODEL, "precision": "int8", "device": "cpu"}
    assert embedding_identity(**base, route="openvino-int8") != embedding_identity(
        **base, route="onnxruntime-int8"
    )
    assert embedding_identity(**base, route="onnxruntime-int8") == embedding_identity(**base)


def _scifact(n: int) -> list[str]:
    texts = []
    with shared_path("datasets", "beir", "scifact", "corpus.jsonl").open() as f:
        for line in f:
            doc = json.loads(line)
            texts.append(f"{doc.get('title', '')} {doc['text']}".strip())
            if len(texts) == n:
                return texts
    return texts


@pytest.mark.skipif(
    not openvino_available(),
    reason="openvino/nncf not installed (the kb extra, which make install installs)",
)
def test_openvino_int8_keeps_the_cosine_bound_on_scifact() -> None:
    from sentence_transformers import SentenceTransformer

    texts = _scifact(32)
    reference = SentenceTransformer(default_model_path(), device="cpu").encode(
        texts, batch_size=16, normalize_embeddings=True
    )
    encoder = DenseEncoder(precision="openvino-int8", device="cpu", batch_size=16)
    assert (encoder.route, encoder.precision) == ("openvino-int8", "int8")
    vectors = encoder.encode(texts)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert np.sum(vectors * reference, axis=1).min() >= COSINE_BOUND


@pytest.mark.skipif(not onnxruntime_available(), reason="onnxruntime/onnx not installed (kb extra)")
def test_an_onnxruntime_int8_vector_does_not_depend_on_the_texts_batched_with_it() -> None:
    # Dynamic int8 scales each activation tensor by its maximum: batched, a text's vector
    # moved with its neighbours (and the embedding cache mixed batchings). Each text runs alone.
    texts = _scifact(12)
    encoder = DenseEncoder(precision="onnxruntime-int8", device="cpu", batch_size=4)
    batched = encoder.encode(texts)
    alone = encoder.encode_batches(texts, [np.array([row]) for row in range(len(texts))])
    mixed = encoder.encode_batches(texts, [np.arange(0, 12, 2), np.arange(1, 12, 2)])
    np.testing.assert_allclose(batched, alone, rtol=0, atol=1e-6)
    np.testing.assert_allclose(mixed, alone, rtol=0, atol=1e-6)
    reference = DenseEncoder(precision="float32", device="cpu").encode(texts)
    assert np.sum(alone * reference, axis=1).min() >= COSINE_BOUND
