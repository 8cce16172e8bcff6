"""Encoding routes on the CPU: the measured choice as a pure function of injected timings (a
route displaces the kind's default only when clearly faster), the routes worth measuring per
CPU kind, measuring only when asked (on every kind of CPU, described by tests/support/cpu_kinds.py),
the stored choice being reused, the route forced by the environment, and the quality bound
(cosine to float32) of the OpenVINO int8 route on a few dozen real SciFact abstracts."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from support.cpu_kinds import KIND_IDS, KINDS, VNNI_XEON
from support.paths import shared_path

from heta_eval.encoding import routes
from heta_eval.encoding.cpu import simulated_cpu
from heta_eval.encoding.dense import DenseEncoder, default_model_path, embedding_identity
from heta_eval.encoding.onnx_int8 import onnxruntime_available
from heta_eval.encoding.openvino_int8 import openvino_available
from heta_eval.encoding.route_defaults import DEFAULT_ROUTES
from heta_eval.encoding.routes import (
    COSINE_BOUND,
    RouteTiming,
    candidate_routes,
    choose_route,
    resolve_route,
    route_choice,
)

MODEL = "all-MiniLM-L6-v2"


def test_a_route_displaces_the_default_only_when_clearly_faster_within_the_bound() -> None:
    measured = {
        "torch-float32": RouteTiming(10.0, 1.0, 9.8, 10.3),
        "torch-bfloat16": RouteTiming(4.0, 0.9999, 3.9, 4.2),
        "onnxruntime-int8": RouteTiming(3.0, 0.9949, 2.9, 3.1),
        "openvino-int8": RouteTiming(2.0, 0.9899, 1.9, 2.1),  # fastest, one vector below 0.99
    }
    assert choose_route(measured, "torch-float32") == "onnxruntime-int8"
    assert choose_route(measured, "torch-float32", bound=0.98) == "openvino-int8"
    assert choose_route(measured, "torch-float32", bound=0.99995) == "torch-float32"
    assert choose_route(measured, "torch-bfloat16") == "onnxruntime-int8"  # 25% faster
    assert choose_route({}, "torch-bfloat16") == "torch-bfloat16"
    # The default failed to run (left out of the measurement): the fastest within the bound.
    assert choose_route({"torch-float32": RouteTiming(3.0, 1.0)}, "openvino-int8") == (
        "torch-float32"
    )


def test_routes_within_noise_of_the_default_leave_it_in_place() -> None:
    # The two cold runs on a VNNI-only Xeon: the int8 routes 1-2% apart, first one
    # ahead, then the other. Both runs keep the default.
    runs = [
        {
            "onnxruntime-int8": RouteTiming(0.635, 0.995, 0.63, 0.64),
            "openvino-int8": RouteTiming(0.650, 0.997, 0.64, 0.66),
        },
        {
            "onnxruntime-int8": RouteTiming(0.638, 0.995, 0.63, 0.65),
            "openvino-int8": RouteTiming(0.632, 0.997, 0.62, 0.64),
        },
    ]
    for measured in runs:
        measured["torch-float32"] = RouteTiming(1.31, 1.0, 1.29, 1.33)
        assert choose_route(measured, "onnxruntime-int8") == "onnxruntime-int8"
    # 10% faster on the median, but its slowest round no faster than the default's fastest.
    overlapping = {
        "onnxruntime-int8": RouteTiming(1.0, 0.995, 0.8, 1.2),
        "openvino-int8": RouteTiming(0.85, 0.997, 0.7, 0.9),
    }
    assert choose_route(overlapping, "onnxruntime-int8") == "onnxruntime-int8"
    apart = {**overlapping, "openvino-int8": RouteTiming(0.85, 0.997, 0.75, 0.79)}
    assert choose_route(apart, "onnxruntime-int8") == "openvino-int8"
    # Equal medians among the faster routes: the first in ROUTES, whatever the dict order.
    tie = {
        "openvino-int8": RouteTiming(0.5, 1.0),
        "onnxruntime-int8": RouteTiming(0.5, 1.0),
        "torch-float32": RouteTiming(1.0, 1.0),
    }
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


def _calibrations(monkeypatch: pytest.MonkeyPatch, timings: dict[str, RouteTiming]) -> list:
    """Injected timings in place of the real calibration (it encodes for tens of seconds);
    returns the list of the routes each call was asked to time."""
    calls: list[list[str]] = []

    def fake_calibrate(model: str, device: str, names: list[str], encoder) -> dict:
        calls.append(list(names))
        return {name: timing for name, timing in timings.items() if name in names}

    monkeypatch.setattr(routes, "calibrate", fake_calibrate)
    return calls


FAST_OPENVINO = {
    "torch-float32": RouteTiming(9.0, 1.0, 8.8, 9.3),
    "torch-bfloat16": RouteTiming(8.0, 0.9999, 7.9, 8.2),
    "onnxruntime-int8": RouteTiming(5.0, 0.995, 4.9, 5.2),
    "openvino-int8": RouteTiming(3.0, 0.995, 2.9, 3.1),
}


def test_measuring_is_opt_in_stored_once_and_says_why(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HETA_EVAL_ENCODE_ROUTE", "measure")
    calls = _calibrations(monkeypatch, FAST_OPENVINO)
    with simulated_cpu(VNNI_XEON):
        first = route_choice("auto", "cpu", MODEL, DenseEncoder)
        again = route_choice("auto", "cpu", MODEL, DenseEncoder)
        assert first.route == again.route == "openvino-int8"
        assert calls == [["torch-float32", "onnxruntime-int8", "openvino-int8"]]
        assert (
            first.reason
            == again.reason
            == (
                "measured on this machine (HETA_EVAL_ENCODE_ROUTE=measure): openvino-int8 "
                "displaced the default onnxruntime-int8"
            )
        )
        assert "onnxruntime-int8 5.00 s (4.90-5.20), min cosine 0.9950" in first.evidence
        (stored,) = (tmp_path / "kb").glob("routes-*.json")
        assert again.evidence == f"{first.evidence} (stored in {stored})"
        record = json.loads(stored.read_text())
        assert (record["route"], record["evidence"]) == ("openvino-int8", first.evidence)
        assert record["measured"]["onnxruntime-int8"] == {
            "seconds": 5.0,
            "min_cosine": 0.995,
            "fastest": 4.9,
            "slowest": 5.2,
        }
        # A named precision or route is never measured.
        assert resolve_route("float32", "cpu", MODEL) == "torch-float32"
        assert resolve_route("int8", "cpu", MODEL) == "onnxruntime-int8"
        assert len(calls) == 1
    # Another thread count is another measurement.
    with simulated_cpu(replace(VNNI_XEON, threads=VNNI_XEON.threads * 2)):
        route_choice("auto", "cpu", MODEL, DenseEncoder)
    assert len(calls) == 2 and len(list((tmp_path / "kb").glob("routes-*.json"))) == 2


@pytest.mark.parametrize("kind", KINDS, ids=KIND_IDS)
def test_unset_auto_never_measures_and_measure_works_on_every_kind(
    kind, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path))
    calls = _calibrations(monkeypatch, FAST_OPENVINO)
    with simulated_cpu(kind.cpu):
        for unset in (None, "static"):
            if unset is None:
                monkeypatch.delenv("HETA_EVAL_ENCODE_ROUTE", raising=False)
            else:
                monkeypatch.setenv("HETA_EVAL_ENCODE_ROUTE", unset)
            choice = route_choice("auto", "cpu", MODEL, DenseEncoder)
            assert choice.route == kind.route
            assert choice.reason == f"the default for {kind.kind} CPUs ({kind.cpu.model})"
            assert choice.evidence == DEFAULT_ROUTES[kind.kind].evidence
        assert calls == [] and list(tmp_path.rglob("routes-*.json")) == []
        monkeypatch.setenv("HETA_EVAL_ENCODE_ROUTE", "measure")
        measured = route_choice("auto", "cpu", MODEL, DenseEncoder)
    candidates = candidate_routes(
        kind.cpu.flags, onnxruntime=kind.cpu.onnxruntime, openvino=kind.cpu.openvino
    )
    if len(candidates) == 1:  # Arm: nothing to measure
        assert calls == [] and measured.route == "torch-float32"
    else:
        assert calls == [candidates]
        # OpenVINO's 3.0 s is clearly faster than every default where it is installed.
        assert measured.route == (
            "openvino-int8"
            if kind.cpu.openvino
            else "onnxruntime-int8"
            if kind.route == "torch-float32"
            else kind.route
        )


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


def test_an_int8_runtimes_first_call_is_made_alone_and_later_ones_side_by_side() -> None:
    # pybind11 bindings set up numpy on their first call: two first calls at once can deadlock
    # (it hung this suite with OpenVINO). Here a runtime that counts the calls inside it.
    import threading
    import time

    from heta_eval.encoding.onnx_int8 import Int8Transformer

    class Counting(Int8Transformer):
        inside = most = 0
        lock = threading.Lock()

        def hidden(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
            with self.lock:
                self.inside += 1
                self.most = max(self.most, self.inside)
            time.sleep(0.2)
            with self.lock:
                self.inside -= 1
            return np.ones((1, 3, 4), dtype=np.float32)

    def pooled(state: dict) -> dict:
        return {**state, "sentence_embedding": state["token_embeddings"][:, 0]}

    features = {"input_ids": np.array([[101, 7, 102]]), "attention_mask": np.ones((1, 3))}

    def both(runtime: Counting) -> None:
        start = threading.Barrier(2)
        threads = [
            threading.Thread(target=lambda: (start.wait(), runtime(features))) for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    runtime = Counting([None, pooled], ["input_ids", "attention_mask"])
    both(runtime)
    assert runtime.most == 1  # the two first calls, one after the other
    both(runtime)
    assert runtime.most == 2  # then side by side
    assert runtime(features).shape == (1, 4)
