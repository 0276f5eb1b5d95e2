"""The event around the tables: an event file imported (or built entry by entry) into the
database, rounds paired by ``tourney`` (the code ``tractorcam tourney pair`` runs) as drafts and
published as their own step, results entered by referees or taken from the tables' games, standings
always computed from the stored results through ``tourney.standings`` (nothing cached), the round
clock.

Publishing a round gives each board of each match a game at its table (:mod:`scoreboard.games`):
the table starts it from 2–2 as soon as its previous game is closed, and only that game's deals
make the board's result, so nothing posted in a later round changes a closed round's result.

Every write is one transaction that also appends a ``tourney`` event to the feed (and a ``clock``
event per bound table for the last-deal call), so the live pages follow.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final
from uuid import uuid4

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from scoreboard import feed, games
from scoreboard.db import Database
from scoreboard.errors import Conflict, Invalid, NotFound
from scoreboard.kinds import event_result
from scoreboard.live import LiveDeal
from scoreboard.models import (
    Deal,
    ScoreTable,
    TableGame,
    Tournament,
    TourneyEntry,
    TourneyMatch,
    TourneyRound,
)
from scoreboard.tables import summary
from tourney import Entry, Event, EventFileError, PairingError, pair_next, parse_event, standings
from tourney.pairing import Relaxed, history, rule_breaks

#: The clock of a round per scoring (the seeds): its length, the minute of the last-deal call, and
#: what the call means at the tables.
CLOCKS: Final[dict[str, dict[str, Any]]] = {
    # seed 001 notice 4.3: 1 h 30 min, the last 15 minutes called: the deal in play is the last one
    "zhku": {"minutes": 90, "call_at": 75, "rule": "finish_deal"},
    # seed 004: 60 minutes, at 50 no new deal (the deal in hand is finished)
    "challenge": {"minutes": 60, "call_at": 50, "rule": "no_new_deal"},
    # seed 002 art. 24 (timed rounds: at time the higher level wins) and art. 38 (30 minutes before
    # the end: the deal in hand does not count, three more deals are played); the round's length is
    # the organiser's (120 minutes unless set)
    "national": {"minutes": 120, "call_at": 90, "rule": "three_more_deals"},
}
CALL_TEXT: Final[dict[str, str]] = {
    "finish_deal": "Last deal: the deal in play is the round's last; finish it.",
    "no_new_deal": "No new deal: finish the deal in hand, then stop.",
    "three_more_deals": "Time call: the deal in hand does not count; play three more deals.",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _rating(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


class Tourneys:
    """Events, rounds, results and clocks; ``clock`` is injectable (tests move time by hand).
    Publishing a round moves tables on: their new summaries go on the feed
    (:func:`scoreboard.tables.summary`)."""

    def __init__(self, db: Database, notifier: feed.Notifier, clock: Callable[[], datetime] = utcnow) -> None:
        self.db = db
        self.notifier = notifier
        self.clock = clock

    # --- reading -------------------------------------------------------------------------------

    def tournament(self, s: Session, tid: str) -> Tournament:
        t = s.get(Tournament, tid)
        if t is None:
            raise NotFound("no such event")
        return t

    def _live(self, s: Session, tid: str) -> Tournament:
        """The event, for a change: an archived event takes none."""
        t = self.tournament(s, tid)
        if t.archived_at is not None:
            raise Conflict("this event is archived: restore it before changing it")
        return t

    @staticmethod
    def round_of(t: Tournament, number: int) -> TourneyRound:
        for r in t.rounds:
            if r.number == number:
                return r
        raise NotFound(f"no round {number} in this event")

    @staticmethod
    def match_of(r: TourneyRound, table_no: int) -> TourneyMatch:
        for m in r.matches:
            if m.bye is None and m.table_no == table_no:
                return m
        raise NotFound(f"no table {table_no} in round {r.number}")

    @staticmethod
    def match_json(m: TourneyMatch, team: bool) -> dict[str, Any]:
        """A match or bye in the event file's form (a result only once every board has one)."""
        if m.bye is not None:
            return {"bye": m.bye}
        out: dict[str, Any] = {"table": m.table_no, "home": m.home, "away": m.away}
        results = m.results or []
        if results and all(r is not None for r in results):
            out["result"] = results if team else results[0]
        return out

    def event_json(
        self, t: Tournament, *, drafts: bool = False, extra: TourneyRound | None = None
    ) -> dict[str, Any]:
        """The event file of ``t`` (published rounds; ``drafts`` adds the draft)."""
        team = bool(t.entries and t.entries[0].pairs)
        entries = []
        for e in t.entries:
            row: dict[str, Any] = {"id": e.code, "name": e.name}
            if e.unit is not None:
                row["unit"] = e.unit
            row["rating"] = _rating(e.rating)
            if e.group_name is not None:
                row["group"] = e.group_name
            if e.pairs:
                row["pairs"] = list(e.pairs)
            if e.withdrawn:
                row["withdrawn"] = True
            entries.append(row)
        rounds = [
            {"round": r.number, "matches": [self.match_json(m, team) for m in r.matches]}
            for r in t.rounds
            if r.status == "published" or drafts
        ]
        out: dict[str, Any] = {}
        if t.name is not None:
            out["name"] = t.name
        out.update(format=t.format, scoring=t.scoring)
        if t.rounds_planned is not None:
            out["rounds_planned"] = t.rounds_planned
        out.update(seed=t.seed, entries=entries, rounds=rounds)
        return out

    def event(self, t: Tournament, *, drafts: bool = False) -> Event:
        try:
            return parse_event(self.event_json(t, drafts=drafts))
        except EventFileError as exc:  # the stored event no longer reads: a bug, said plainly
            raise Conflict(f"the stored event does not read: {_one_line(exc)}") from exc

    def standings(self, tid: str) -> dict[str, Any]:
        """Computed now from the stored results of the published rounds (never cached)."""
        with self.db.read() as s:
            t = self.tournament(s, tid)
            return {"event": t.id, **standings(self.event(t)).to_json()}

    def summary(self, s: Session, t: Tournament) -> dict[str, Any]:
        return {
            "id": t.id,
            "name": t.name,
            "format": t.format,
            "scoring": t.scoring,
            "seed": t.seed,
            "rounds_planned": t.rounds_planned,
            "entries": len(t.entries),
            "team": bool(t.entries and t.entries[0].pairs),
            "clock": t.clock,
            "tables": list(t.tables or []),
            "rounds": [{"round": r.number, "status": r.status} for r in t.rounds],
            "archived": t.archived_at is not None,
            "warnings": self.warnings(s, t),
        }

    def names(self, t: Tournament) -> dict[str, str]:
        return {e.code: e.name for e in t.entries}

    def warnings(self, s: Session, t: Tournament) -> list[str]:
        """What an organiser should know before the next step: entries of one name, a round whose
        matches outnumber the tables, tables another event also uses."""
        out: list[str] = []
        seen: dict[str, str] = {}
        for e in t.entries:
            key = " ".join(e.name.split()).casefold()
            if key in seen:
                out.append(f"two entries are named {e.name!r}: {seen[key]} and {e.code}")
            else:
                seen[key] = e.code
        latest = t.rounds[-1] if t.rounds else None
        if latest is not None and any(x is not None for x in t.tables or []):
            unbound = [
                m.table_no
                for m in latest.matches
                if m.bye is None and not m.results and None in (m.tables or [None])
            ]
            if unbound:
                listed = ", ".join(str(n) for n in unbound)
                out.append(
                    f"round {latest.number}: more matches than tables: table number(s) {listed} have no "
                    "scoreboard table (add tables to the event, or enter those results by hand)"
                )
        if t.archived_at is None:
            mine = {x for x in t.tables or [] if x is not None}
            if mine:
                others = s.scalars(
                    select(Tournament).where(Tournament.id != t.id, Tournament.archived_at.is_(None))
                ).all()
                names = dict(s.execute(select(ScoreTable.id, ScoreTable.name)).all())
                for other in others:
                    shared = sorted(names.get(x, x) for x in mine & set(other.tables or []))
                    if shared:
                        out.append(
                            f"table(s) {', '.join(shared)} also play for event {other.name or other.id!r}: "
                            "a table plays one event's games at a time, in the order they are published"
                        )
        return out

    def round_dict(self, t: Tournament, r: TourneyRound, s: Session | None = None) -> dict[str, Any]:
        team = bool(t.entries and t.entries[0].pairs)
        names = self.names(t)
        matches = []
        for m in r.matches:
            row = self.match_json(m, team)
            if m.bye is None:
                row.update(
                    tables=list(m.tables or []),
                    home_side=m.home_side,
                    boards=list(m.results or []) or None,
                    source=m.result_source,
                    by=m.result_by,
                    at=m.result_at.isoformat() if m.result_at else None,
                    note=m.result_note or None,
                    history=list(m.history or []),
                    home_name=names.get(m.home or ""),
                    away_name=names.get(m.away or ""),
                )
                if s is not None:
                    row["games"] = [self._game_row(s, g) for g in self._games_of(s, m)]
            else:
                row["bye_name"] = names.get(m.bye)
            matches.append(row)
        return {
            "event": t.id,
            "round": r.number,
            "status": r.status,
            "matches": matches,
            "relaxed": list(r.relaxed or []),
            "clock": self.clock_dict(t, r),
            "warnings": [] if s is None else self.warnings(s, t),
        }

    @staticmethod
    def _games_of(s: Session, m: TourneyMatch) -> list[TableGame]:
        """The match's games, one per board (the latest where a board was bound twice)."""
        rows = s.scalars(
            select(TableGame).where(TableGame.match_id == m.id).order_by(TableGame.board, TableGame.number)
        ).all()
        by_board: dict[int, TableGame] = {}
        for g in rows:
            by_board[g.board or 0] = g
        return [by_board[k] for k in sorted(by_board)]

    @staticmethod
    def _game_row(s: Session, g: TableGame) -> dict[str, Any]:
        table = s.get(ScoreTable, g.table_id)
        live = LiveDeal.from_stored(table.live if table is not None else None)
        playing = (
            g.status == games.OPEN
            and table is not None
            and table.game_id == g.id
            and not live.empty()
            and not live.finished
            and live.game in (None, g.id)
        )
        state = g.state or {}
        return {
            "table": g.table_id,
            "table_name": table.name if table is not None else None,
            "board": (g.board or 0) + 1,
            "game": g.number,
            "status": g.status,
            "levels": state.get("levels") or {"NS": "2", "EW": "2"},
            "winner": state.get("winner"),
            "deals": g.deals,
            "in_play": playing,
            "trick": len(live.tricks or []) if playing else None,
        }

    # --- import and the event's own settings -------------------------------------------------

    def import_event(
        self, data: Any, tables: Sequence[str | None], clock: dict[str, Any] | None, *, again: bool = False
    ) -> dict[str, Any]:
        """A new event from an event file (its rounds, with their results, stored as published).
        The same file twice is refused unless ``again`` (or the first is archived)."""
        try:
            event = parse_event(data)
        except EventFileError as exc:
            raise Invalid(f"event file: {_one_line(exc)}") from exc
        settings = {**CLOCKS[event.scoring], **(clock or {})}
        if not 0 < settings["call_at"] < settings["minutes"]:
            raise Invalid("clock.call_at must fall inside the round (0 < call_at < minutes)")
        digest = hashlib.sha256(
            json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        ).hexdigest()
        with self.db.write() as s:
            twin = s.scalar(
                select(Tournament).where(Tournament.source_hash == digest, Tournament.archived_at.is_(None))
            )
            if twin is not None and not again:
                raise Conflict(
                    f"this event file was imported already (event {twin.name or 'without a name'!s}, "
                    f"id {twin.id}): archive that one first, or import again on purpose",
                )
            self._check_tables(s, tables)
            t = Tournament(
                id=uuid4().hex,
                name=event.name,
                format=event.format,
                scoring=event.scoring,
                seed=event.seed,
                rounds_planned=event.rounds_planned,
                clock=settings,
                tables=list(tables),
                source_hash=digest,
            )
            for k, e in enumerate(event.entries):
                t.entries.append(_entry_row(k, e))
            at = self.clock()
            for rnd in event.rounds:
                r = TourneyRound(number=rnd.number, status="published", relaxed=[])
                for k, item in enumerate(rnd.items):
                    r.matches.append(self._new_match(k, item.to_json(event.team), t, event.boards, at))
                t.rounds.append(r)
            s.add(t)
            s.flush()
            moved: dict[str, ScoreTable] = {}
            for r in t.rounds:  # a round imported without its results is played at the tables
                moved.update((x.id, x) for x in self._open_games(s, t, r))
            out = self.summary(s, t)
            self._announce(s, t, "imported")
            self._tables_changed(s, list(moved.values()))
        self.notifier.notify()
        return out

    def update_event(
        self,
        tid: str,
        *,
        name: str | None = None,
        tables: list[str | None] | None = None,
        clock: dict[str, Any] | None = None,
        archived: bool | None = None,
        author: str = "organiser",
    ) -> dict[str, Any]:
        """The event's name, its tables (for rounds paired from now on), its clock, or archived
        (its waiting games dropped, its games in play closed, off the events index) or back."""
        with self.db.write() as s:
            t = self.tournament(s, tid)
            if archived is False:
                t.archived_at = None
            elif t.archived_at is not None and archived is not True:
                raise Conflict("this event is archived: restore it before changing it")
            if name is not None:
                t.name = name
            if tables is not None:
                self._check_tables(s, tables)
                t.tables = list(tables)
            if clock is not None:
                settings = {**(t.clock or {}), **clock}
                if not 0 < settings["call_at"] < settings["minutes"]:
                    raise Invalid("clock.call_at must fall inside the round (0 < call_at < minutes)")
                t.clock = settings
            moved: list[ScoreTable] = []
            if archived and t.archived_at is None:
                t.archived_at = self.clock()
                moved = self._release_games(s, t, author)
            s.flush()
            out = self.summary(s, t)
            self._announce(s, t, "archived" if archived else "changed")
            self._tables_changed(s, moved)
        self.notifier.notify()
        return out

    def _release_games(self, s: Session, t: Tournament, author: str) -> list[ScoreTable]:
        """An archived event's games: those waiting dropped, those in play closed; each table goes
        on to its next event's game, or a free game."""
        rows = s.scalars(
            select(TableGame).where(TableGame.tournament_id == t.id, TableGame.status != games.CLOSED)
        ).all()
        tables: dict[str, ScoreTable] = {}
        for g in rows:
            table = s.get(ScoreTable, g.table_id)
            if table is None:
                continue
            tables[table.id] = table
            if g.status == games.READY and g.deals == 0:
                s.delete(g)
            else:
                games.close(g, author, "the event was archived", self.clock())
        s.flush()
        for table in tables.values():
            current = games.advance(s, table, self.clock())
            if current.status == games.CLOSED:
                games.new_game(s, table, status=games.OPEN, at=self.clock())
        return list(tables.values())

    def add_entry(self, tid: str, entry: dict[str, Any]) -> dict[str, Any]:
        """A new entry (its id made up when not given), checked by the event file's parser."""
        with self.db.write() as s:
            t = self._live(s, tid)
            self._no_draft(t, "adding an entry")
            entry = dict(entry)
            if not entry.get("id"):
                taken = {e.code for e in t.entries}
                n = len(t.entries) + 1
                while f"E{n:02d}" in taken:
                    n += 1
                entry["id"] = f"E{n:02d}"
            probe = self.event_json(t)
            probe["entries"].append(entry)
            try:
                event = parse_event(probe)
            except EventFileError as exc:
                raise Invalid(_one_line(exc)) from exc
            e = event.entries[-1]
            t.entries.append(_entry_row(len(t.entries), e))
            s.flush()
            out = self.summary(s, t)
            self._announce(s, t, "entry", entry=e.id)
        self.notifier.notify()
        return out

    def update_entry(self, tid: str, code: str, change: dict[str, Any]) -> dict[str, Any]:
        """An entry's name, unit, rating, group or pairs; or withdrawn (kept in the standings, not
        paired again) or back."""
        with self.db.write() as s:
            t = self._live(s, tid)
            self._no_draft(t, "changing an entry")
            row = next((e for e in t.entries if e.code == code), None)
            if row is None:
                raise NotFound(f"no entry {code!r} in this event")
            probe = self.event_json(t)
            index = [e["id"] for e in probe["entries"]].index(code)
            entry = probe["entries"][index]
            for key, value in change.items():
                if value is None:
                    continue
                entry[key] = value
            if entry.get("withdrawn") is False:
                entry.pop("withdrawn")
            try:
                event = parse_event(probe)
            except EventFileError as exc:
                raise Invalid(_one_line(exc)) from exc
            e = event.entries[index]
            row.name, row.unit, row.rating, row.group_name = e.name, e.unit, e.rating, e.group
            row.pairs, row.withdrawn = list(e.pairs), e.withdrawn
            s.flush()
            out = self.summary(s, t)
            self._announce(s, t, "entry", entry=code)
        self.notifier.notify()
        return out

    @staticmethod
    def _no_draft(t: Tournament, what: str) -> None:
        draft = next((r for r in t.rounds if r.status == "draft"), None)
        if draft is not None:
            raise Conflict(f"round {draft.number} is a draft: publish or discard it before {what}")

    def _new_match(
        self, k: int, item: dict[str, Any], t: Tournament, boards: int, at: datetime
    ) -> TourneyMatch:
        if "bye" in item:
            return TourneyMatch(position=k, bye=item["bye"], tables=[], history=[])
        bound = item.get("tables") or self._default_tables(t, int(item["table"]), boards)
        m = TourneyMatch(
            position=k,
            table_no=item["table"],
            home=item["home"],
            away=item["away"],
            tables=bound,
            home_side="NS",
            history=[],
            result_note="",
        )
        if item.get("result") is not None:
            result = item["result"]
            m.results = copy.deepcopy(result if isinstance(result, list) else [result] * boards)
            m.result_source, m.result_by, m.result_at = "import", "event file", at
        return m

    @staticmethod
    def _default_tables(t: Tournament, table_no: int, boards: int) -> list[str | None]:
        """Table number n plays at the event's n-th scoreboard table (a team match: its n-th group
        of ``boards`` tables); None where the event has no such table."""
        tables = list(t.tables or [])
        first = (table_no - 1) * boards
        return [tables[i] if i < len(tables) else None for i in range(first, first + boards)]

    @staticmethod
    def _check_tables(s: Session, tables: Sequence[str | None]) -> None:
        wanted = [x for x in tables if x is not None]
        if len(set(wanted)) != len(wanted):
            raise Invalid("tables: a scoreboard table is named twice")
        if not wanted:
            return
        found = set(s.scalars(select(ScoreTable.id).where(ScoreTable.id.in_(wanted))).all())
        for x in wanted:
            if x not in found:
                raise Invalid(f"tables: no scoreboard table {x!r}")

    # --- pairing -------------------------------------------------------------------------------

    def pair(self, tid: str) -> dict[str, Any]:
        """The next round by ``tourney.pair_next`` (the CLI's code) over the published rounds, stored
        as a draft."""
        try:
            return self._pair(tid)
        except IntegrityError as exc:  # two organisers paired at once: the other one's round stands
            raise Conflict("the round was paired meanwhile: reload it") from exc

    def _pair(self, tid: str) -> dict[str, Any]:
        with self.db.write() as s:
            t = self._live(s, tid)
            draft = next((r for r in t.rounds if r.status == "draft"), None)
            if draft is not None:
                raise Conflict(f"round {draft.number} is a draft: publish it (or change it) first")
            try:
                pairing = pair_next(self.event(t))
            except PairingError as exc:
                raise Conflict(_one_line(exc)) from exc
            event = self.event(t)
            r = TourneyRound(
                number=pairing.round, status="draft", relaxed=[x.to_json() for x in pairing.relaxed]
            )
            at = self.clock()
            for k, item in enumerate(pairing.items):
                r.matches.append(self._new_match(k, item.to_json(False), t, event.boards, at))
            t.rounds.append(r)
            s.flush()
            out = self.round_dict(t, r, s)
            self._announce(s, t, "paired", round=r.number)
        self.notifier.notify()
        return out

    def discard(self, tid: str, number: int) -> dict[str, Any]:
        """A draft round thrown away (pair again, or override, afterwards)."""
        with self.db.write() as s:
            t = self._live(s, tid)
            r = self.round_of(t, number)
            if r.status != "draft":
                raise Conflict(f"round {number} is published: only a draft can be discarded")
            t.rounds.remove(r)  # an orphan: deleted with its matches
            s.flush()
            out = self.summary(s, t)
            self._announce(s, t, "discarded", round=number)
        self.notifier.notify()
        return out

    def publish(self, tid: str, number: int) -> dict[str, Any]:
        """The draft published: each board of each match gets a game at its table, which the table
        starts (from 2–2) as soon as its previous game is closed."""
        with self.db.write() as s:
            t = self._live(s, tid)
            r = self.round_of(t, number)
            if r.status == "published":
                raise Conflict(f"round {number} is published already")
            r.status = "published"
            s.flush()
            moved = self._open_games(s, t, r)
            out = self.round_dict(t, r, s)
            self._announce(s, t, "published", round=number)
            self._tables_changed(s, moved)
        self.notifier.notify()
        return out

    def _open_games(self, s: Session, t: Tournament, r: TourneyRound) -> list[ScoreTable]:
        """A ready game for every bound board of the round's matches (home sits N/S), and each of
        those tables moved on where it can. Returns the tables."""
        names = self.names(t)
        at = self.clock()
        tables: dict[str, ScoreTable] = {}
        for m in r.matches:
            if m.bye is not None or m.results:
                continue
            entries = {x.code: x for x in t.entries}
            for k, table_id in enumerate(m.tables or []):
                table = s.get(ScoreTable, table_id) if table_id is not None else None
                if table is None:
                    continue
                home, away = names.get(m.home or "", m.home or ""), names.get(m.away or "", m.away or "")
                pairs_home = entries[m.home].pairs if m.home in entries else []
                pairs_away = entries[m.away].pairs if m.away in entries else []
                if len(pairs_home) > k and len(pairs_away) > k:
                    home, away = f"{home} · {pairs_home[k]}", f"{away} · {pairs_away[k]}"
                other = "EW" if m.home_side == "NS" else "NS"
                game = games.new_game(
                    s, table, status=games.READY, teams={m.home_side: home, other: away}, at=at
                )
                game.match_id, game.board = m.id, k
                game.tournament_id, game.round_no, game.table_no = t.id, r.number, m.table_no
                tables[table.id] = table
        s.flush()
        for table in tables.values():
            games.advance(s, table, at)
        return list(tables.values())

    def _tables_changed(self, s: Session, tables: Sequence[ScoreTable]) -> None:
        """Each table's new state on its feed (its page and the all-tables page follow)."""
        if not tables:
            return
        feed.append(self.db, s, [(x.id, "table", summary(s, x, slim=True)) for x in tables])

    def override(self, tid: str, number: int, items: list[dict[str, Any]]) -> dict[str, Any]:
        """A referee's or organiser's own pairing of a round without results: accepted; the answer
        (``relaxed``) names every rule it breaks, by the core's checks. A published round's games
        are made again, as long as no deal has been played in them."""
        with self.db.write() as s:
            t = self._live(s, tid)
            r = self.round_of(t, number)
            if any(m.results for m in r.matches):
                raise Conflict(f"round {number} has results: correct those instead")
            before = sorted(x for m in r.matches for x in (m.home, m.away, m.bye) if x is not None)
            after = sorted(x for i in items for x in (i.get("home"), i.get("away"), i.get("bye")) if x)
            if before != after:
                raise Invalid(
                    f"an override rearranges round {number}'s entries: each of them exactly once, no other",
                )
            for i in items:
                if i.get("tables") is not None:
                    self._check_tables(s, i["tables"])
            probe = self.event_json(t)
            probe["rounds"] = [x for x in probe["rounds"] if x["round"] < number]
            probe["rounds"].append({"round": number, "matches": [self._file_item(i) for i in items]})
            try:
                event = parse_event(probe)
            except EventFileError as exc:
                raise Invalid(_one_line(exc)) from exc
            if any(i.get("tables") is not None and len(i["tables"]) != event.boards for i in items):
                raise Invalid(f"tables: give one scoreboard table per board ({event.boards})")
            relaxed = breaks(event, number)
            old_games = [g for m in r.matches for g in self._games_of(s, m)]
            played = sorted({g.table_id for g in old_games if g.deals or self._has_deals(s, g)})
            if played:
                names = dict(s.execute(select(ScoreTable.id, ScoreTable.name)).all())
                raise Conflict(
                    f"deals were played in round {number} at {', '.join(names.get(x, x) for x in played)}: "
                    "move or void them before pairing the round again",
                )
            touched: dict[str, ScoreTable] = {}
            for g in old_games:
                table = s.get(ScoreTable, g.table_id)
                if table is not None:
                    touched[table.id] = table
                    if table.game_id == g.id:
                        table.game_id = None
                s.delete(g)
            for m in list(r.matches):
                s.delete(m)
            r.matches.clear()
            s.flush()
            at = self.clock()
            for k, item in enumerate(items):
                r.matches.append(self._new_match(k, item, t, event.boards, at))
            r.relaxed = [x.to_json() for x in relaxed]
            s.flush()
            for table in touched.values():
                games.advance(s, table, at)
            moved = list(touched.values())
            if r.status == "published":
                moved += [x for x in self._open_games(s, t, r) if x.id not in touched]
            out = self.round_dict(t, r, s)
            self._announce(s, t, "overridden", round=number)
            self._tables_changed(s, moved)
        self.notifier.notify()
        return out

    @staticmethod
    def _game_name(s: Session, g: TableGame) -> str:
        """The game played at the table of ``g``."""
        table = s.get(ScoreTable, g.table_id)
        return table.game if table is not None else "shengji"

    @staticmethod
    def _has_deals(s: Session, g: TableGame) -> bool:
        return s.scalar(select(Deal.id).where(Deal.game_id == g.id).limit(1)) is not None

    @staticmethod
    def _file_item(i: dict[str, Any]) -> dict[str, Any]:
        return {"bye": i["bye"]} if i.get("bye") else {k: i[k] for k in ("table", "home", "away") if k in i}

    # --- results -------------------------------------------------------------------------------

    def _still_playing(self, s: Session, m: TourneyMatch) -> list[str]:
        """Why the match should not be closed yet: a deal in play at one of its tables (seed 001
        notice 4.3: the deal in play is finished first), or a table where no deal was played."""
        out = []
        for g in self._games_of(s, m):
            row = self._game_row(s, g)
            if g.status == games.CLOSED:
                continue
            if row["in_play"]:
                out.append(f"a deal is in play at {row['table_name']} (trick {row['trick'] or 1})")
            elif g.status == games.OPEN and g.deals == 0:
                levels = row["levels"]
                out.append(
                    f"no deal has been played at {row['table_name']} in this round "
                    f"(its levels are the start's, {levels['NS']}–{levels['EW']})"
                )
            elif g.status == games.READY:
                out.append(f"{row['table_name']} has not started this round's game (an earlier game is open)")
        return out

    def _close_games(self, s: Session, m: TourneyMatch, author: str, note: str) -> list[ScoreTable]:
        """The match's games closed; each table goes on to its next game. Returns the tables."""
        at = self.clock()
        tables = []
        for g in self._games_of(s, m):
            if g.status == games.CLOSED:
                continue
            games.close(g, author, note, at)
            table = s.get(ScoreTable, g.table_id)
            if table is not None:
                tables.append(table)
        s.flush()
        for table in tables:
            games.advance(s, table, at)
        return tables

    def enter_result(
        self, tid: str, number: int, table_no: int, result: Any, author: str, reason: str | None = None
    ) -> dict[str, Any]:
        """A referee enters or corrects a match's result (the event file's form, checked by its
        parser); every later standing follows, as standings are computed from the results. The
        first result closes the match's games at their tables; while a deal is in play there it
        asks to finish the deal first, unless ``reason`` says why not (kept with the result)."""
        with self.db.write() as s:
            t = self._live(s, tid)
            r = self.round_of(t, number)
            if r.status != "published":
                raise Conflict(f"round {number} is a draft: publish it before results")
            m = self.match_of(r, table_no)
            probe = self.event_json(t, drafts=True)
            idx = [x["round"] for x in probe["rounds"]].index(number)
            pos = r.matches.index(m)
            probe["rounds"][idx]["matches"][pos]["result"] = result
            try:
                event = parse_event(probe)
            except EventFileError as exc:
                raise Invalid(_one_line(exc)) from exc
            parsed = event.rounds[idx].items[pos]
            assert not isinstance(parsed, str)
            boards = [b.to_json() for b in parsed.result or ()]  # type: ignore[union-attr]
            doubts = [x for x in self._still_playing(s, m) if not x.startswith("no deal")]
            self._confirm(doubts, reason, table_no)
            self._set_result(m, boards, "referee", author, note=self._note(doubts, reason))
            moved = self._close_games(s, m, author, f"result entered by {author}")
            s.flush()
            out = self.round_dict(t, r, s)
            self._announce(s, t, "result", round=number, table=table_no)
            self._tables_changed(s, moved)
        self.notifier.notify()
        return out

    @staticmethod
    def _confirm(doubts: list[str], reason: str | None, table_no: int) -> None:
        if doubts and not (reason or "").strip():
            advice = (
                "Finish the deal in play first (seed 001 notice 4.3), or give a reason to close the match now"
                if any("in play" in x for x in doubts)
                else "Give a reason to close the match as it stands, or enter its result"
            )
            raise Conflict(f"table {table_no}: {'; '.join(doubts)}. {advice}")

    @staticmethod
    def _note(doubts: list[str], reason: str | None) -> str:
        return f"closed over: {'; '.join(doubts)} ({(reason or '').strip()})" if doubts else ""

    def _set_result(
        self,
        m: TourneyMatch,
        boards: Sequence[dict[str, Any] | None],
        source: str,
        author: str,
        note: str = "",
    ) -> None:
        if m.results is not None:
            m.history = [
                *(m.history or []),
                {
                    "result": m.results,
                    "source": m.result_source,
                    "by": m.result_by,
                    "at": m.result_at.isoformat() if m.result_at else None,
                    **({"note": m.result_note} if m.result_note else {}),
                },
            ]
        m.results = list(boards)
        m.result_source, m.result_by, m.result_at = source, author, self.clock()
        m.result_note = note

    def close_match(
        self, tid: str, number: int, table_no: int, author: str, reason: str | None = None
    ) -> dict[str, Any]:
        """At time: the match takes its result from its games' levels (higher wins, equal draws)
        and its games close. While a deal is in play at one of its tables, or no deal was played at
        one, it refuses (409) unless ``reason`` says why (kept with the result)."""
        with self.db.write() as s:
            t = self._live(s, tid)
            r = self.round_of(t, number)
            if r.status != "published":
                raise Conflict(f"round {number} is a draft: publish it before results")
            m = self.match_of(r, table_no)
            played = self._games_of(s, m)
            if not m.tables or any(x is None for x in m.tables):
                raise Conflict(f"table {table_no} is not bound to a scoreboard table: enter the result")
            if len(played) != len(m.tables):
                raise Conflict(
                    f"table {table_no} has no game at its scoreboard tables for this round: enter the result",
                )
            doubts = self._still_playing(s, m)
            self._confirm(doubts, reason, table_no)
            boards = [event_result(self._game_name(s, g), g.state or {}, m.home_side) for g in played]
            self._set_result(m, boards, "table", author, note=self._note(doubts, reason))
            moved = self._close_games(s, m, author, f"closed at time by {author}")
            s.flush()
            out = self.round_dict(t, r, s)
            self._announce(s, t, "result", round=number, table=table_no)
            self._tables_changed(s, moved)
        self.notifier.notify()
        return out

    def game_changed(self, s: Session, table: ScoreTable, game: TableGame) -> None:
        """Called in the transaction that folds a game's state again: the board of the game's match
        takes the game's levels once the game is over (closed, or a side passed A, which closes it
        and moves the table on), and follows a referee's later correction of its deals. A result a
        referee entered (or the event file brought) is never overwritten."""
        if game.match_id is None:
            return
        m = s.get(TourneyMatch, game.match_id)
        if m is None or m.bye is not None:
            return
        r = s.get(TourneyRound, m.round_id)
        if r is None or r.status != "published" or m.result_source in ("referee", "import"):
            return
        state = game.state or {}
        if game.status != games.CLOSED and not state.get("winner"):
            return  # this board's game goes on: no result yet
        tables = list(m.tables or [])
        boards: list[dict[str, Any] | None] = list(m.results or [None] * len(tables))
        k = game.board or 0
        if k >= len(boards):
            return
        board = event_result(table.game, state, m.home_side)
        if boards[k] != board:
            boards[k] = board
            self._set_result(m, boards, "table", f"table {table.name}", note=m.result_note or "")
            feed.append(
                self.db,
                s,
                [
                    (
                        None,
                        "tourney",
                        {
                            "tourney": r.tournament_id,
                            "what": "result",
                            "round": r.number,
                            "table": m.table_no,
                        },
                    )
                ],
            )
        if game.status == games.OPEN:
            why = "a side passed A" if table.game == "shengji" else f"{state.get('winner')} won"
            games.close(game, f"table {table.name}", f"{why}: the game is won", self.clock())
            s.flush()
            games.advance(s, table, self.clock())

    # --- the clock -----------------------------------------------------------------------------

    def _elapsed(self, r: TourneyRound, now: datetime) -> float:
        """Seconds the round's clock has run: since its start, less its pauses."""
        assert r.clock_started_at is not None
        paused = float(r.clock_paused_s or 0)
        if r.clock_paused_at is not None:
            paused += (now - _aware(r.clock_paused_at)).total_seconds()
        return (now - _aware(r.clock_started_at)).total_seconds() - paused

    def clock_dict(self, t: Tournament, r: TourneyRound | None) -> dict[str, Any]:
        settings = t.clock or {}
        out: dict[str, Any] = {
            **settings,
            "round": r.number if r else None,
            "started_at": None,
            "state": "not started",
        }
        if r is None or r.clock_started_at is None:
            return out
        start = _aware(r.clock_started_at)
        now = self.clock()
        elapsed = self._elapsed(r, now)
        left = settings["minutes"] * 60 - elapsed
        call = now + timedelta(seconds=settings["call_at"] * 60 - elapsed)
        end = now + timedelta(seconds=left)
        state = "running" if elapsed < settings["call_at"] * 60 and r.call_sent_at is None else "called"
        if left <= 0:
            state = "time"
        elif r.clock_paused_at is not None:
            state = "paused"
        out.update(
            started_at=start.isoformat(),
            call_at_time=call.isoformat(),
            ends_at=end.isoformat(),
            elapsed_s=int(elapsed),
            remaining_s=max(0, int(left)),
            state=state,
            called=r.call_sent_at is not None,
            call=CALL_TEXT[settings["rule"]],
            paused_s=int(r.clock_paused_s or 0),
        )
        return out

    def current_round(self, t: Tournament) -> TourneyRound | None:
        published = [r for r in t.rounds if r.status == "published"]
        return published[-1] if published else None

    def clock_action(self, tid: str, number: int, action: str, author: str) -> dict[str, Any]:
        """``start`` (once), ``pause``, ``resume`` (the call and the end move by the pause), or
        ``call`` (send the last-deal call now)."""
        with self.db.write() as s:
            t = self._live(s, tid)
            r = self.round_of(t, number)
            if r.status != "published":
                raise Conflict(f"round {number} is a draft: publish it before its clock")
            now = self.clock()
            if action == "start":
                if r.clock_started_at is not None:
                    raise Conflict(f"round {number}'s clock started already")
                r.clock_started_at, r.clock_started_by = now, author
            elif r.clock_started_at is None:
                raise Conflict(f"round {number}'s clock has not started")
            elif action == "pause":
                if r.clock_paused_at is not None:
                    raise Conflict(f"round {number}'s clock is paused already")
                if self._elapsed(r, now) >= t.clock["minutes"] * 60:
                    raise Conflict(f"round {number}'s time is up")
                r.clock_paused_at = now
            elif action == "resume":
                if r.clock_paused_at is None:
                    raise Conflict(f"round {number}'s clock is not paused")
                r.clock_paused_s = int(r.clock_paused_s or 0) + int(
                    (now - _aware(r.clock_paused_at)).total_seconds()
                )
                r.clock_paused_at = None
            elif action == "call":
                if r.call_sent_at is not None:
                    raise Conflict(f"round {number}'s last-deal call was sent already")
                self._send_call(s, t, r, now)
            else:  # the API's schema allows no other
                raise Invalid(f"unknown clock action {action!r}")
            s.flush()
            out = self.clock_dict(t, r)
            self._announce(s, t, "clock", round=number, action=action)
        self.notifier.notify()
        return out

    def start_clock(self, tid: str, number: int, author: str) -> dict[str, Any]:
        return self.clock_action(tid, number, "start", author)

    def clock_of(self, tid: str) -> dict[str, Any]:
        self.tick(tid)
        with self.db.read() as s:
            t = self.tournament(s, tid)
            return self.clock_dict(t, self.current_round(t))

    def _send_call(self, s: Session, t: Tournament, r: TourneyRound, now: datetime) -> None:
        r.call_sent_at = now
        left = t.clock["minutes"] * 60 - self._elapsed(r, now)
        payload = {
            "tourney": t.id,
            "round": r.number,
            "call": "last_deal",
            "rule": t.clock["rule"],
            "text": CALL_TEXT[t.clock["rule"]],
            "ends_at": (now + timedelta(seconds=max(0.0, left))).isoformat(),
        }
        bound = sorted({x for m in r.matches for x in (m.tables or []) if x is not None})
        feed.append(
            self.db,
            s,
            [(table_id, "clock", payload) for table_id in bound] + [(None, "clock", payload)],
        )

    def tick(self, tid: str | None = None) -> int:
        """Send the last-deal call of every running round whose call time has come: one ``clock``
        event per bound table (the table page shows it) and one for the event's pages. Returns how
        many rounds were called. Idempotent: each round is called once."""
        now = self.clock()
        called = 0
        with self.db.write() as s:
            query = (
                select(TourneyRound, Tournament)
                .join(Tournament, Tournament.id == TourneyRound.tournament_id)
                .where(TourneyRound.clock_started_at.is_not(None), TourneyRound.call_sent_at.is_(None))
            )
            if tid is not None:
                query = query.where(Tournament.id == tid)
            for r, t in s.execute(query.with_for_update(of=TourneyRound)).all():
                if self._elapsed(r, now) < t.clock["call_at"] * 60:
                    continue
                self._send_call(s, t, r, now)
                called += 1
        if called:
            self.notifier.notify()
        return called

    # --- the feed ------------------------------------------------------------------------------

    def _announce(self, s: Session, t: Tournament, what: str, **more: Any) -> None:
        feed.append(self.db, s, [(None, "tourney", {"tourney": t.id, "what": what, **more})])


def _entry_row(position: int, e: Entry) -> TourneyEntry:
    """The stored row of an entry of the event file."""
    return TourneyEntry(
        position=position,
        code=e.id,
        name=e.name,
        unit=e.unit,
        rating=e.rating,
        group_name=e.group,
        pairs=list(e.pairs),
        withdrawn=e.withdrawn,
    )


def breaks(event: Event, number: int) -> list[Relaxed]:
    """The rules round ``number`` of ``event`` breaks, by the core's checks: a rematch (the pair met
    in an earlier round), two entries of one unit, a second bye."""
    earlier = [r for r in event.rounds if r.number < number]
    met, had_bye = history(earlier)
    pair_breaks = rule_breaks(event, met)  # the pairing's own check of a pair
    rnd = event.rounds[number - 1]
    out = [Relaxed(rule, (m.home, m.away)) for m in rnd.matches for rule in pair_breaks(m.home, m.away)]
    out += [Relaxed("second_bye", (b,)) for b in rnd.byes if b in had_bye]
    return out
