"""The event around the tables (issue 43): an event file imported into the database, rounds paired
by ``tourney`` (the code ``tractorcam tourney pair`` runs) as drafts and published as their own
step, results entered by referees or taken from the bound tables' levels, standings always computed
from the stored results through ``tourney.standings`` (nothing cached), the round clock.

Every write is one transaction that also appends a ``tourney`` event to the feed (and a ``clock``
event per bound table for the last-deal call), so the live pages follow.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final
from uuid import uuid4

from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from scoreboard import feed
from scoreboard.db import Database
from scoreboard.errors import ServiceError
from scoreboard.models import ScoreTable, Tournament, TourneyEntry, TourneyMatch, TourneyRound
from tourney import Event, EventFileError, PairingError, pair_next, parse_event, standings
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
SIDES: Final = ("NS", "EW")


def utcnow() -> datetime:
    return datetime.now(UTC)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _rating(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


class Tourneys:
    """Events, rounds, results and clocks; ``clock`` is injectable (tests move time by hand)."""

    def __init__(self, db: Database, notifier: feed.Notifier, clock: Callable[[], datetime] = utcnow) -> None:
        self.db = db
        self.notifier = notifier
        self.clock = clock

    # --- reading -------------------------------------------------------------------------------

    def tournament(self, s: Session, tid: str) -> Tournament:
        t = s.get(Tournament, tid)
        if t is None:
            raise ServiceError(404, "no such event")
        return t

    @staticmethod
    def round_of(t: Tournament, number: int) -> TourneyRound:
        for r in t.rounds:
            if r.number == number:
                return r
        raise ServiceError(404, f"no round {number} in this event")

    @staticmethod
    def match_of(r: TourneyRound, table_no: int) -> TourneyMatch:
        for m in r.matches:
            if m.bye is None and m.table_no == table_no:
                return m
        raise ServiceError(404, f"no table {table_no} in round {r.number}")

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
            raise ServiceError(409, f"the stored event does not read: {_one_line(exc)}") from exc

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
        }

    def round_dict(self, t: Tournament, r: TourneyRound) -> dict[str, Any]:
        team = bool(t.entries and t.entries[0].pairs)
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
                    history=list(m.history or []),
                )
            matches.append(row)
        return {
            "event": t.id,
            "round": r.number,
            "status": r.status,
            "matches": matches,
            "relaxed": list(r.relaxed or []),
            "clock": self.clock_dict(t, r),
        }

    # --- import --------------------------------------------------------------------------------

    def import_event(
        self, data: Any, tables: list[str | None], clock: dict[str, Any] | None
    ) -> dict[str, Any]:
        """A new event from an event file (its rounds, with their results, stored as published)."""
        try:
            event = parse_event(data)
        except EventFileError as exc:
            raise ServiceError(422, f"event file: {_one_line(exc)}") from exc
        settings = {**CLOCKS[event.scoring], **(clock or {})}
        if not 0 < settings["call_at"] < settings["minutes"]:
            raise ServiceError(422, "clock.call_at must fall inside the round (0 < call_at < minutes)")
        with self.db.write() as s:
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
            )
            for k, e in enumerate(event.entries):
                t.entries.append(
                    TourneyEntry(
                        position=k,
                        code=e.id,
                        name=e.name,
                        unit=e.unit,
                        rating=e.rating,
                        group_name=e.group,
                        pairs=list(e.pairs),
                        withdrawn=e.withdrawn,
                    )
                )
            at = self.clock()
            for rnd in event.rounds:
                r = TourneyRound(number=rnd.number, status="published", relaxed=[])
                for k, item in enumerate(rnd.items):
                    r.matches.append(self._new_match(k, item.to_json(event.team), t, event.boards, at))
                t.rounds.append(r)
            s.add(t)
            s.flush()
            out = self.summary(s, t)
            self._announce(s, t, "imported")
        self.notifier.notify()
        return out

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
        if not wanted:
            return
        found = set(s.scalars(select(ScoreTable.id).where(ScoreTable.id.in_(wanted))).all())
        for x in wanted:
            if x not in found:
                raise ServiceError(422, f"tables: no scoreboard table {x!r}")

    # --- pairing -------------------------------------------------------------------------------

    def pair(self, tid: str) -> dict[str, Any]:
        """The next round by ``tourney.pair_next`` (the CLI's code) over the published rounds, stored
        as a draft."""
        try:
            return self._pair(tid)
        except IntegrityError as exc:  # two organisers paired at once: the other one's round stands
            raise ServiceError(409, "the round was paired meanwhile: reload it") from exc

    def _pair(self, tid: str) -> dict[str, Any]:
        with self.db.write() as s:
            t = self.tournament(s, tid)
            draft = next((r for r in t.rounds if r.status == "draft"), None)
            if draft is not None:
                raise ServiceError(409, f"round {draft.number} is a draft: publish it (or change it) first")
            try:
                pairing = pair_next(self.event(t))
            except PairingError as exc:
                raise ServiceError(409, _one_line(exc)) from exc
            event = self.event(t)
            r = TourneyRound(
                number=pairing.round, status="draft", relaxed=[x.to_json() for x in pairing.relaxed]
            )
            at = self.clock()
            for k, item in enumerate(pairing.items):
                r.matches.append(self._new_match(k, item.to_json(False), t, event.boards, at))
            t.rounds.append(r)
            s.flush()
            out = self.round_dict(t, r)
            self._announce(s, t, "paired", round=r.number)
        self.notifier.notify()
        return out

    def publish(self, tid: str, number: int) -> dict[str, Any]:
        with self.db.write() as s:
            t = self.tournament(s, tid)
            r = self.round_of(t, number)
            if r.status == "published":
                raise ServiceError(409, f"round {number} is published already")
            r.status = "published"
            s.flush()
            out = self.round_dict(t, r)
            self._announce(s, t, "published", round=number)
        self.notifier.notify()
        return out

    def override(self, tid: str, number: int, items: list[dict[str, Any]]) -> dict[str, Any]:
        """A referee's or organiser's own pairing of a round without results: accepted; the answer
        (``relaxed``) names every rule it breaks, by the core's checks."""
        with self.db.write() as s:
            t = self.tournament(s, tid)
            r = self.round_of(t, number)
            if any(m.results for m in r.matches):
                raise ServiceError(409, f"round {number} has results: correct those instead")
            before = sorted(x for m in r.matches for x in (m.home, m.away, m.bye) if x is not None)
            after = sorted(x for i in items for x in (i.get("home"), i.get("away"), i.get("bye")) if x)
            if before != after:
                raise ServiceError(
                    422,
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
                raise ServiceError(422, _one_line(exc)) from exc
            if any(i.get("tables") is not None and len(i["tables"]) != event.boards for i in items):
                raise ServiceError(422, f"tables: give one scoreboard table per board ({event.boards})")
            relaxed = breaks(event, number)
            for m in list(r.matches):
                s.delete(m)
            r.matches.clear()
            s.flush()
            at = self.clock()
            for k, item in enumerate(items):
                r.matches.append(self._new_match(k, item, t, event.boards, at))
            r.relaxed = [x.to_json() for x in relaxed]
            s.flush()
            out = self.round_dict(t, r)
            self._announce(s, t, "overridden", round=number)
        self.notifier.notify()
        return out

    @staticmethod
    def _file_item(i: dict[str, Any]) -> dict[str, Any]:
        return {"bye": i["bye"]} if i.get("bye") else {k: i[k] for k in ("table", "home", "away") if k in i}

    # --- results -------------------------------------------------------------------------------

    def enter_result(self, tid: str, number: int, table_no: int, result: Any, author: str) -> dict[str, Any]:
        """A referee enters or corrects a match's result (the event file's form, checked by its
        parser); every later standing follows, as standings are computed from the results."""
        with self.db.write() as s:
            t = self.tournament(s, tid)
            r = self.round_of(t, number)
            if r.status != "published":
                raise ServiceError(409, f"round {number} is a draft: publish it before results")
            m = self.match_of(r, table_no)
            probe = self.event_json(t, drafts=True)
            idx = [x["round"] for x in probe["rounds"]].index(number)
            pos = r.matches.index(m)
            probe["rounds"][idx]["matches"][pos]["result"] = result
            try:
                event = parse_event(probe)
            except EventFileError as exc:
                raise ServiceError(422, _one_line(exc)) from exc
            parsed = event.rounds[idx].items[pos]
            assert not isinstance(parsed, str)
            boards = [b.to_json() for b in parsed.result or ()]  # type: ignore[union-attr]
            self._set_result(m, boards, "referee", author)
            s.flush()
            out = self.round_dict(t, r)
            self._announce(s, t, "result", round=number, table=table_no)
        self.notifier.notify()
        return out

    def _set_result(
        self, m: TourneyMatch, boards: Sequence[dict[str, Any] | None], source: str, author: str
    ) -> None:
        if m.results is not None:
            m.history = [
                *(m.history or []),
                {
                    "result": m.results,
                    "source": m.result_source,
                    "by": m.result_by,
                    "at": m.result_at.isoformat() if m.result_at else None,
                },
            ]
        m.results = list(boards)
        m.result_source, m.result_by, m.result_at = source, author, self.clock()

    def close_match(self, tid: str, number: int, table_no: int, author: str) -> dict[str, Any]:
        """At time: the match takes its result from its tables' levels (higher wins, equal draws)."""
        with self.db.write() as s:
            t = self.tournament(s, tid)
            r = self.round_of(t, number)
            if r.status != "published":
                raise ServiceError(409, f"round {number} is a draft: publish it before results")
            m = self.match_of(r, table_no)
            if not m.tables or any(x is None for x in m.tables):
                raise ServiceError(
                    409, f"table {table_no} is not bound to a scoreboard table: enter the result"
                )
            boards = []
            for table_id in m.tables:
                table = s.get(ScoreTable, table_id)
                if table is None:
                    raise ServiceError(409, f"table {table_no}'s scoreboard table is gone: enter the result")
                boards.append(from_levels(table.state or {}, m.home_side))
            self._set_result(m, boards, "table", author)
            s.flush()
            out = self.round_dict(t, r)
            self._announce(s, t, "result", round=number, table=table_no)
        self.notifier.notify()
        return out

    def table_changed(self, s: Session, table: ScoreTable) -> bool:
        """Called in the transaction that refolds a scoreboard table's state: a match bound to it
        whose game is finished (a side passed A), or whose result came from the table, takes the
        table's levels for that board. A referee's result is never overwritten. Whether any
        changed."""
        state = table.state or {}
        changed = False
        rows = s.execute(
            select(TourneyMatch, TourneyRound)
            .join(TourneyRound, TourneyRound.id == TourneyMatch.round_id)
            .where(
                TourneyRound.status == "published",
                TourneyMatch.bye.is_(None),
                or_(TourneyMatch.result_source.is_(None), TourneyMatch.result_source == "table"),
            )
        ).all()
        for m, r in rows:
            tables = list(m.tables or [])
            if table.id not in tables or m.result_source in ("referee", "import"):
                continue
            boards: list[dict[str, Any] | None] = list(m.results or [None] * len(tables))
            k = tables.index(table.id)
            if boards[k] is None and not state.get("winner"):
                continue  # this board's game goes on: no result yet
            board = from_levels(state, m.home_side)
            if boards[k] == board:
                continue
            boards[k] = board
            self._set_result(m, boards, "table", f"table {table.name}")
            changed = True
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
        return changed

    # --- the clock -----------------------------------------------------------------------------

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
        elapsed = (now - start).total_seconds()
        call = start + timedelta(minutes=settings["call_at"])
        end = start + timedelta(minutes=settings["minutes"])
        out.update(
            started_at=start.isoformat(),
            call_at_time=call.isoformat(),
            ends_at=end.isoformat(),
            elapsed_s=int(elapsed),
            remaining_s=max(0, int((end - now).total_seconds())),
            state="running" if now < call else ("called" if now < end else "time"),
            called=r.call_sent_at is not None,
            call=CALL_TEXT[settings["rule"]],
        )
        return out

    def current_round(self, t: Tournament) -> TourneyRound | None:
        published = [r for r in t.rounds if r.status == "published"]
        return published[-1] if published else None

    def start_clock(self, tid: str, number: int, author: str) -> dict[str, Any]:
        with self.db.write() as s:
            t = self.tournament(s, tid)
            r = self.round_of(t, number)
            if r.status != "published":
                raise ServiceError(409, f"round {number} is a draft: publish it before its clock")
            if r.clock_started_at is not None:
                raise ServiceError(409, f"round {number}'s clock started already")
            r.clock_started_at, r.clock_started_by = self.clock(), author
            s.flush()
            out = self.clock_dict(t, r)
            self._announce(s, t, "clock", round=number)
        self.notifier.notify()
        return out

    def clock_of(self, tid: str) -> dict[str, Any]:
        self.tick(tid)
        with self.db.read() as s:
            t = self.tournament(s, tid)
            return self.clock_dict(t, self.current_round(t))

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
                assert r.clock_started_at is not None
                start = _aware(r.clock_started_at)
                call = start + timedelta(minutes=t.clock["call_at"])
                if now < call:
                    continue
                r.call_sent_at = now
                payload = {
                    "tourney": t.id,
                    "round": r.number,
                    "call": "last_deal",
                    "rule": t.clock["rule"],
                    "text": CALL_TEXT[t.clock["rule"]],
                    "ends_at": (start + timedelta(minutes=t.clock["minutes"])).isoformat(),
                }
                bound = sorted({x for m in r.matches for x in (m.tables or []) if x is not None})
                feed.append(
                    self.db,
                    s,
                    [(table_id, "clock", payload) for table_id in bound] + [(None, "clock", payload)],
                )
                called += 1
        if called:
            self.notifier.notify()
        return called

    # --- the feed ------------------------------------------------------------------------------

    def _announce(self, s: Session, t: Tournament, what: str, **more: Any) -> None:
        feed.append(self.db, s, [(None, "tourney", {"tourney": t.id, "what": what, **more})])


def from_levels(state: dict[str, Any], home_side: str) -> dict[str, Any]:
    """A board's result from a table's match state: each side's level (higher wins, equal draws);
    a side that passed A (``winner``) with the levels equal goes through as ``winner``."""
    levels = state.get("levels") or {"NS": "2", "EW": "2"}
    away_side = "EW" if home_side == "NS" else "NS"
    out: dict[str, Any] = {"home_level": str(levels[home_side]), "away_level": str(levels[away_side])}
    winner = state.get("winner")
    if winner in SIDES and out["home_level"] == out["away_level"]:
        out["winner"] = "home" if winner == home_side else "away"
    return out


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
