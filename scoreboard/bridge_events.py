"""A bridge event on the scoreboard (seed 003): a pair event scored by match points over a Mitchell
movement, or a team match of two tables scored by IMPs (law 78), played at bridge tables.

The director creates the event from bridge tables (table 1, 2, … in the order given) and starts
each round: every table's game becomes that round's, holding its boards and the pairs (or teams)
sitting North-South and East-West (:class:`~scoreboard.models.TableGame` with ``bridge_event_id``).
The boards the tables post are the results: a board counts in the round game whose boards hold it
(a board posted late, after the next round started, still counts in its own round), the later of
two posts of one board at one table counts, and a board the round does not play there is alerted
(:func:`scoreboard.kinds.board_doubt`) and counted nowhere in the event.

Results come from the pure rules (:mod:`bridge.events`, :mod:`bridge.results`): each board's
traveller match-pointed and the pairs ranked in each direction, or each board's IMPs to team A.
Every write is one transaction that also appends to the feed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import uuid4

from sqlalchemy import select
from sqlalchemy.orm import Session

from bridge.events import BoardResult, MovementError, Seating, mitchell, pair_results, team_match
from bridge.results import matchpoints
from scoreboard import feed, games
from scoreboard.db import Database
from scoreboard.errors import Conflict, Invalid, NotFound
from scoreboard.models import BridgeEvent, Deal, ScoreTable, TableGame
from scoreboard.rows import now
from scoreboard.schemas import BridgeEventCreate
from scoreboard.tables import summary

#: The most rounds a team match may have (its boards are numbered up to 999).
MAX_TEAM_ROUNDS = 32


def seatings(kind: str, tables: int, boards_per_round: int, rounds: int | None) -> list[Seating]:
    """Every table's seating, round by round: the Mitchell movement of a pair event, or a team
    match's two tables (team 1 North-South at table 1 and East-West at table 2; both tables play
    the round's boards). Raises :class:`bridge.events.MovementError`.

    >>> [(s.round, s.table, s.ns, s.ew, s.boards) for s in seatings("teams", 2, 2, 2)]
    [(1, 1, 1, 2, (1, 2)), (1, 2, 2, 1, (1, 2)), (2, 1, 1, 2, (3, 4)), (2, 2, 2, 1, (3, 4))]
    """
    if kind == "pairs":
        return mitchell(tables, boards_per_round, rounds)
    if tables != 2:
        raise MovementError(f"a team match is played at 2 tables, not {tables}")
    rounds = rounds or 1
    if not 1 <= rounds <= MAX_TEAM_ROUNDS or rounds * boards_per_round > 999:
        raise MovementError(
            f"a team match of {boards_per_round} boards a round has 1 to {MAX_TEAM_ROUNDS} rounds"
        )
    out = []
    for r in range(1, rounds + 1):
        first = (r - 1) * boards_per_round + 1
        boards = tuple(range(first, first + boards_per_round))
        out += [Seating(r, 1, 1, 2, boards), Seating(r, 2, 2, 1, boards)]
    return out


def _names(event: BridgeEvent) -> dict[str, list[str]]:
    """Each direction's (pairs) or each team's names, by number from 1."""
    entries = event.entries or {}
    n = len(event.tables)
    if event.kind == "teams":
        team = [entries.get("A") or "Team A", entries.get("B") or "Team B"]
        return {"NS": team, "EW": team}
    return {
        side: [(list(entries.get(side) or []) + [None] * n)[i] or f"{side} pair {i + 1}" for i in range(n)]
        for side in ("NS", "EW")
    }


def _seat_names(event: BridgeEvent, seating: Seating) -> dict[str, str]:
    names = _names(event)
    return {"NS": names["NS"][seating.ns - 1], "EW": names["EW"][seating.ew - 1]}


class BridgeEvents:
    def __init__(self, db: Database, notifier: feed.Notifier) -> None:
        self.db = db
        self.notifier = notifier

    # --- the director's part ---------------------------------------------------------------------

    def create(self, body: BridgeEventCreate) -> dict[str, Any]:
        """A new event from bridge tables; its movement is checked, no round is started."""
        if len(set(body.tables)) != len(body.tables):
            raise Invalid("a table is listed twice")
        try:
            plan = seatings(body.kind, len(body.tables), body.boards_per_round, body.rounds)
        except MovementError as exc:
            raise Invalid(str(exc)) from exc
        entries: dict[str, Any] = {}
        if body.kind == "pairs":
            for side, names in (
                ("NS", body.pairs.NS if body.pairs else None),
                ("EW", body.pairs.EW if body.pairs else None),
            ):
                if names is not None and len(names) != len(body.tables):
                    raise Invalid(f"{side}: {len(names)} pair names for {len(body.tables)} tables")
                entries[side] = list(names or [])
            if body.teams is not None:
                raise Invalid("teams: a pair event has pairs, not teams")
        else:
            if body.pairs is not None:
                raise Invalid("pairs: a team match has teams, not pairs")
            entries = body.teams.model_dump(exclude_none=True) if body.teams else {}
        with self.db.write() as s:
            for table_id in body.tables:
                table = s.get(ScoreTable, table_id)
                if table is None:
                    raise NotFound(f"no table {table_id!r}")
                if table.game != "bridge":
                    raise Invalid(f"table {table.name} plays {table.game}, not bridge")
            event = BridgeEvent(
                id=uuid4().hex,
                name=body.name,
                kind=body.kind,
                boards_per_round=body.boards_per_round,
                rounds=max(x.round for x in plan),
                tables=list(body.tables),
                entries=entries,
                current_round=0,
            )
            s.add(event)
            s.flush()
            out = self._view(s, event)
            feed.append(self.db, s, [(None, "bridge", {"bridge_event": event.id, "created": True})])
        self.notifier.notify()
        return out

    def start_round(self, event_id: str, number: int, author: str) -> dict[str, Any]:
        """Round ``number`` (the next one) starts: each table's current game closes and the round's
        game opens with its boards and pairs."""
        with self.db.write() as s:
            event = self._event(s, event_id)
            if number != event.current_round + 1:
                raise Conflict(
                    f"round {event.current_round} is the event's current round: round {event.current_round + 1} starts next"
                    if event.current_round < event.rounds
                    else f"the event's {event.rounds} rounds are all started"
                )
            if number > event.rounds:
                raise Conflict(f"the event has {event.rounds} rounds")
            plan = seatings(event.kind, len(event.tables), event.boards_per_round, event.rounds)
            at = now()
            touched = []
            for seating in [x for x in plan if x.round == number]:
                table_id = event.tables[seating.table - 1]
                self.db.lock_table_row(s, table_id)
                table = s.get(ScoreTable, table_id)
                if table is None:
                    raise NotFound(f"table {seating.table} of the event is gone")
                old = s.get(TableGame, table.game_id) if table.game_id is not None else None
                if old is not None and old.status == games.OPEN:
                    games.close(old, author, f"{event.name}: round {number} started", at)
                game = games.new_game(
                    s,
                    table,
                    status=games.OPEN,
                    start={
                        "round": number,
                        "boards": list(seating.boards),
                        "ns": seating.ns,
                        "ew": seating.ew,
                    },
                    teams=_seat_names(event, seating),
                    at=at,
                )
                game.bridge_event_id, game.round_no, game.table_no = event.id, number, seating.table
                touched.append(table)
            event.current_round = number
            s.flush()
            out = self._view(s, event)
            feed.append(
                self.db,
                s,
                [
                    *[(t.id, "table", summary(s, t, slim=True)) for t in touched],
                    (None, "bridge", {"bridge_event": event.id, "round": number, "by": author}),
                ],
            )
        self.notifier.notify()
        return out

    # --- what anyone reads ---------------------------------------------------------------------

    def all(self) -> list[dict[str, Any]]:
        with self.db.read() as s:
            events = s.scalars(select(BridgeEvent).order_by(BridgeEvent.created_at.desc())).all()
            return [self._head(e) for e in events]

    def view(self, event_id: str) -> dict[str, Any]:
        with self.db.read() as s:
            return self._view(s, self._event(s, event_id))

    def traveller(self, event_id: str, board: int) -> dict[str, Any]:
        """One board's traveller: every line of it, with each side's match points (pairs) or the
        board's IMPs to team A (teams)."""
        with self.db.read() as s:
            event = self._event(s, event_id)
            plan = seatings(event.kind, len(event.tables), event.boards_per_round, event.rounds)
            if not any(board in x.boards for x in plan):
                raise NotFound(f"board {board} is not played in {event.name}")
            lines = [x for x in self._lines(s, event) if x["board"] == board]
            return {"event": self._head(event), "board": board, **_scored(event.kind, board, lines)}

    # --- inside ----------------------------------------------------------------------------------

    def _event(self, s: Session, event_id: str) -> BridgeEvent:
        event = s.get(BridgeEvent, event_id)
        if event is None:
            raise NotFound(f"no bridge event {event_id!r}")
        return event

    def _head(self, event: BridgeEvent) -> dict[str, Any]:
        return {
            "id": event.id,
            "name": event.name,
            "kind": event.kind,
            "boards_per_round": event.boards_per_round,
            "rounds": event.rounds,
            "current_round": event.current_round,
            "tables": list(event.tables),
            "names": _names(event),
        }

    def _lines(self, s: Session, event: BridgeEvent) -> list[dict[str, Any]]:
        """Every board played in the event: one line per board per round game (the later post of
        a board counts), boards outside the game's round left out."""
        games_ = s.scalars(
            select(TableGame).where(TableGame.bridge_event_id == event.id).order_by(TableGame.id)
        ).all()
        names = {t.id: t.name for t in s.scalars(select(ScoreTable).where(ScoreTable.id.in_(event.tables)))}
        lines: dict[tuple[int, int], dict[str, Any]] = {}
        for game in games_:
            start = game.start or {}
            boards = set(start.get("boards") or [])
            deals = s.scalars(
                select(Deal).where(Deal.game_id == game.id, Deal.status == games.COUNTED).order_by(Deal.seq)
            ).all()
            for deal in deals:
                fold = deal.fold or {}
                log, result = fold.get("log") or {}, fold.get("result") or {}
                board = log.get("board")
                score = result.get("score") or {}
                if not isinstance(board, int) or board not in boards or "NS" not in score:
                    continue
                lines[(game.id, board)] = {
                    "board": board,
                    "round": game.round_no,
                    "table": game.table_no,
                    "table_id": game.table_id,
                    "table_name": names.get(game.table_id, ""),
                    "deal": deal.seq,
                    "ns": start.get("ns"),
                    "ew": start.get("ew"),
                    "ns_name": (game.teams or {}).get("NS"),
                    "ew_name": (game.teams or {}).get("EW"),
                    "contract": log.get("contract"),
                    "declarer": log.get("declarer"),
                    "result": result.get("result"),
                    "ns_score": int(score["NS"]),
                }
        return sorted(lines.values(), key=lambda x: (x["board"], x["round"] or 0, x["table"] or 0))

    def _view(self, s: Session, event: BridgeEvent) -> dict[str, Any]:
        plan = seatings(event.kind, len(event.tables), event.boards_per_round, event.rounds)
        names = _names(event)
        lines = self._lines(s, event)
        boards = sorted({b for x in plan for b in x.boards})
        played: dict[int, int] = {}
        for line in lines:
            played[line["board"]] = played.get(line["board"], 0) + 1
        out: dict[str, Any] = {
            **self._head(event),
            "movement": [
                {
                    "round": x.round,
                    "table": x.table,
                    "ns": x.ns,
                    "ew": x.ew,
                    "ns_name": names["NS"][x.ns - 1],
                    "ew_name": names["EW"][x.ew - 1],
                    "boards": list(x.boards),
                }
                for x in plan
            ],
            "boards": [{"board": b, "lines": played.get(b, 0)} for b in boards],
        }
        if event.kind == "pairs":
            standings = pair_results(BoardResult(x["board"], x["ns"], x["ew"], x["ns_score"]) for x in lines)
            out["standings"] = [
                {
                    "direction": st.direction,
                    "pair": st.pair,
                    "name": names[st.direction][st.pair - 1],
                    "matchpoints": st.matchpoints,
                    "top": st.top,
                    "percentage": st.percentage,
                }
                for st in standings
            ]
            out["match"] = None
        else:
            out["standings"] = []
            out["match"] = _team_match(lines, names["NS"])
        return out


