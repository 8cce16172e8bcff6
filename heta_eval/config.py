"""Configuration: every ``HETA_EVAL_*`` environment variable and the cache layout.

Each setting is read here and nowhere else, at the moment it is asked for (so a test or a
long-lived process that changes the environment sees the change). The cache root holds one
folder per kind of artifact::

    $HETA_EVAL_CACHE_DIR (default ~/.cache/heta-eval)
      kb/         indexes, embeddings and int8 models of the reference knowledge base
      llm/        the LLM judge's replies (judge.sqlite)
      anserini/   the Anserini oracle's wheel, jar and outputs (developer tooling)
      datasets/   datasets downloaded by an installed package
      samples/    quick subsets of datasets (``run --sample N``), each a BEIR folder
      numba/      compiled kernels (numba's disk cache), so a new process loads them instead
                  of compiling, also when the package is installed read-only

=====================================  ============================================
variable                               what it sets
=====================================  ============================================
``HETA_EVAL_CACHE_DIR``                the cache root above
``HETA_EVAL_DATA``                     a folder holding datasets (``<name>/``)
``HETA_EVAL_REGISTRY``                 a dataset registry JSON file instead of the shipped one
``HETA_EVAL_LLM_BASE_URL``             the OpenAI-compatible chat endpoint (judge, answerer)
``HETA_EVAL_LLM_MODEL``                the chat model
``HETA_EVAL_LLM_API_KEY``              its API key (else ``OPENAI_API_KEY``)
``HETA_EVAL_KB_TOKEN``                 a bearer token sent to ``--kb-url`` (``Authorization``)
``HETA_EVAL_RAY_LOST_AFTER``           seconds a Ray head may stay silent before a run stops
``HETA_EVAL_ANSERINI_CACHE``           the Anserini oracle's folder (else ``anserini/`` above)
``HETA_EVAL_ENCODE_ROUTE``             the CPU encoding route ``precision="auto"`` takes
                                       (a route name, or ``measure``; default: the kind of
                                       CPU's default route)
``HETA_EVAL_ENCODE_BATCH_PAUSE``       seconds to pause after each encoded batch (tests and
                                       demonstrations of an interrupted encode; default 0)
``NUMBA_CACHE_DIR``                    numba's own: where compiled kernels are cached
                                       (default: ``numba/`` above)
=====================================  ============================================

>>> import os
>>> os.environ["HETA_EVAL_CACHE_DIR"] = "/tmp/heta-cache"
>>> cache_dir("kb")
PosixPath('/tmp/heta-cache/kb')
>>> del os.environ["HETA_EVAL_CACHE_DIR"]
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

__all__ = [
    "AUTO_PRECISION",
    "CacheKind",
    "anserini_dir",
    "cache_dir",
    "cache_root",
    "data_dir",
    "encode_batch_pause",
    "encode_route",
    "kb_token",
    "llm_api_key",
    "llm_base_url",
    "llm_model",
    "numba_cache_dir",
    "ray_lost_after",
    "registry_path",
]

CacheKind = Literal["kb", "llm", "anserini", "datasets", "numba", "samples"]

#: Seconds a Ray head may stay silent before a run gives up (Ray's own limit is 60).
RAY_LOST_AFTER = 20.0


def _env(name: str) -> str | None:
    """The variable's value, or None when unset or blank."""
    value = os.environ.get(name, "").strip()
    return value or None


def cache_root() -> Path:
    """``$HETA_EVAL_CACHE_DIR``, else ``~/.cache/heta-eval``."""
    value = _env("HETA_EVAL_CACHE_DIR")
    return Path(value) if value else Path.home() / ".cache" / "heta-eval"


def cache_dir(kind: CacheKind) -> Path:
    """The cache folder for one kind of artifact (see the layout above)."""
    return cache_root() / kind


def numba_cache_dir() -> Path:
    """``$NUMBA_CACHE_DIR`` (numba's own setting), else the cache root's ``numba/``."""
    value = _env("NUMBA_CACHE_DIR")
    return Path(value) if value else cache_dir("numba")


def anserini_dir() -> Path:
    """``$HETA_EVAL_ANSERINI_CACHE``, else the cache root's ``anserini/``."""
    value = _env("HETA_EVAL_ANSERINI_CACHE")
    return Path(value) if value else cache_dir("anserini")


def data_dir() -> Path | None:
    """``$HETA_EVAL_DATA``: a folder holding datasets, or None."""
    value = _env("HETA_EVAL_DATA")
    return Path(value) if value else None


