"""The dense encoder: the automatic precision for each kind of machine (the CPU described,
not read from this one), the cache never serving one precision's vectors for another, the
int8 and float32 paths against sentence-transformers, tokenizer workers, the progress bar,
and the CLI's --device/--precision."""

from __future__ import annotations

import json
import platform
import subprocess
from pathlib import Path

import numpy as np
import pytest
from support.cpu_kinds import KINDS

from heta_eval.cli import main
from heta_eval.encoding import precision as precision_module
from heta_eval.encoding.cpu import CpuInfo, simulated_cpu
from heta_eval.encoding.dense import DenseEncoder, default_model_path, embedding_identity
from heta_eval.encoding.onnx_int8 import onnxruntime_available
from heta_eval.encoding.precision import choose_precision, resolve_precision
from heta_eval.encoding.route_defaults import DEFAULT_ROUTES
from heta_eval.models.records import Document
from heta_eval.reference import Recipe

TEXTS = [
    "Cats purr when they are content.",
    "  The Eiffel Tower is in Paris, the capital of France.  ",
    "",
    "Mitochondria " * 400,  # past the 256-token truncation
    "BRCA1 mutations raise the risk of breast cancer.",
]

needs_onnxruntime = pytest.mark.skipif(
    not onnxruntime_available(), reason="onnxruntime/onnx not installed (kb extra)"
)


AMD, INTEL = "AuthenticAMD", "GenuineIntel"
BF16_AVX512 = {"avx2", "avx512f", "avx512_bf16", "avx512_vnni"}


@pytest.mark.parametrize(
    ("flags", "vendor", "expected"),
    [
        (BF16_AVX512, AMD, "bfloat16"),  # Zen 4: measured 3.2x float32
        # Cooper Lake, or a Sapphire Rapids guest with AMX hidden: bfloat16 measured 0.85x
        # float32 there, int8 1.52x.
        (BF16_AVX512, INTEL, "int8"),
        (BF16_AVX512, "", "int8"),  # vendor unknown: not assumed fast
        ({"avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile"}, INTEL, "bfloat16"),  # SPR
        ({"avx2", "avx512f", "avx512_vnni"}, INTEL, "int8"),  # Ice Lake / Cascade Lake server
        ({"avx2", "fma", "avx_vnni"}, INTEL, "int8"),  # Alder Lake client
        ({"sse4_2", "avx", "avx2", "fma"}, AMD, "int8"),  # AVX2-only (Zen 2/3, Haswell)
        ({"sse4_2", "avx"}, INTEL, "float32"),  # no AVX2: no fast int8 kernels
        ({"fp", "asimd", "asimddp"}, "", "float32"),  # ARM
        (set(), "", "float32"),  # flags unreadable
    ],
)
def test_auto_precision_for_each_cpu(flags: set[str], vendor: str, expected: str) -> None:
    assert choose_precision("cpu", flags, vendor) == expected
    # resolve_precision("auto") reads the CPU the encoder decides by: describe this one.
    for onnxruntime in (True, False):
        cpu = CpuInfo(vendor, "", frozenset(flags), 2, onnxruntime=onnxruntime)
        with simulated_cpu(cpu):
            resolved = resolve_precision("auto", "cpu")
        assert resolved == (expected if expected != "int8" or onnxruntime else "float32")


def test_auto_is_float16_on_cuda_and_float32_on_other_devices() -> None:
    assert choose_precision("cuda") == "float16"
    assert choose_precision("mps") == "float32"
    assert resolve_precision("auto", "cuda:1") == "float16"


def test_auto_falls_back_to_float32_without_onnxruntime() -> None:
    with simulated_cpu(CpuInfo("AuthenticAMD", "", frozenset({"avx2"}), 2, False, False)):
        assert resolve_precision("auto", "cpu") == "float32"
        with pytest.raises(ValueError, match="onnxruntime"):
            resolve_precision("int8", "cpu")
        with pytest.raises(ValueError, match="openvino"):
            resolve_precision("openvino-int8", "cpu")


