"""Whether the optional runtimes of the int8 routes (ONNX Runtime, OpenVINO) can be used.

>>> importable("json", "math"), importable("json", "no_such_module_here")
(True, False)
"""

from __future__ import annotations

from importlib import import_module

__all__ = ["importable"]


def importable(*modules: str) -> bool:
    """Whether every one of ``modules`` imports (imported, not only found: a broken install
    of a native runtime fails here, not in the middle of an encode)."""
    try:
        for module in modules:
            import_module(module)
    except ImportError:
        return False
    return True
