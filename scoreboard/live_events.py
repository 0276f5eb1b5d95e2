"""The edge's event stream: a deal starting, each card played, each trick's result (the hot path:
the table's live state, :class:`scoreboard.live.LiveDeal`), and the edge's own alerts and health
reports. Every post is idempotent (:mod:`scoreboard.idempotency`) and appends to the feed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from contract.events import (
    AlertIn,
    BoardStart,
    DealStart,
    GameStart,
    Health,
    LongThink,
    Play,
    Stone,
    TrickResult,
)
from scoreboard import feed, idempotency
from scoreboard.db import Database
from scoreboard.errors import NotFound
from scoreboard.idempotency import Idempotency, Outcome, Replayed
from scoreboard.live import LiveDeal, apply_live, trick_disagreement
from scoreboard.logs import decode_images
from scoreboard.models import Alert, AlertImage, Event, IdempotencyRecord, ScoreTable
from scoreboard.rows import FeedEvent, alert_dict, now, table_row
from scoreboard.tables import summary

_TABLES = cast(Table, ScoreTable.__table__)
_IDEM = cast(Table, IdempotencyRecord.__table__)
_EVENTS = cast(Table, Event.__table__)
# Built once: the play path runs for every card laid at every table.
# The table's row (locked on PostgreSQL) and any stored answer for the key, in one round trip.
_SELECT_LIVE = (
    select(
        _TABLES.c.rules,
        _TABLES.c.live,
        _TABLES.c.game_id,
        _IDEM.c.request_hash,
        _IDEM.c.status_code,
        _IDEM.c.response,
        _IDEM.c.headers,
    )
    .select_from(
        _TABLES.outerjoin(
            _IDEM,
            (_IDEM.c.table_id == _TABLES.c.id) & (_IDEM.c.scope == "event") & (_IDEM.c.key == bindparam("k")),
        )
    )
    .where(_TABLES.c.id == bindparam("tid"))
    .with_for_update(of=_TABLES)
)
_UPDATE_LIVE = update(_TABLES).where(_TABLES.c.id == bindparam("tid"))
_INSERT_EVENT = insert(_EVENTS).returning(_EVENTS.c.id)
_INSERT_IDEM = insert(_IDEM)

EdgeEvent = DealStart | BoardStart | GameStart | Stone | LongThink | Play | TrickResult | AlertIn | Health
LiveEvent = DealStart | BoardStart | GameStart | Stone | LongThink | Play | TrickResult


@dataclass(frozen=True)
class EventStored:
    """An edge event on the feed as ``event``; ``alert``: the alert it raised, if any."""

    event: int
    alert: int | None = None

    def body(self) -> dict[str, Any]:
        return {"event": self.event} if self.alert is None else {"event": self.event, "alert": self.alert}


#: What a table's post of an event comes to.
EventPosted = EventStored | Replayed


class LiveEvents:
    def __init__(self, db: Database, notifier: feed.Notifier, keys: Idempotency) -> None:
        self.db = db
        self.notifier = notifier
        self.keys = keys

    def post(self, table_id: str, key: str, raw: object, event: EdgeEvent) -> EventPosted:
        """One edge event (``raw``: its body as sent, which the key's record is checked against)."""
        digest = idempotency.request_hash(raw)
        if isinstance(event, DealStart | BoardStart | GameStart | Stone | LongThink | Play | TrickResult):
            return self._post_live(table_id, key, digest, event)
        images = decode_images(event) if isinstance(event, AlertIn) else []
        try:
            with self.db.write() as s:
                self.db.lock_table_row(s, table_id)
                stored = idempotency.record(s, table_id, "event", key)
                if stored is not None:
                    return idempotency.replayed(stored, digest)
                table = table_row(s, table_id)
                alert_id: int | None = None
                payload: dict[str, Any]
                if isinstance(event, AlertIn):
                    alert = Alert(
                        table_id=table.id,
                        kind=event.kind,
                        seat=event.seat,
                        trick=event.trick,
                        proven_at=event.proven_at,
                        reasoning=event.reasoning,
                        source="edge",
                        status="open",
                        note="",
                    )
                    alert.images = [
                        AlertImage(content_type=ct, caption=cap, data=data) for ct, cap, data in images
                    ]
                    s.add(alert)
                    s.flush()
                    alert_id = alert.id
                    payload = alert_dict(alert)
                else:
                    table.health = {
                        **event.model_dump(exclude={"type"}, exclude_none=True),
                        "at": now().isoformat(),
                    }
                    payload = dict(table.health)
                s.flush()
                # alerts and health reports change the table's card; plays carry their own news
                events: list[FeedEvent] = [
                    (table.id, event.type, payload),
                    (table.id, "table", summary(s, table, slim=True)),
                ]
                rows = feed.append(self.db, s, events)
                out = EventStored(rows[0].id, alert_id)
                idempotency.remember(s, table.id, "event", key, digest, Outcome.CREATED, out.body())
        except IntegrityError as exc:
            return self.keys.lost_race(table_id, "event", key, digest, exc)
        self.notifier.notify()
        return out

    def _post_live(self, table_id: str, key: str, digest: str, event: LiveEvent) -> EventPosted:
        """The hot path (a play every few seconds from every table): prebuilt statements, no ORM."""
        try:
            with self.db.write() as s:
                conn = s.connection()
                # Lock the table's row (PostgreSQL; SQLite writers are serialised anyway). A
                # concurrent first use of the same key then fails on the unique index: see below.
                row = conn.execute(_SELECT_LIVE, {"tid": table_id, "k": key}).first()
                if row is None:
                    raise NotFound(f"no table {table_id!r}")
                if row.request_hash is not None:  # a replay: answer as the first time
                    return idempotency.replayed(row, digest)
                at_now = now().isoformat()
                live = apply_live(LiveDeal.from_stored(row.live), row.rules, event, at_now)
                if isinstance(
                    event, DealStart | BoardStart | GameStart
                ):  # a deal belongs to the game it started in
                    live.game = row.game_id
                live.seen = at_now  # the table's last word: is it online
                conn.execute(_UPDATE_LIVE, {"tid": table_id, "live": live.stored()})
                payload = event.model_dump(exclude_none=True)
                if isinstance(event, Play):
                    payload["captured"] = live.captured
                self.db.lock_feed(s)
                at = now()
                event_id = conn.execute(
                    _INSERT_EVENT,
                    {"table_id": table_id, "kind": event.type, "payload": payload, "created_at": at},
                ).scalar_one()
                alert_id: int | None = None
                if isinstance(event, TrickResult):
                    disagreement = trick_disagreement(live, event)
                    if disagreement is not None:
                        alert_id = self._mismatch_alert(s, table_id, event.trick, disagreement)
                out = EventStored(event_id, alert_id)
                conn.execute(
                    _INSERT_IDEM,
                    idempotency.columns(table_id, "event", key, digest, Outcome.CREATED, out.body(), at=at),
                )
        except IntegrityError as exc:
            return self.keys.lost_race(table_id, "event", key, digest, exc)
        self.notifier.notify()
        return out

    def _mismatch_alert(self, s: Session, table_id: str, trick: int, reasoning: str) -> int:
        alert = Alert(
            table_id=table_id,
            kind="mismatch",
            trick=trick,
            reasoning=reasoning,
            source="engine",
            status="open",
            note="",
        )
        s.add(alert)
        s.flush()
        table = table_row(s, table_id)
        feed.append(
            self.db,
            s,
            [
                (table_id, "alert", alert_dict(alert)),
                (table_id, "table", summary(s, table, slim=True)),
            ],
        )
        return alert.id