def test_bad_precision_and_device_are_refused() -> None:
    with pytest.raises(ValueError, match="precision must be one of"):
        resolve_precision("float8")
    with pytest.raises(ValueError, match="CPU only"):
        resolve_precision("int8", "cuda")
    with pytest.raises(ValueError, match="device must be"):
        DenseEncoder(device="tpu")
    with pytest.raises(ValueError, match="device"):
        Recipe(dense={"device": "gpu0"})


def test_embedding_identity_separates_precision_device_kind_and_model() -> None:
    base = {"model": "m", "precision": "float32", "device": "cpu"}
    same = embedding_identity(**base)
    others = [
        embedding_identity(**{**base, "precision": "int8"}),
        embedding_identity(**{**base, "precision": "bfloat16"}),
        embedding_identity(**{**base, "device": "cuda"}),
        embedding_identity(**{**base, "model": "other"}),
    ]
    assert all(other != same for other in others)
    assert len({json.dumps(i, sort_keys=True) for i in others}) == len(others)
    # Two GPUs of one kind share vectors; "auto" must be resolved before keying.
    assert embedding_identity(**{**base, "device": "cuda:0"}) == embedding_identity(
        **{**base, "device": "cuda:1"}
    )
    with pytest.raises(ValueError, match="resolved"):
        embedding_identity(**{**base, "precision": "auto"})


@needs_onnxruntime
def test_cached_embeddings_of_one_precision_are_never_served_for_another(tmp_path) -> None:
    docs = [Document(id=str(i), text=text) for i, text in enumerate(TEXTS)]

    def build(precision: str):
        recipe = Recipe(modes=["vector_search"], dense={"precision": precision, "device": "cpu"})
        return recipe.build("kb", docs, cache_dir=tmp_path, progress=False)

    f32 = build("float32")
    int8 = build("int8")
    bf16 = build("bfloat16")
    assert [kb.build_info["embeddings"] for kb in (f32, int8, bf16)] == ["built"] * 3
    assert [kb.build_info["precision"] for kb in (f32, int8, bf16)] == [
        "float32",
        "int8",
        "bfloat16",
    ]
    assert len({kb.build_info["embeddings_path"] for kb in (f32, int8, bf16)}) == 3
    assert not np.array_equal(f32.embeddings, int8.embeddings)
    assert not np.array_equal(f32.embeddings, bf16.embeddings)
    # The same precision again is served from the cache, unchanged, without encoding.
    again = build("int8")
    assert again.build_info["embeddings"] == "cache" and again.encoder.calls == 0
    assert np.array_equal(again.embeddings, int8.embeddings)
    # "auto" shares the entry of what it resolves to, on every kind of CPU (one of each
    # route; the vectors are this machine's, what is checked is which entry serves them).
    for kind in {kind.route: kind for kind in KINDS}.values():
        with simulated_cpu(kind.cpu):
            auto = build("auto")
        info = auto.build_info
        assert (info["route"], info["precision"], info["embeddings"]) == (
            kind.route,
            kind.precision,
            "cache",
        )
        expected = {"float32": f32, "int8": int8, "bfloat16": bf16}[kind.precision]
        assert np.array_equal(auto.embeddings, expected.embeddings)
        assert info["device"] == "cpu" and info["cpu"] == kind.cpu.describe()
        assert info["route_reason"] == f"the default for {kind.kind} CPUs ({kind.cpu.model})"
        assert info["route_evidence"] == DEFAULT_ROUTES[kind.kind].evidence


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(default_model_path(), device="cpu")
    return model.encode(TEXTS, batch_size=2, normalize_embeddings=True)


