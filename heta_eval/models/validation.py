"""A pydantic ``ValidationError`` as the one line a user is shown: which field, and why."""

from __future__ import annotations

from typing import Any

__all__ = ["one_line"]


def one_line(error: Any) -> str:
    """``field a.b: message; field c: message`` for each of ``error.errors()`` (no URLs, no
    input echoed: the file and line are the caller's to add).

    >>> from pydantic import BaseModel, ValidationError
    >>> class Case(BaseModel):
    ...     id: str
    ...     top_k: int
    >>> try:
    ...     Case.model_validate({"top_k": None})
    ... except ValidationError as error:
    ...     print(one_line(error))
    field id: Field required; field top_k: Input should be a valid integer
    """
    parts = []
    for item in error.errors(include_url=False):
        field = ".".join(str(part) for part in item["loc"]) or "(record)"
        parts.append(f"field {field}: {item['msg']}")
    return "; ".join(parts)
