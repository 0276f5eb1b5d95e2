"""Reading JSON text from outside (a deal log file, an HTTP body) with its size bounded before it is
trusted: nesting depth, integer length, non-finite numbers and NUL characters are refused with one
clear :class:`JsonInputError` instead of a ``RecursionError``, a 4,300-digit ``ValueError`` or a
database error further on.

>>> load_json('{"level": "5", "tricks": []}')
{'level': '5', 'tricks': []}
>>> load_json("[" * 100 + "]" * 100)
Traceback (most recent call last):
...
engine.jsontext.JsonInputError: JSON nested deeper than 32 levels
>>> load_json('{"points": 123456789012345678901234567890}')
Traceback (most recent call last):
...
engine.jsontext.JsonInputError: a JSON number longer than 18 digits
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

#: A deal log nests five levels deep (log → tricks → trick → plays → play → cards); every body the
#: scoreboard takes is shallower than this.
MAX_DEPTH: Final = 32
#: No count, level, id or cursor in the product needs more digits.
MAX_INT_DIGITS: Final = 18


class JsonInputError(ValueError):
    """JSON text that is malformed or exceeds the bounds above; the message is one short line."""


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise JsonInputError(f"a JSON number longer than {MAX_INT_DIGITS} digits")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonInputError("a JSON number too large to represent")
    return value


def _constant(name: str) -> Any:
    raise JsonInputError(f"{name} is not valid JSON")


def _check(value: Any, max_depth: int) -> None:
    """Depth and NUL characters, walked without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise JsonInputError("a JSON string holds a NUL character (\\u0000)")
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > max_depth:
            raise JsonInputError(f"JSON nested deeper than {max_depth} levels")
        if isinstance(item, dict):
            stack.extend((k, depth) for k in item)
            stack.extend((v, depth + 1) for v in item.values())
        else:
            stack.extend((v, depth + 1) for v in item)


def load_json(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """Decode JSON text within the bounds above; raises :class:`JsonInputError`."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonInputError(f"not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise JsonInputError("empty input: expected JSON")
    try:
        value = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except JsonInputError:
        raise
    except RecursionError:
        raise JsonInputError(f"JSON nested deeper than {max_depth} levels") from None
    except json.JSONDecodeError as exc:
        raise JsonInputError(f"malformed JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except ValueError as exc:
        raise JsonInputError(f"malformed JSON: {str(exc)[:80]}") from None
    _check(value, max_depth)
    return value
