"""The event feed: appending change events and waking Server-Sent-Event streams."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from scoreboard.db import Database
from scoreboard.models import Event


class Notifier:
    """Wakes waiting SSE streams (on any event loop) after a write commits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def notify(self) -> None:
        with self._lock:
            waiters = list(self._waiters)
        for loop, flag in waiters:
            try:
                loop.call_soon_threadsafe(flag.set)
            except RuntimeError:  # loop closed
                self.unsubscribe((loop, flag))

    def subscribe(self) -> tuple[asyncio.AbstractEventLoop, asyncio.Event]:
        token = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.add(token)
        return token

    def unsubscribe(self, token: tuple[asyncio.AbstractEventLoop, asyncio.Event]) -> None:
        with self._lock:
            self._waiters.discard(token)


def append(
    db: Database, session: Session, events: list[tuple[str | None, str, dict[str, Any]]]
) -> list[Event]:
    """Add events at the end of a write transaction (ids are the re-sync cursor)."""
    db.lock_feed(session)
    rows = [Event(table_id=table_id, kind=kind, payload=payload) for table_id, kind, payload in events]
    session.add_all(rows)
    session.flush()
    return rows


def event_dict(event: Event) -> dict[str, Any]:
    return {
        "id": event.id,
        "table": event.table_id,
        "kind": event.kind,
        "at": event.created_at.isoformat() if event.created_at else None,
        "data": event.payload,
    }


def last_id(db: Database) -> int:
    """The newest event's id (0 for an empty feed): where a stream without a cursor starts."""
    with db.read() as session:
        return int(session.scalar(select(func.max(Event.id))) or 0)


def events_after(
    db: Database, after: int, *, limit: int = 500, table_id: str | None = None
) -> list[dict[str, Any]]:
    with db.read() as session:
        query = select(Event).where(Event.id > after)
        if table_id is not None:
            query = query.where(Event.table_id == table_id)
        rows = session.scalars(query.order_by(Event.id).limit(limit)).all()
        return [event_dict(row) for row in rows]
