"""The event file (``shared/spec/cli.md``, "Tournament commands"): typed, validated records.

Parsing is strict: an unknown key, a value of the wrong type, an unknown entry id, a level that is
not a rank, an entry twice in one round: each raises :class:`EventFileError` with one line that
names the field at fault (``rounds[0].matches[1].result.home_level: unknown rank 'Z'``). Levels use
the engine's rank vocabulary (``2`` … ``10``, ``J``, ``Q``, ``K``, ``A``; ``T`` for ten) and are kept
in its spelling, so ``to_json`` writes ``"10"`` for an input ``"t"``; ``parse_event(e.to_json()) == e``.

>>> event = parse_event({"format": "swiss", "scoring": "zhku", "seed": 7, "entries": [
...     {"id": "A", "name": "Library", "unit": "Library"}, {"id": "B", "unit": "Maths"}],
...     "rounds": [{"round": 1, "matches": [
...         {"table": 1, "home": "A", "away": "B", "result": {"home_level": "t", "away_level": "9"}}]}]})
>>> event.entries[1].name, event.rounds[0].matches[0].result
('B', (Result(home_level='10', away_level='9', forfeit=None, winner=None, violations=(0, 0)),))
>>> parse_event(event.to_json()) == event
True
>>> parse_event({"format": "swiss", "scoring": "zhku", "seed": 7, "entries": [{"id": "A"}],
...     "rounds": [{"round": 1, "matches": [{"table": 1, "home": "A", "away": "Z"}]}]})
Traceback (most recent call last):
...
tourney.event.EventFileError: rounds[0].matches[0].away: unknown entry 'Z'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, cast

from engine.cards import RANK_NAME, parse_rank
from engine.jsontext import JsonInputError, load_json
from engine.text import shown

Format = Literal["swiss", "round-robin", "knockout"]
Scoring = Literal["zhku", "national", "challenge"]
Side = Literal["home", "away"]

FORMATS: Final[tuple[Format, ...]] = ("swiss", "round-robin", "knockout")
SCORINGS: Final[tuple[Scoring, ...]] = ("zhku", "national", "challenge")
SIDES: Final[tuple[Side, ...]] = ("home", "away")

#: Bounds on what one file may hold (far above any real event; they keep a bad file from costing
#: minutes).
MAX_ENTRIES: Final = 4096
MAX_ROUNDS: Final = 256
MAX_PAIRS: Final = 8
MAX_ID_CHARS: Final = 100
MAX_TEXT_CHARS: Final = 200
MAX_VIOLATIONS: Final = 1000


class EventFileError(ValueError):
    """An event file that cannot be read; the message is one line naming the field at fault."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A pair, or a team of ``pairs`` (seed 001: a team is two pairs of one unit)."""

    id: str
    name: str
    unit: str | None = None
    rating: int | float = 0
    group: str | None = None
    pairs: tuple[str, ...] = ()
    #: Withdrawn entries keep their results and are not paired again.
    withdrawn: bool = False

    @property
    def boards(self) -> int:
        """How many matches the entry plays in a round: one per pair of a team, else one."""
        return len(self.pairs) or 1

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name}
        if self.unit is not None:
            out["unit"] = self.unit
        out["rating"] = self.rating
        if self.group is not None:
            out["group"] = self.group
        if self.pairs:
            out["pairs"] = list(self.pairs)
        if self.withdrawn:
            out["withdrawn"] = True
        return out


@dataclass(frozen=True, slots=True)
class Result:
    """One board's result: both levels at the end (higher wins, equal is a draw), or a forfeit.

    ``winner`` names the side that goes through when the levels are equal (a knockout needs one);
    ``violations`` are the violations recorded against home and away (seed 002 art. 27 counts them).
    """

    home_level: str | None = None
    away_level: str | None = None
    forfeit: Side | None = None
    winner: Side | None = None
    violations: tuple[int, int] = (0, 0)

    @property
    def margin(self) -> int:
        """Home's level minus away's (0 for a forfeit)."""
        if self.home_level is None or self.away_level is None:
            return 0
        return parse_rank(self.home_level) - parse_rank(self.away_level)

    @property
    def decided(self) -> Side | None:
        """The side that goes through: the higher level, the non-forfeiting side, or ``winner``.

        >>> Result("7", "5").decided, Result("7", "7").decided, Result(forfeit="home").decided
        ('home', None, 'away')
        """
        if self.forfeit is not None:
            return "away" if self.forfeit == "home" else "home"
        if self.margin:
            return "home" if self.margin > 0 else "away"
        return self.winner

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any]
        if self.forfeit is not None:
            out = {"forfeit": self.forfeit}
        else:
            out = {"home_level": self.home_level, "away_level": self.away_level}
            if self.winner is not None:
                out["winner"] = self.winner
        if self.violations != (0, 0):
            out["violations"] = {"home": self.violations[0], "away": self.violations[1]}
        return out


