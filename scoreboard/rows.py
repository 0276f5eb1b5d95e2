"""What every part of the service shares: looking up a table, a deal or its current version (a
missing one is :class:`~scoreboard.errors.NotFound`), the dict forms of an alert and a deal that
the feed and the API send, and the clock."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from scoreboard import games
from scoreboard.errors import NotFound
from scoreboard.models import Alert, Deal, DealVersion, ScoreTable, TableGame


def deal_path(table_id: str, seq: int) -> str:
    """A deal's address in the API (a created deal's ``Location``).

    >>> deal_path("t1", 3)
    '/api/tables/t1/deals/3'
    """
    return f"/api/tables/{table_id}/deals/{seq}"


#: A feed event to append: the table it is about (or none), its kind and its payload.
FeedEvent = tuple[str | None, str, dict[str, Any]]
#: The statuses of an alert still waiting for a referee.
OPEN_ALERT = ("open", "acknowledged")


def now() -> datetime:
    return datetime.now(UTC)


def table_row(s: Session, table_id: str) -> ScoreTable:
    table = s.get(ScoreTable, table_id)
    if table is None:
        raise NotFound(f"no table {table_id!r}")
    return table


def deal_row(s: Session, table_id: str, seq: int) -> tuple[Deal, DealVersion]:
    """Deal ``seq`` of a table and its current version."""
    deal = s.scalar(select(Deal).where(Deal.table_id == table_id, Deal.seq == seq))
    if deal is None:
        raise NotFound(f"no deal {seq} at table {table_id!r}")
    current = s.scalar(
        select(DealVersion).where(DealVersion.deal_id == deal.id, DealVersion.version == deal.current_version)
    )
    assert current is not None
    return deal, current


def logged(s: Session, deal: Deal) -> tuple[dict[str, Any], dict[str, Any]]:
    """The log and the result of a deal's current version."""
    _, version = deal_row(s, deal.table_id, deal.seq)
    return version.log, version.result


def alert_dict(alert: Alert) -> dict[str, Any]:
    return {
        "id": alert.id,
        "table": alert.table_id,
        "deal_id": alert.deal_id,
        "kind": alert.kind,
        "seat": alert.seat,
        "trick": alert.trick,
        "proven_at": alert.proven_at,
        "reasoning": alert.reasoning,
        "source": alert.source,
        "status": alert.status,
        "ruling": alert.ruling,
        "note": alert.note,
        "resolved_by": alert.resolved_by,
        "data": alert.data,
        "images": [f"/api/alerts/{alert.id}/images/{img.id}" for img in alert.images],
    }


def deal_event(deal: Deal, version: int, result: dict[str, Any]) -> dict[str, Any]:
    """A deal's feed event: its number, version, score and the match state after it."""
    return {
        "deal": deal.seq,
        "version": version,
        "defender_total": result.get("defender_total"),
        "outcome": result.get("outcome"),
        "state_after": deal.state_after,
    }


def deal_place(s: Session, deal: Deal) -> dict[str, Any]:
    """Where a deal counts: its table, number, status, game, and its history of moves."""
    game = s.get(TableGame, deal.game_id) if deal.game_id is not None else None
    return {
        "table": deal.table_id,
        "deal": deal.seq,
        "status": deal.status,
        "game": games.describe(s, game),
        "history": list(deal.history or []),
        "state_after": deal.state_after,
    }
