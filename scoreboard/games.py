"""A table's games: which game a posted deal belongs to, and how a table moves from one round's
game to the next. No HTTP here; every function works inside the caller's write transaction.

A table plays one **game** at a time (:class:`~scoreboard.models.TableGame`): from its start levels
(2–2 unless set) to its end. Outside an event a table plays one free game, deal after deal. When an
event publishes a round, each board of each match gets a game at its table, ``ready``; it opens (the
table's current game: its levels start from the game's start, and the deals the table posts count
there) as soon as the table's current game is a free one or is closed. A match game closes when the
match gets its result (closed at time, entered by a referee, or a side passing A), and the table's
next ready game opens at once.

A deal belongs to the game that was open when it started (the table's ``deal_start`` event), if
that game is a match's; otherwise to the table's current game. A deal for a game that is closed is
stored **held**: kept, shown, alerted to the referees, and counted nowhere until a referee counts,
moves or voids it, so nothing a table posts can change a closed round's result.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from scoreboard.kinds import kind_of
from scoreboard.live import LiveDeal
from scoreboard.models import BridgeEvent, Deal, ScoreTable, TableGame, Tournament, TourneyMatch

OPEN, READY, CLOSED = "open", "ready", "closed"
COUNTED, HELD, VOIDED = "counted", "held", "voided"


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_game(
    s: Session,
    table: ScoreTable,
    *,
    status: str,
    start: dict[str, Any] | None = None,
    teams: dict[str, str] | None = None,
    at: datetime | None = None,
) -> TableGame:
    """The table's next game (numbered after its last), added to the session."""
    last = s.scalar(select(func.max(TableGame.number)).where(TableGame.table_id == table.id)) or 0
    at = at or utcnow()
    game = TableGame(
        table_id=table.id,
        number=int(last) + 1,
        status=status,
        start=start,
        teams=teams,
        state=kind_of(table.game).initial(table.rules, start),
        deals=0,
        opened_at=at if status == OPEN else None,
        note="",
    )
    s.add(game)
    s.flush()
    if status == OPEN:
        table.game_id = game.id
        table.state = dict(game.state)
    return game


def current(s: Session, table: ScoreTable) -> TableGame:
    """The table's current game (a free one is opened for a table that has none)."""
    game = s.get(TableGame, table.game_id) if table.game_id is not None else None
    if game is None or game.table_id != table.id:
        game = advance(s, table)
    return game


def next_ready(s: Session, table: ScoreTable) -> TableGame | None:
    return s.scalar(
        select(TableGame)
        .where(TableGame.table_id == table.id, TableGame.status == READY)
        .order_by(TableGame.number)
        .limit(1)
    )


def advance(s: Session, table: ScoreTable, at: datetime | None = None) -> TableGame:
    """Open the table's next ready game if its current game allows: it is closed, missing, or a
    free game (which gives way to an event's game and closes). Returns the current game after."""
    at = at or utcnow()
    game = s.get(TableGame, table.game_id) if table.game_id is not None else None
    if game is not None and game.table_id != table.id:
        game = None
    if game is not None and game.status == OPEN and game.match_id is not None:
        return game  # a match in play: the next round waits for its result
    ready = next_ready(s, table)
    if ready is None:
        if game is None:
            fallback = s.scalar(
                select(TableGame)
                .where(TableGame.table_id == table.id)
                .order_by(TableGame.number.desc())
                .limit(1)
            )
            if fallback is not None and fallback.match_id is not None and fallback.status == CLOSED:
                table.game_id, table.state = fallback.id, dict(fallback.state or {})
                return fallback
            return new_game(s, table, status=OPEN, at=at)
        return game
    if game is not None and game.status == OPEN:
        close(game, "scoreboard", f"the table went on to round {ready.round_no}'s game", at)
    ready.status, ready.opened_at = OPEN, at
    ready.state = kind_of(table.game).initial(table.rules, ready.start)
    table.game_id, table.state = ready.id, dict(ready.state)
    s.flush()
    return ready


def close(game: TableGame, by: str, note: str, at: datetime | None = None) -> None:
    game.status, game.closed_at, game.closed_by = CLOSED, at or utcnow(), by
    game.note = note[:2000]


def target(s: Session, table: ScoreTable, log: dict[str, Any] | None = None) -> TableGame:
    """The game a deal the table posts now belongs to: the match game its ``deal_start`` was seen
    in, else the table's current game. A bridge board belongs to the bridge event's round game
    whose boards hold it (the latest such at the table): a board posted after the director started
    the next round still counts in its own."""
    if table.game == "bridge" and log is not None:
        return _board_game(s, table, log.get("board"))
    live = LiveDeal.from_stored(table.live)
    started_in = live.game
    if isinstance(started_in, int) and not live.finished and started_in != table.game_id:
        game = s.get(TableGame, started_in)
        if game is not None and game.table_id == table.id and game.match_id is not None:
            return game
    return current(s, table)


def _board_game(s: Session, table: ScoreTable, board: Any) -> TableGame:
    game = current(s, table)
    if board in ((game.start or {}).get("boards") or [board]):
        return game
    earlier = s.scalars(
        select(TableGame)
        .where(TableGame.table_id == table.id, TableGame.bridge_event_id.is_not(None))
        .order_by(TableGame.number.desc())
    ).all()
    return next((g for g in earlier if board in ((g.start or {}).get("boards") or [])), game)


def counts_when_closed(game: TableGame) -> bool:
    """Whether a deal posted to ``game`` after it closed counts there: a bridge event's board does
    (boards do not depend on one another, and a slow table's last board still belongs to its round);
    a Shengji deal is held for a referee (it could change a closed match's result)."""
    return game.bridge_event_id is not None


def counted_deals(s: Session, game: TableGame) -> list[Deal]:
    return list(
        s.scalars(
            select(Deal).where(Deal.game_id == game.id, Deal.status == COUNTED).order_by(Deal.seq)
        ).all()
    )


def fold_inputs(deals: Iterable[Deal]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    out = []
    for deal in deals:
        assert deal.fold is not None
        out.append((deal.fold["log"], deal.fold["result"]))
    return out


def describe(s: Session, game: TableGame | None) -> dict[str, Any] | None:
    """A game as the pages and the API show it: its number, status, teams and start, and where it
    stands in its event (event, round, table number, board)."""
    if game is None:
        return None
    event: Tournament | BridgeEvent | None = (
        s.get(Tournament, game.tournament_id)
        if game.tournament_id
        else s.get(BridgeEvent, game.bridge_event_id)
        if game.bridge_event_id
        else None
    )
    match = s.get(TourneyMatch, game.match_id) if game.match_id is not None else None
    boards = len(match.tables or []) if match is not None else 1
    return {
        "number": game.number,
        "status": game.status,
        "teams": dict(game.teams or {}),
        "start": game.start,
        "deals": game.deals,
        "event": game.tournament_id or game.bridge_event_id,
        "event_name": None if event is None else (event.name or "event"),
        "round": game.round_no,
        "table_no": game.table_no,
        "board": None if game.board is None or boards < 2 else game.board + 1,
        "match": game.match_id is not None,
        "note": game.note or "",
    }
