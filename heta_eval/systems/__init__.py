"""The systems under evaluation, as the runner sees them: the knowledge-base protocol
(:mod:`.protocol`: what is required, every optional member with its default), a service over
HTTP (:mod:`.http_client`, ``--kb-url``), run files as a knowledge base (:mod:`.run_files`,
``--kb-run``) and any function as one (:mod:`.callables`, :func:`from_callable`). The
framework adapters built on them are :mod:`heta_eval.integrations`.

Names load on first use (PEP 562): the protocol needs the records (pydantic, slow to import).

>>> from heta_eval.systems import KnowledgeBase, from_callable
>>> isinstance(from_callable(lambda query, top_k: [("d1", 1.0)]), KnowledgeBase)
True
"""

from typing import TYPE_CHECKING

from heta_eval._lazy import attach

if TYPE_CHECKING:  # what editors and type checkers read; _LAZY is what runs
    from heta_eval.systems.callables import CallableKnowledgeBase, from_callable
    from heta_eval.systems.http_client import HttpKnowledgeBase
    from heta_eval.systems.protocol import (
        BatchKnowledgeBase,
        IngestingKnowledgeBase,
        KnowledgeBase,
    )
    from heta_eval.systems.run_files import RunFileKnowledgeBase

#: Public name -> the module that defines it.
_LAZY = {
    "BatchKnowledgeBase": "heta_eval.systems.protocol",
    "CallableKnowledgeBase": "heta_eval.systems.callables",
    "HttpKnowledgeBase": "heta_eval.systems.http_client",
    "IngestingKnowledgeBase": "heta_eval.systems.protocol",
    "KnowledgeBase": "heta_eval.systems.protocol",
    "RunFileKnowledgeBase": "heta_eval.systems.run_files",
    "from_callable": "heta_eval.systems.callables",
}

__all__ = [
    "BatchKnowledgeBase",
    "CallableKnowledgeBase",
    "HttpKnowledgeBase",
    "IngestingKnowledgeBase",
    "KnowledgeBase",
    "RunFileKnowledgeBase",
    "from_callable",
]
__getattr__, __dir__ = attach(__name__, _LAZY)