def test_float32_encoding_is_sentence_transformers(reference: np.ndarray) -> None:
    vectors = DenseEncoder(precision="float32", device="cpu", batch_size=2).encode(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(vectors, reference, atol=2e-6)
    assert DenseEncoder(precision="float32", device="cpu").encode([]).shape == (0, 384)


@needs_onnxruntime
def test_int8_encoding_is_close_to_float32(reference: np.ndarray) -> None:
    encoder = DenseEncoder(precision="int8", device="cpu", batch_size=2)
    vectors = encoder.encode(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    cosines = np.sum(vectors * reference, axis=1)
    assert cosines.min() > 0.97 and cosines.mean() > 0.985
    # Each text runs alone: its vector is the same bytes without the texts batched with it.
    assert encoder.encode(TEXTS[:1]).tobytes() == vectors[:1].tobytes()


def test_tokenizer_threads_give_the_inline_vectors() -> None:
    # Tokenizing ahead in threads is the GPU's pipeline (its fixed shapes, run here on the CPU).
    def encoder(workers: int) -> DenseEncoder:
        made = DenseEncoder(
            precision="float32", device="cpu", batch_size=2, tokenizer_workers=workers
        )
        made.shapes = "fixed:2x32"
        return made

    inline, pooled = encoder(0), encoder(2)
    try:
        assert pooled.encode(TEXTS).tobytes() == inline.encode(TEXTS).tobytes()
    finally:
        pooled.close()


def test_progress_bar_counts_passages_and_is_off_when_quiet(capsys) -> None:
    encoder = DenseEncoder(precision="float32", device="cpu", batch_size=2)
    encoder.encode(TEXTS, progress=False)
    assert "passage" not in capsys.readouterr().err
    encoder.encode(TEXTS, progress=True)
    err = capsys.readouterr().err
    assert "encoding" in err and f"{len(TEXTS)}/{len(TEXTS)}" in err and "passage/s" in err


def test_cli_device_and_precision_reach_the_summary(tmp_path, capsys, monkeypatch) -> None:
    import json

    import torch

    monkeypatch.setenv("HETA_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "d1", "text": "Cats purr."}\n{"id": "d2", "text": "Rome."}\n')
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "q", "query": "cats", "expected": {"relevance": {"d1": 1}}}\n')
    out = tmp_path / "out"
    args = [
        "run",
        "--benchmark",
        str(cases),
        "--documents",
        str(docs),
        "--modes",
        "vector_search",
        "--output",
        str(out),
        "--quiet",
    ]
    if not torch.cuda.is_available():
        assert main([*args, "--device", "cuda"]) == 2
        assert "no CUDA GPU" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*args, "--precision", "float8"])
    assert main([*args, "--device", "cpu", "--precision", "float32"]) == 0
    build = json.loads((out / "summary.json").read_text())["build"]
    assert (build["device"], build["precision"]) == ("cpu", "float32")


def test_concurrent_first_queries_load_one_consistent_model() -> None:
    """Queries run in threads; when the corpus was encoded elsewhere (a Ray cluster) they all
    ask for the model at once. Two concurrent loads once left a half-float32 bfloat16 model."""
    import threading

    from heta_eval.encoding import runners

    runners.load_runner.cache_clear()
    encoder = DenseEncoder(device="cpu", precision="bfloat16")
    barrier = threading.Barrier(6)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def query() -> None:
        barrier.wait()
        try:
            results.append(encoder.encode(["Which cells renew the skin?"]))
        except BaseException as error:  # recorded, then asserted below
            errors.append(error)

    threads = [threading.Thread(target=query) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert errors == [] and len(results) == 6
    assert all(np.array_equal(results[0], other) for other in results[1:])
    assert runners.load_runner.cache_info().currsize == 1


@pytest.mark.skipif(not Path("/proc/cpuinfo").exists(), reason="no /proc/cpuinfo on this system")
def test_cpu_flags_and_vendor_are_this_machines_as_proc_cpuinfo_lists_them():
    # Read independently of heta_eval: the first processor's flags and vendor lines.
    flags = subprocess.run(
        ["grep", "-m1", "-E", "^(flags|Features)", "/proc/cpuinfo"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert precision_module.cpu_flags() == frozenset(flags.split(":", 1)[1].split())
    vendor = subprocess.run(
        ["grep", "-m1", "^vendor_id", "/proc/cpuinfo"], capture_output=True, text=True
    ).stdout
    assert precision_module.cpu_vendor() == (vendor.split(":", 1)[1].strip() if vendor else "")
    if platform.machine() == "x86_64":
        assert {"fpu", "sse2"} <= precision_module.cpu_flags()
