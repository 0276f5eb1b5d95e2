"""Echoing bad input in error messages without echoing megabytes of it.

>>> shown("1X")
"'1X'"
>>> shown("x" * 100)
"'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… (102 characters)"
"""

from __future__ import annotations

from typing import Final

#: Characters of an echoed value kept in a message.
LIMIT: Final = 40


def shown(value: object, limit: int = LIMIT) -> str:
    """``repr(value)`` cut to ``limit`` characters, saying how long it was when cut."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}… ({len(text)} characters)"