def registry_path() -> Path | None:
    """``$HETA_EVAL_REGISTRY``: a registry file used instead of the shipped one, or None."""
    value = _env("HETA_EVAL_REGISTRY")
    return Path(value) if value else None


def llm_base_url() -> str | None:
    """``$HETA_EVAL_LLM_BASE_URL``, or None."""
    return _env("HETA_EVAL_LLM_BASE_URL")


def llm_model() -> str | None:
    """``$HETA_EVAL_LLM_MODEL``, or None."""
    return _env("HETA_EVAL_LLM_MODEL")


def llm_api_key() -> str | None:
    """``$HETA_EVAL_LLM_API_KEY``, else ``$OPENAI_API_KEY``, or None."""
    return _env("HETA_EVAL_LLM_API_KEY") or _env("OPENAI_API_KEY")


def kb_token() -> str | None:
    """``$HETA_EVAL_KB_TOKEN``: the bearer token for a knowledge-base service, or None.

    It is sent as ``Authorization: Bearer <token>`` and never written anywhere.
    """
    return _env("HETA_EVAL_KB_TOKEN")


def ray_lost_after() -> float:
    """``$HETA_EVAL_RAY_LOST_AFTER`` (positive seconds), else :data:`RAY_LOST_AFTER`.

    >>> ray_lost_after()
    20.0
    """
    text = _env("HETA_EVAL_RAY_LOST_AFTER")
    if text is None:
        return RAY_LOST_AFTER
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise ValueError(
            f"HETA_EVAL_RAY_LOST_AFTER must be a positive number of seconds, got {text!r}"
        )
    return value


#: What ``precision="auto"`` does, in one sentence: the help of ``heta-eval run --precision``
#: prints it, and README.md, docs/encoding.md and docs/knowledge-bases.md repeat it word for
#: word (tests/config/test_config_auto_statement.py). The rule itself:
#: :mod:`heta_eval.encoding.route_defaults` (``DEFAULT_ROUTES``, per kind of CPU) and
#: :mod:`heta_eval.encoding.routes` (``route_choice``).
AUTO_PRECISION = (
    "auto is float16 on a CUDA GPU; on the CPU it is the default route of its kind of CPU, "
    "chosen from make bench's measurements on that kind (bfloat16 with AMX or AMD's "
    "AVX512-BF16, int8 through ONNX Runtime on other x86 CPUs, float32 without AVX2 or ONNX "
    "Runtime), never a timing on your machine unless HETA_EVAL_ENCODE_ROUTE=measure asks for one."
)


def encode_route() -> str | None:
    """``$HETA_EVAL_ENCODE_ROUTE``: the route the dense encoder's ``precision="auto"`` takes on
    the CPU: a route name (``torch-float32``, ``torch-bfloat16``, ``onnxruntime-int8``,
    ``openvino-int8``), ``measure`` (time every available route once per machine; one clearly
    faster than the kind's default within the quality bound displaces it:
    :mod:`heta_eval.encoding.routes`), or ``static``; None (unset) and ``static`` take the default
    route of the kind of CPU (``heta_eval.encoding.route_defaults.DEFAULT_ROUTES``).

    >>> encode_route() in (None, "static", "measure", "torch-float32", "torch-bfloat16")
    True
    """
    value = _env("HETA_EVAL_ENCODE_ROUTE")
    allowed = (
        "static",
        "measure",
        "torch-float32",
        "torch-bfloat16",
        "onnxruntime-int8",
        "openvino-int8",
    )
    if value is not None and value not in allowed:
        raise ValueError(
            f"HETA_EVAL_ENCODE_ROUTE must be one of {', '.join(allowed)}; got {value!r}"
        )
    return value


def encode_batch_pause() -> float:
    """``$HETA_EVAL_ENCODE_BATCH_PAUSE``: seconds the dense encoder sleeps after each batch
    (0 when unset). It makes an encode slow on purpose, so that a test or a demonstration can
    interrupt it midway and watch the rerun reuse the finished batches.

    >>> encode_batch_pause()
    0.0
    """
    text = _env("HETA_EVAL_ENCODE_BATCH_PAUSE")
    if text is None:
        return 0.0
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise ValueError(
            f"HETA_EVAL_ENCODE_BATCH_PAUSE must be a number of seconds >= 0, got {text!r}"
        )
    return value