@dataclass(frozen=True, slots=True)
class Match:
    """Two entries at a table; ``result`` holds one :class:`Result` per board (one, or one per pair
    of a team), or is ``None`` while the match is unplayed."""

    table: int
    home: str
    away: str
    result: tuple[Result, ...] | None = None

    def to_json(self, team: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"table": self.table, "home": self.home, "away": self.away}
        if self.result is not None:
            out["result"] = [r.to_json() for r in self.result] if team else self.result[0].to_json()
        return out


@dataclass(frozen=True, slots=True)
class Bye:
    entry: str

    def to_json(self, team: bool = False) -> dict[str, Any]:
        return {"bye": self.entry}


Item = Match | Bye


@dataclass(frozen=True, slots=True)
class Round:
    number: int
    #: Matches and byes in the file's order (in a knockout that order is the bracket).
    items: tuple[Item, ...]

    @property
    def matches(self) -> tuple[Match, ...]:
        return tuple(i for i in self.items if isinstance(i, Match))

    @property
    def byes(self) -> tuple[str, ...]:
        return tuple(i.entry for i in self.items if isinstance(i, Bye))

    @property
    def complete(self) -> bool:
        return all(m.result is not None for m in self.matches)

    def to_json(self, team: bool) -> dict[str, Any]:
        return {"round": self.number, "matches": [i.to_json(team) for i in self.items]}


@dataclass(frozen=True, slots=True)
class Event:
    format: Format
    scoring: Scoring
    seed: int
    entries: tuple[Entry, ...]
    rounds: tuple[Round, ...] = ()
    rounds_planned: int | None = None
    name: str | None = None

    @property
    def team(self) -> bool:
        """Whether entries are teams of pairs (seed 001)."""
        return bool(self.entries and self.entries[0].pairs)

    @property
    def boards(self) -> int:
        return self.entries[0].boards if self.entries else 1

    @property
    def grouped(self) -> bool:
        return any(e.group is not None for e in self.entries)

    def entry(self, entry_id: str) -> Entry:
        for e in self.entries:
            if e.id == entry_id:
                return e
        raise KeyError(entry_id)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.name is not None:
            out["name"] = self.name
        out.update(format=self.format, scoring=self.scoring)
        if self.rounds_planned is not None:
            out["rounds_planned"] = self.rounds_planned
        out["seed"] = self.seed
        out["entries"] = [e.to_json() for e in self.entries]
        out["rounds"] = [r.to_json(self.team) for r in self.rounds]
        return out


# --- parsing ----------------------------------------------------------------------------------


def _fail(where: str, message: str) -> EventFileError:
    return EventFileError(f"{where}: {message}" if where else message)


