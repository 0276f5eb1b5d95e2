"""The scoreboard tables: creating one (and its token), setting it up (name, team names, starting
levels, first dealer, archived), a new token, and a table's summary as the API and the feed show it."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple
from uuid import uuid4

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from scoreboard import feed, games, scoring
from scoreboard.db import Database
from scoreboard.errors import Conflict, Invalid
from scoreboard.folding import Folds
from scoreboard.kinds import kind_of
from scoreboard.live import LiveDeal
from scoreboard.models import Alert, ScoreTable, TableGame
from scoreboard.rows import OPEN_ALERT, now, table_row
from scoreboard.schemas import SideLevels, TableCreate, TableUpdate
from scoreboard.security import new_token, token_hash

#: A table that has said nothing for this long is shown offline.
ONLINE_S = 120


class NewTable(NamedTuple):
    """A table just made, and its token (shown this once)."""

    id: str
    token: str


def online(live: LiveDeal, health: dict[str, Any] | None) -> bool:
    """Whether the table's last play, trick or health report is at most :data:`ONLINE_S` old."""
    stamps = [v for v in (live.seen, (health or {}).get("at")) if isinstance(v, str)]
    if not stamps:
        return False
    try:
        last = max(datetime.fromisoformat(v) for v in stamps)
    except ValueError:
        return False
    return (now() - last).total_seconds() <= ONLINE_S


def summary(s: Session, table: ScoreTable, *, slim: bool = False) -> dict[str, Any]:
    """The table as ``GET /api/tables/{id}`` shows it; ``slim`` (a feed event): with the current
    trick of its deal in play only."""
    open_alerts = s.scalar(
        select(func.count(Alert.id)).where(Alert.table_id == table.id, Alert.status.in_(OPEN_ALERT))
    )
    looks = s.scalar(
        select(func.count(Alert.id)).where(
            Alert.table_id == table.id, Alert.kind == "look", Alert.status.in_(OPEN_ALERT)
        )
    )
    game = s.get(TableGame, table.game_id) if table.game_id is not None else None
    state = table.state or kind_of(table.game).initial(table.rules, game.start if game else None)
    live = LiveDeal.from_stored(table.live)
    bridge = table.game == "bridge"
    levels = table.game == "shengji"
    return {
        "id": table.id,
        "name": table.name,
        "plays": table.game,
        "teams": dict(game.teams or {}) if game else {},
        "start": game.start if game else None,
        "rules": table.rules,
        "levels": state.get("levels", dict(scoring.INITIAL_LEVELS)) if levels else {},
        "dealer": state.get("dealer"),
        "winner": state.get("winner"),
        "deals": game.deals if game else 0,
        "game": games.describe(s, game),
        "next": games.describe(s, games.next_ready(s, table)),
        "archived": table.archived_at is not None,
        "boards": (
            {
                "played": list(state.get("played") or []),
                "last": state.get("last"),
                "round": list((game.start or {}).get("boards") or []) if game else [],
            }
            if bridge
            else None
        ),
        "gomoku": (
            {"games": int(state.get("games") or 0), "last": state.get("last")}
            if table.game == "gomoku"
            else None
        ),
        "open_alerts": int(open_alerts or 0),
        "live": live.slim() if slim else live.stored(),
        "health": {
            **(table.health or {}),
            "online": online(live, table.health),
            "looks": int(looks or 0),
        },
    }


def start_of(levels: SideLevels | None, dealer: str | None) -> dict[str, Any] | None:
    """A game's start (levels, first dealer), checked by the engine."""
    try:
        return scoring.start_of(levels.model_dump() if levels else None, dealer)
    except scoring.ScoringError as exc:
        raise Invalid(str(exc)) from exc


class Tables:
    def __init__(self, db: Database, notifier: feed.Notifier, folds: Folds) -> None:
        self.db = db
        self.notifier = notifier
        self.folds = folds

    def create(self, body: TableCreate) -> NewTable:
        token = new_token()
        start = start_of(body.levels, body.dealer)
        table = ScoreTable(
            id=uuid4().hex,
            name=body.name,
            token_hash=token_hash(token),
            game=body.plays,
            rules=body.rules,
            state=scoring.initial_state(body.rules, start),
            deal_count=0,
            live={},
            health={},
        )
        try:
            with self.db.write() as s:
                if s.scalar(select(ScoreTable.id).where(ScoreTable.name == body.name)):
                    raise Conflict(f"a table named {body.name!r} already exists")
                s.add(table)
                s.flush()
                games.new_game(
                    s,
                    table,
                    status=games.OPEN,
                    start=start,
                    teams=body.teams.model_dump(exclude_none=True) if body.teams else None,
                )
                feed.append(self.db, s, [(table.id, "table", summary(s, table, slim=True))])
        except IntegrityError as exc:
            raise Conflict(f"a table named {body.name!r} already exists") from exc
        self.notifier.notify()
        return NewTable(table.id, token)

    def update(self, table_id: str, body: TableUpdate, author: str) -> dict[str, Any]:
        """Name, team names, starting levels or first dealer of the table's current game (every
        deal of that game follows), or the table archived (left off the pages) or back."""
        try:
            with self.db.write() as s:
                self.db.lock_table_row(s, table_id)
                table = table_row(s, table_id)
                if body.name is not None and body.name != table.name:
                    if s.scalar(select(ScoreTable.id).where(ScoreTable.name == body.name)):
                        raise Conflict(f"a table named {body.name!r} already exists")
                    table.name = body.name
                    from scoreboard.auth import TOKENS

                    TOKENS.forget(table.id)
                game = games.current(s, table)
                if table.game != "shengji" and (body.levels is not None or body.dealer is not None):
                    raise Invalid(f"levels and dealer are Shengji's: table {table.name} plays {table.game}")
                if body.teams is not None:
                    game.teams = {**(game.teams or {}), **body.teams.model_dump(exclude_none=True)}
                if body.levels is not None or body.dealer is not None:
                    old = game.start or {}
                    levels = body.levels or SideLevels(**(old.get("levels") or {}))
                    game.start = start_of(levels, body.dealer or old.get("dealer"))
                    self.folds.recompute(s, table, game)
                if body.archived is not None:
                    table.archived_at = now() if body.archived else None
                s.flush()
                out = summary(s, table)
                feed.append(self.db, s, [(table.id, "table", {**summary(s, table, slim=True), "by": author})])
        except IntegrityError as exc:
            raise Conflict(f"a table named {body.name!r} already exists") from exc
        self.notifier.notify()
        return out

    def rotate_token(self, table_id: str) -> str:
        token = new_token()
        with self.db.write() as s:
            table = table_row(s, table_id)
            table.token_hash = token_hash(token)
        from scoreboard.auth import TOKENS

        TOKENS.forget(table_id)
        return token
