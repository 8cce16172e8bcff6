"""How comparison tables write their numbers and texts (markdown and LaTeX).

>>> signed(0.1), pval(0.00001)
('+0.1000', '<0.0001')
>>> print(tex("a_b & 5%"))
a\\_b \\& 5\\%
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["TEX_ESCAPES", "fixed", "plain_data", "pval", "shorten", "signed", "tex"]


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


TEX_ESCAPES = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "Δ": r"$\Delta$", "−": "-", "<": r"$<$",
}  # fmt: skip


def tex(text: str) -> str:
    return "".join(TEX_ESCAPES.get(char, char) for char in text)


def plain_data(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: plain_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain_data(item) for item in value]
    return value