def _object(value: Any, where: str, required: Sequence[str], optional: Sequence[str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(where, f"expected a JSON object, got {_kind(value)}")
    for key in value:
        if key not in required and key not in optional:
            known = ", ".join((*required, *optional))
            raise _fail(where, f"unknown field {shown(key)} (known: {known})")
    for key in required:
        if key not in value:
            raise _fail(where, f"missing field {key!r}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "a JSON object" if isinstance(value, Mapping) else type(value).__name__


def _str(value: Any, where: str, limit: int = MAX_TEXT_CHARS) -> str:
    if not isinstance(value, str):
        raise _fail(where, f"expected a string, got {_kind(value)}")
    if not value.strip():
        raise _fail(where, "empty string")
    if len(value) > limit:
        raise _fail(where, f"longer than {limit} characters")
    return value


def _int(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, f"expected an integer, got {_kind(value)}")
    if not low <= value <= high:
        raise _fail(where, f"{value} is out of range ({low} to {high})")
    return value


def _list(value: Any, where: str, limit: int) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(where, f"expected a list, got {_kind(value)}")
    if len(value) > limit:
        raise _fail(where, f"more than {limit} items")
    return value


def _choice(value: Any, where: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise _fail(where, f"{shown(value)} is not one of {', '.join(choices)}")
    return value


def _level(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(where, f"expected a level as a string (2 … 10, J, Q, K, A), got {_kind(value)}")
    try:
        return RANK_NAME[parse_rank(value)]
    except ValueError as exc:
        raise _fail(where, str(exc)) from None


def _entry(value: Any, where: str) -> Entry:
    data = _object(value, where, ("id",), ("name", "unit", "rating", "group", "pairs", "withdrawn"))
    entry_id = _str(data["id"], f"{where}.id", MAX_ID_CHARS)
    name = _str(data["name"], f"{where}.name") if "name" in data else entry_id
    unit = None if data.get("unit") is None else _str(data["unit"], f"{where}.unit")
    rating = data.get("rating", 0)
    if isinstance(rating, bool) or not isinstance(rating, int | float):
        raise _fail(f"{where}.rating", f"expected a number, got {_kind(rating)}")
    if abs(rating) > 10**9:
        raise _fail(f"{where}.rating", "out of range (at most 10^9 either way)")
    group = None if data.get("group") is None else _str(data["group"], f"{where}.group", MAX_ID_CHARS)
    pairs: tuple[str, ...] = ()
    if "pairs" in data:
        items = _list(data["pairs"], f"{where}.pairs", MAX_PAIRS)
        if len(items) < 2:
            raise _fail(f"{where}.pairs", "a team lists at least two pairs")
        pairs = tuple(_str(p, f"{where}.pairs[{i}]") for i, p in enumerate(items))
    withdrawn = data.get("withdrawn", False)
    if not isinstance(withdrawn, bool):
        raise _fail(f"{where}.withdrawn", f"expected true or false, got {_kind(withdrawn)}")
    return Entry(entry_id, name, unit, rating, group, pairs, withdrawn)


def _result(value: Any, where: str) -> Result:
    data = _object(value, where, (), ("home_level", "away_level", "forfeit", "winner", "violations"))
    violations = (0, 0)
    if "violations" in data:
        v = _object(data["violations"], f"{where}.violations", (), SIDES)
        violations = (
            _int(v.get("home", 0), f"{where}.violations.home", 0, MAX_VIOLATIONS),
            _int(v.get("away", 0), f"{where}.violations.away", 0, MAX_VIOLATIONS),
        )
    if "forfeit" in data:
        for key in ("home_level", "away_level", "winner"):
            if key in data:
                raise _fail(where, f"a forfeit has no {key!r}")
        forfeit = cast(Side, _choice(data["forfeit"], f"{where}.forfeit", SIDES))
        return Result(forfeit=forfeit, violations=violations)
    for key in ("home_level", "away_level"):
        if key not in data:
            raise _fail(where, f"missing field {key!r} (or give 'forfeit')")
    home = _level(data["home_level"], f"{where}.home_level")
    away = _level(data["away_level"], f"{where}.away_level")
    winner: Side | None = None
    if data.get("winner") is not None:
        winner = cast(Side, _choice(data["winner"], f"{where}.winner", SIDES))
        if home != away:
            raise _fail(f"{where}.winner", "only a drawn result names a winner (the levels decide otherwise)")
    return Result(home, away, None, winner, violations)


def _item(value: Any, where: str, ids: Mapping[str, Entry], boards: int) -> Item:
    if isinstance(value, Mapping) and "bye" in value:
        data = _object(value, where, ("bye",), ())
        entry_id = _str(data["bye"], f"{where}.bye", MAX_ID_CHARS)
        if entry_id not in ids:
            raise _fail(f"{where}.bye", f"unknown entry {shown(entry_id)}")
        return Bye(entry_id)
    data = _object(value, where, ("table", "home", "away"), ("result",))
    table = _int(data["table"], f"{where}.table", 1, 100_000)
    sides = []
    for key in ("home", "away"):
        entry_id = _str(data[key], f"{where}.{key}", MAX_ID_CHARS)
        if entry_id not in ids:
            raise _fail(f"{where}.{key}", f"unknown entry {shown(entry_id)}")
        sides.append(entry_id)
    if sides[0] == sides[1]:
        raise _fail(where, f"{shown(sides[0])} cannot play itself")
    result: tuple[Result, ...] | None = None
    raw = data.get("result")
    if raw is None:
        pass
    elif boards == 1:
        result = (_result(raw, f"{where}.result"),)
    elif isinstance(raw, Mapping):
        one = _result(raw, f"{where}.result")
        if one.forfeit is None:
            raise _fail(
                f"{where}.result",
                f"teams play {boards} boards: give a list of {boards} results (or one forfeit)",
            )
        result = (one,) * boards
    else:
        items = _list(raw, f"{where}.result", MAX_PAIRS)
        if len(items) != boards:
            raise _fail(f"{where}.result", f"expected {boards} results (one per pair), got {len(items)}")
        result = tuple(_result(r, f"{where}.result[{i}]") for i, r in enumerate(items))
    return Match(table, sides[0], sides[1], result)


def _round(value: Any, where: str, number: int, ids: Mapping[str, Entry], boards: int) -> Round:
    data = _object(value, where, ("round", "matches"), ())
    got = _int(data["round"], f"{where}.round", 1, MAX_ROUNDS)
    if got != number:
        raise _fail(
            f"{where}.round", f"expected round {number} (rounds are numbered 1, 2, … in order), got {got}"
        )
    raw = _list(data["matches"], f"{where}.matches", 2 * MAX_ENTRIES)
    items = tuple(_item(m, f"{where}.matches[{i}]", ids, boards) for i, m in enumerate(raw))
    seen: dict[str, int] = {}
    tables: set[int] = set()
    for i, item in enumerate(items):
        if isinstance(item, Match):
            if item.table in tables:
                raise _fail(f"{where}.matches[{i}].table", f"table {item.table} is used twice in this round")
            tables.add(item.table)
            names: tuple[str, ...] = (item.home, item.away)
        else:
            names = (item.entry,)
        for entry_id in names:
            if entry_id in seen:
                raise _fail(f"{where}.matches[{i}]", f"entry {shown(entry_id)} is already in this round")
            seen[entry_id] = i
    return Round(number, items)


def parse_event(data: Any) -> Event:
    """An :class:`Event` from the decoded JSON of an event file; raises :class:`EventFileError`."""
    top = _object(data, "", ("format", "scoring", "seed", "entries"), ("rounds", "rounds_planned", "name"))
    fmt = cast(Format, _choice(top["format"], "format", FORMATS))
    scoring = cast(Scoring, _choice(top["scoring"], "scoring", SCORINGS))
    seed = _int(top["seed"], "seed", -(2**63), 2**63 - 1)
    planned = None
    if top.get("rounds_planned") is not None:
        planned = _int(top["rounds_planned"], "rounds_planned", 1, MAX_ROUNDS)
    name = None if top.get("name") is None else _str(top["name"], "name")
    raw_entries = _list(top["entries"], "entries", MAX_ENTRIES)
    entries = tuple(_entry(e, f"entries[{i}]") for i, e in enumerate(raw_entries))
    ids: dict[str, Entry] = {}
    for i, entry in enumerate(entries):
        if entry.id in ids:
            raise _fail(f"entries[{i}].id", f"{shown(entry.id)} is used twice")
        ids[entry.id] = entry
    boards = entries[0].boards if entries else 1
    for i, entry in enumerate(entries):
        if entry.boards != boards:
            raise _fail(
                f"entries[{i}].pairs",
                f"every entry is a pair or every entry is a team of the same size ({entries[0].id!r} has "
                f"{boards} board{'s' if boards > 1 else ''}, {entry.id!r} has {entry.boards})",
            )
    if fmt != "swiss":
        grouped = [e.group is not None for e in entries]
        if any(grouped) and not all(grouped):
            i = grouped.index(False)
            raise _fail(
                f"entries[{i}].group", f"missing: in a {fmt} event every entry has a group or none has"
            )
    raw_rounds = _list(top.get("rounds", []), "rounds", MAX_ROUNDS)
    rounds = tuple(_round(r, f"rounds[{i}]", i + 1, ids, boards) for i, r in enumerate(raw_rounds))
    return Event(fmt, scoring, seed, entries, rounds, planned, name)


def load_event(text: str | bytes) -> Event:
    """An :class:`Event` from the text of an event file; bad JSON is an :class:`EventFileError` too.

    >>> load_event('{"format": "knockout"')
    Traceback (most recent call last):
    ...
    tourney.event.EventFileError: bad JSON: malformed JSON: Expecting ',' delimiter (line 1, column 22)
    """
    try:
        data = load_json(text)
    except JsonInputError as exc:
        raise EventFileError(f"bad JSON: {exc}") from None
    return parse_event(data)
