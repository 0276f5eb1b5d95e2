"""The service's refusals: one type per kind of refusal, each with a one-line message (cut to a sane
length: a message never echoes a request at length). They say what went wrong, not how to answer
it: the HTTP status (and headers) each one gets is decided in one place on the HTTP side,
:func:`scoreboard.api.error_status` and :func:`scoreboard.api.service_error`."""

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
    """The base of every refusal: ``message`` is one line (:func:`clip`)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = clip(message)


class Malformed(ServiceError):
    """The request itself is unusable: no idempotency key, an empty body."""


class Unauthorised(ServiceError):
    """No credentials, or ones that name nobody (log in, or send a token)."""


class Forbidden(ServiceError):
    """Known credentials that may not do this (a referee at an organiser's form, a token of another
    table, a form out of date)."""


class NotFound(ServiceError):
    """No such table, deal, alert, event, round, entry…"""


class Conflict(ServiceError):
    """The thing exists but is in the wrong state for this (an alert already closed, a name taken,
    an event archived)."""


class VersionConflict(Conflict):
    """A change made on a version of a deal that is no longer its current one: reload and retry."""


class TooLarge(ServiceError):
    """A piece of the request over its size limit (an image, an event file)."""


class Invalid(ServiceError):
    """A well-formed request whose content does not validate: a deal log the engine refuses, an
    unknown rule set, a missing reason, levels out of range."""


class KeyReused(Invalid):
    """An idempotency key already used with a different body."""


class TooManyAttempts(ServiceError):
    """Too many failed logins from one place: try again in ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
