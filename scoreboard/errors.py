"""The one error type of the service: an HTTP status and a one-line message (cut to a sane length:
a message never echoes a request at length)."""

from __future__ import annotations

#: Longest message the service sends back.
MAX_MESSAGE = 300


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` on one line, cut to ``limit`` characters.

    >>> clip("a\\n  b"), clip("x" * 500, 10)
    ('a b', 'xxxxxxxxx…')
    """
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class ServiceError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = clip(message)
        self.headers = headers
