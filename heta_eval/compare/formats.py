"""How comparison tables write their numbers (each format's escaping of text is
:mod:`heta_eval.io.tables`'s).

>>> signed(0.1), pval(0.00001)
('+0.1000', '<0.0001')
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fixed", "plain_data", "pval", "shorten", "signed"]


def fixed(value: float) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.4f}"


def signed(value: float) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:+.4f}"


def pval(value: float) -> str:
    if value is None or math.isnan(value):
        return "–"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def plain_data(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: plain_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain_data(item) for item in value]
    return value
