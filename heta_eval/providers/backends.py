"""Which provider computes a call: the one place an engine is picked, by measures and size.

Every caller (``evaluate_run``, ``evaluate_run_file``, a batch of responses, a columnar run,
the ``trec_eval`` drop-in) asks here and never compares ``engine`` strings itself:

* ``engine="pytrec"``: :data:`~heta_eval.providers.pytrec.PYTREC` (every measure);
* ``engine="fast"``: :data:`~heta_eval.providers.compiled.COMPILED` (BEIR's families; any
  other measure is refused with a one-line ``ValueError``);
* ``engine="auto"``: the compiled engine for a *large* input (:func:`large_run`, or a run
  file of :data:`COMPILED_MIN_BYTES` or more, :func:`compiled_run_file`) whose every measure
  it computes and when numba is installed; pytrec_eval otherwise. Below the thresholds
  pytrec_eval is as fast, and loading numba costs more than it saves.

Both give identical numbers on identical input (tested), so the choice is one of speed.

>>> from heta_eval.measures.measure import Measure
>>> measures = [Measure.parse("nDCG@10")]
>>> choose_provider("auto", measures, large=False)
PYTREC
>>> choose_provider("fast", measures, large=False)
COMPILED
>>> choose_backend("pytrec", measures, large=True)
'pytrec'
>>> choose_provider("fast", [Measure.parse("bpref")], large=True)
Traceback (most recent call last):
ValueError: the compiled engine has no Bpref; use engine='pytrec'
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from heta_eval.io.source import input_size
from heta_eval.measures.measure import Measure
from heta_eval.providers.compiled import COMPILED, ENGINE_FAMILIES
from heta_eval.providers.provider import Provider
from heta_eval.providers.pytrec import PYTREC

__all__ = [
    "COMPILED_MIN_BYTES",
    "ENGINES",
    "ENGINE_FAMILIES",
    "ENGINE_MIN_ROWS",
    "choose_backend",
    "choose_provider",
    "compiled_run_file",
    "large_run",
]

#: Runs (or batches of responses) with at least this many results go to the compiled
#: engine under ``engine="auto"``; below it pytrec_eval is as fast and needs no JIT.
ENGINE_MIN_ROWS = 100_000
#: Run files smaller than this are read for pytrec_eval without trying the engine (about
#: ENGINE_MIN_ROWS TREC lines): loading numba costs more than it saves below it.
COMPILED_MIN_BYTES = 8 * 2**20

#: The ``engine=`` values and the provider each names (``auto`` picks one of them).
ENGINES: dict[str, Provider] = {PYTREC.name: PYTREC, COMPILED.name: COMPILED}


def compiled_run_file(path: str | os.PathLike[str] | object) -> bool:
    """Whether a run file (or an opened input, :func:`heta_eval.io.source.open_input`) is
    large enough (:data:`COMPILED_MIN_BYTES`) to be read for the compiled engine; False
    when it cannot be sized without reading it (its reader then reports it)."""
    size = input_size(path)
    return size is not None and size >= COMPILED_MIN_BYTES


def large_run(rows: int) -> bool:
    """Whether a run of ``rows`` results is large enough for the compiled engine
    (:data:`ENGINE_MIN_ROWS`); a run file is sized by :func:`compiled_run_file` instead."""
    return rows >= ENGINE_MIN_ROWS


def choose_provider(engine: str, measures: Sequence[Measure], *, large: bool) -> Provider:
    """The provider for ``engine`` = auto/pytrec/fast (see the module doc); ``auto`` takes
    the compiled engine for a ``large`` input whose measures it computes. Raises
    ``ValueError`` for another ``engine``, or ``fast`` with a measure it lacks."""
    if engine == "auto":
        # numba loads only for an input large enough
        if large and COMPILED.supports(measures) and COMPILED.available():
            return COMPILED
        return PYTREC
    provider = ENGINES.get(engine) if isinstance(engine, str) else None
    if provider is None:
        raise ValueError(f"engine must be 'auto', 'pytrec' or 'fast', got {engine!r}")
    if provider is COMPILED:
        COMPILED.require(measures)
    return provider


def choose_backend(engine: str, measures: Sequence[Measure], *, large: bool) -> str:
    """The name (``"pytrec"`` or ``"fast"``) of :func:`choose_provider`'s choice.

    >>> choose_backend("auto", [], large=False)
    'pytrec'
    """
    return choose_provider(engine, measures, large=large).name