def _team_match(lines: Sequence[dict[str, Any]], teams: list[str]) -> dict[str, Any]:
    """A team match's boards that both tables have played, each board's IMPs to team 1, totals."""
    by_board: dict[int, dict[int, int]] = {}
    for line in lines:
        by_board.setdefault(line["board"], {})[line["table"]] = line["ns_score"]
    both = [(b, t[1], t[2]) for b, t in sorted(by_board.items()) if 1 in t and 2 in t]
    match = team_match(both)
    imps_a, imps_b = match.totals
    return {
        "teams": teams,
        "boards": [
            {"board": b, "ns_score_1": a, "ns_score_2": c, "imps": v}
            for (b, a, c), v in zip(both, match.imps, strict=True)
        ],
        "imps": {"A": imps_a, "B": imps_b},
    }


def _scored(kind: str, board: int, lines: list[dict[str, Any]]) -> dict[str, Any]:
    if kind == "pairs":
        ns, ew = matchpoints([x["ns_score"] for x in lines]) if lines else ([], [])
        scored = [{**x, "ns_mp": a, "ew_mp": b} for x, a, b in zip(lines, ns, ew, strict=True)]
        return {"lines": scored, "top": 2 * (len(lines) - 1) if lines else 0, "imps": None}
    by_table = {x["table"]: x["ns_score"] for x in lines}
    imps = (
        team_match([(board, by_table[1], by_table[2])]).imps[0] if 1 in by_table and 2 in by_table else None
    )
    return {"lines": lines, "top": None, "imps": imps}
