"""The idempotency path, once for every post (deals, events, the live hot path): a post's outcome is
remembered under (table, scope, key) in the same transaction as its effect; the same key again gets
that outcome back (:class:`Replayed`) if the body is the same, :class:`~scoreboard.errors.KeyReused`
if not; a concurrent first use of the key loses on the unique index and gets the winner's outcome.

What an outcome means to a client (its HTTP status and headers) is the routers' business
(:mod:`scoreboard.api`). The record's columns predate this module, though, and rows already stored
hold the answer as it was sent: ``idempotency.status_code`` 201 or 422, ``headers`` a created deal's
``Location``. So the columns keep that form (no migration), written and read only here:
:data:`_STORED` is how an :class:`Outcome` is kept, not a choice of HTTP status."""

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from scoreboard.db import Database
from scoreboard.errors import KeyReused
from scoreboard.models import IdempotencyRecord
from scoreboard.rows import deal_path


class Outcome(enum.Enum):
    """What a post came to."""

    #: stored: a deal scored and kept, an event on the feed
    CREATED = "created"
    #: a deal log refused, kept as a ``refused`` alert
    REFUSED = "refused"


#: How each outcome is kept in ``idempotency.status_code`` (see the module's note).
_STORED = {Outcome.CREATED: 201, Outcome.REFUSED: 422}
_OUTCOME_OF = {code: outcome for outcome, code in _STORED.items()}


@dataclass(frozen=True)
class Replayed:
    """A repeated post: the outcome and body of the first one (``deal``: the number a created deal
    got, where the post stored one)."""

    outcome: Outcome
    body: Any
    deal: int | None = None


class StoredAnswer(Protocol):
    """An :class:`~scoreboard.models.IdempotencyRecord`, or a row with its columns."""

    request_hash: str
    status_code: int
    response: Any
    headers: dict[str, str]


def request_hash(body: Any) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def columns(
    table_id: str,
    scope: str,
    key: str,
    digest: str,
    outcome: Outcome,
    body: Any,
    *,
    deal: int | None = None,
    at: datetime | None = None,
) -> dict[str, Any]:
    """The record's columns for an outcome (for a prebuilt insert; :func:`remember` adds it)."""
    out: dict[str, Any] = {
        "table_id": table_id,
        "scope": scope,
        "key": key,
        "request_hash": digest,
        "status_code": _STORED[outcome],
        "response": body,
        "headers": {"Location": deal_path(table_id, deal)} if deal is not None else {},
    }
    if at is not None:
        out["created_at"] = at
    return out


def remember(
    s: Session,
    table_id: str,
    scope: str,
    key: str,
    digest: str,
    outcome: Outcome,
    body: Any,
    *,
    deal: int | None = None,
) -> None:
    s.add(IdempotencyRecord(**columns(table_id, scope, key, digest, outcome, body, deal=deal)))


def record(s: Session, table_id: str, scope: str, key: str) -> IdempotencyRecord | None:
    return s.scalar(
        select(IdempotencyRecord).where(
            IdempotencyRecord.table_id == table_id,
            IdempotencyRecord.scope == scope,
            IdempotencyRecord.key == key,
        )
    )


def replayed(stored: StoredAnswer, digest: str) -> Replayed:
    """The stored outcome for a repeated key (:class:`~scoreboard.errors.KeyReused` for another
    body)."""
    if stored.request_hash != digest:
        raise KeyReused("this Idempotency-Key was already used with a different body")
    location = (stored.headers or {}).get("Location")
    deal = int(location.rsplit("/", 1)[1]) if location else None
    return Replayed(_OUTCOME_OF[stored.status_code], stored.response, deal)


class Idempotency:
    """Reads of the stored outcomes outside a post's own transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def replay(self, table_id: str, scope: str, key: str, digest: str) -> Replayed | None:
        with self.db.read() as s:
            found = record(s, table_id, scope, key)
            return None if found is None else replayed(found, digest)

    def lost_race(self, table_id: str, scope: str, key: str, digest: str, exc: IntegrityError) -> Replayed:
        """After ``exc``: the stored outcome of the request that won the key (else ``exc`` again)."""
        replay = self.replay(table_id, scope, key, digest)
        if replay is None:
            raise exc
        return replay
