"""Lazy package attributes (PEP 562): a package lists its public names and the submodule
defining each; a name's module is imported when the name is first read.

>>> getattr_, dir_ = attach("json", {"JSONDecoder": "decoder"})
>>> getattr_("JSONDecoder").__module__
'json.decoder'
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["attach"]


def attach(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose public ``names`` map to the
    relative submodule that defines each."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        # A relative name is a submodule of ``package``; an absolute one is used as given.
        target = module if module.startswith("heta_eval.") else f"{package}.{module}"
        value = getattr(import_module(target), name)
        setattr(sys.modules[package], name, value)  # later lookups skip this hook
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
