"""The deal log (``shared/spec/deal-log.md``): parsing a JSON object into typed, validated records.

Only the *form* of the log is checked here (cards, seats, turn order, copies). Whether each
trick's leader really won the previous trick needs the rules and is checked while scoring. Every
problem raises :class:`DealLogError` with a one-line message naming the trick and play.

>>> log = parse_deal_log({"rules": "national-1deck", "level": "2", "trump": "NT", "dealer": "S",
...     "tricks": [{"plays": [["S", ["AH"]], ["E", ["3H"]]]}]})
>>> log.tricks[0].plays[1].seat, log.tricks[0].plays[1].cards
(Seat.E, (Card('3H'),))
>>> parse_deal_log({"rules": "bridge", "level": "2", "trump": "S", "dealer": "S", "tricks": []})
Traceback (most recent call last):
...
engine.deal_log.DealLogError: rules: unknown rule set 'bridge' (known: national-1deck, national-2deck, national-3deck, zhku-3deck, challenge-2deck)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Final

from engine.cards import (
    ALL_CARDS,
    BY_SPELLING,
    N_CODES,
    RANK_NAME,
    SUITS,
    AnyCard,
    Card,
    UnknownCard,
    format_any,
    parse_any,
    parse_rank,
)
from engine.inventory import options
from engine.rules import RuleSet, get_rule_set
from engine.seats import SEAT_BY_NAME, SEAT_ORDER, Seat, parse_seat
from engine.text import shown


class DealLogError(ValueError):
    """A deal log that cannot be read; the message is one line naming the trick and play at fault."""


class LeaderError(DealLogError):
    """A trick led by a seat that did not (or, with unknown cards, cannot have) won the trick
    before; ``trick`` is the led trick's number (1-based).

    >>> LeaderError("trick 6, play 1 (E): E led but S won trick 5", 6).trick
    6
    """

    def __init__(self, message: str, trick: int) -> None:
        super().__init__(message)
        self.trick = trick


#: A ruling's bounds: no penalty in the seeds comes near 1,000 points, and 13 levels take a side
#: from 2 past A (the whole game).
MAX_RULING_POINTS: Final = 1000
MAX_RULING_LEVELS: Final = 13
#: Cards named in a completeness message before it says how many more are missing.
_MISSING_SHOWN: Final = 12
#: Seats in turn order from each leader (by its index).
_ORDER: Final = tuple(SEAT_ORDER[i:] + SEAT_ORDER[:i] for i in range(4))


#: Where a card lies in a log: ``(trick, play, index)``, 0-based, or ``("bottom", index)``.
Where = tuple[int, int, int] | tuple[str, int]


@dataclass(frozen=True, slots=True)
class Play:
    """One seat's cards laid in a trick; ``split`` is a throw's declared reading (``"as"``)."""

    seat: Seat
    cards: tuple[AnyCard, ...]
    split: tuple[tuple[AnyCard, ...], ...] | None = None

    def to_json(self) -> list[Any]:
        out: list[Any] = [self.seat.name, format_any(self.cards)]
        if self.split is not None:
            out.append({"as": [format_any(part) for part in self.split]})
        return out


@dataclass(frozen=True, slots=True)
class Trick:
    plays: tuple[Play, ...]

    @property
    def leader(self) -> Seat:
        return self.plays[0].seat

    @property
    def complete(self) -> bool:
        return len(self.plays) == 4

    def to_json(self) -> dict[str, Any]:
        return {"plays": [p.to_json() for p in self.plays]}


@dataclass(frozen=True, slots=True)
class Ruling:
    """A referee's ruling recorded in the log (``"rulings"``): ``points`` count against the
    offending seat's side in the defenders' total; ``levels`` go to the non-offending side;
    ``deals_next`` gives the next deal to the non-offending side."""

    seat: Seat
    kind: str
    points: int = 0
    levels: int = 0
    deals_next: bool = False
    trick: int | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seat": self.seat.name,
            "kind": self.kind,
            "points": self.points,
            "levels": self.levels,
            "deals_next": self.deals_next,
            "note": self.note,
        }
        if self.trick is not None:
            out["trick"] = self.trick
        return out


@dataclass(frozen=True, slots=True)
class Inventory:
    """What parsing found out about a log's unknown cards: where each lies (as
    :attr:`DealLog.unknown_slots`), the copies of each card code the named cards leave over
    (``decks`` less the named copies; codes with none left over are not listed), and for a
    finished log the codes each unknown card may be (:func:`engine.inventory.options`)."""

    slots: tuple[tuple[Where, UnknownCard], ...]
    left: dict[int, int]
    options: tuple[frozenset[int], ...] | None = None


@dataclass(frozen=True, slots=True)
class DealLog:
    """A deal log, typed. :func:`parse_deal_log` makes checked ones. A log built directly (a
    camera's reading of a deal) is a record as written, not checked: it may be one the engine
    refuses (a card three times in two decks, a hand short), and it still travels so a referee can
    correct it; :meth:`checked` reads it as the engine would.

    >>> ah = parse_any("AH")
    >>> log = DealLog(get_rule_set("national-1deck"), 2, None, Seat.S,
    ...     (Trick((Play(Seat.S, (ah,)), Play(Seat.E, (ah,)))),))
    >>> log.to_json()["tricks"]
    [{'plays': [['S', ['AH']], ['E', ['AH']]]}]
    >>> log.checked()
    Traceback (most recent call last):
    ...
    engine.deal_log.DealLogError: trick 1, play 2 (E): AH appears more than 1 time(s) with 1 deck(s)
    """

    rules: RuleSet
    level: int
    trump: str | None
    dealer: Seat
    tricks: tuple[Trick, ...]
    bottom: tuple[AnyCard, ...] | None = None
    finished: bool = False
    rulings: tuple[Ruling, ...] = field(default=())
    #: How many cards are written unknown (``??``, ``J?``, ``?H``, ``?J``).
    unknown: int = 0
    #: What :func:`parse_deal_log` found out about the unknown cards (None without any).
    inventory: Inventory | None = field(default=None, repr=False, compare=False)

    @property
    def unknown_slots(self) -> tuple[tuple[Where, UnknownCard], ...]:
        """Every unknown card with where it lies: ``(trick, play, index)`` (0-based) or
        ``("bottom", index)``."""
        if self.inventory is not None:
            return self.inventory.slots
        out: list[tuple[Where, UnknownCard]] = []
        for t, trick in enumerate(self.tricks):
            for p, play in enumerate(trick.plays):
                out += [((t, p, i), c) for i, c in enumerate(play.cards) if isinstance(c, UnknownCard)]
        out += [(("bottom", i), c) for i, c in enumerate(self.bottom or ()) if isinstance(c, UnknownCard)]
        return tuple(out)

    def checked(self) -> DealLog:
        """This log as :func:`parse_deal_log` reads it: checked, its unknown cards inventoried;
        raises :class:`DealLogError` with the engine's one-line reason."""
        return parse_deal_log(self.to_json())

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rules": self.rules.id,
            "level": RANK_NAME[self.level],
            "trump": self.trump or "NT",
            "dealer": self.dealer.name,
        }
        if self.bottom is not None:
            out["bottom"] = format_any(self.bottom)
        out["tricks"] = [t.to_json() for t in self.tricks]
        out["finished"] = self.finished
        if self.rulings:
            out["rulings"] = [r.to_json() for r in self.rulings]
        return out


# A log holds a hundred plays: the parser makes the usual ones by setting a Play's slots directly,
# which is what its frozen dataclass __init__ does (it has no __post_init__), at half the cost.
_new = object.__new__
_set_seat, _set_cards, _set_split = (vars(Play)[f.name].__set__ for f in fields(Play))
assert not hasattr(Play, "__post_init__")


def _where(trick: int | None, play: int | None = None, seat: object = None) -> str:
    if trick is None:
        return ""
    out = f"trick {trick}"
    if play is not None:
        out += f", play {play}"
        if isinstance(seat, str):
            out += f" ({seat})"
    return out + ": "


def _cards(raw: object, where: str | Callable[[], str]) -> tuple[AnyCard, ...]:
    if isinstance(raw, (list, tuple)):
        try:
            return tuple([BY_SPELLING[c] for c in raw])
        except (KeyError, TypeError):
            pass  # a spelling other than the canonical one, or not a card: read card by card
    try:
        if not isinstance(raw, (list, tuple)):
            raise ValueError(f"cards must be a list of card names, got {shown(raw)}")
        return tuple([parse_any(c) for c in raw])
    except ValueError as exc:
        prefix = where if isinstance(where, str) else where()
        raise DealLogError(f"{prefix}{exc}") from None


def _play(raw: object, t: int, p: int) -> Play:
    if not isinstance(raw, (list, tuple)) or len(raw) not in (2, 3):
        raise DealLogError(f'{_where(t, p)}a play must be [seat, cards] or [seat, cards, {{"as": ...}}]')
    try:
        seat = parse_seat(raw[0])
    except ValueError as exc:
        raise DealLogError(f"{_where(t, p, raw[0])}{exc}") from None
    cards = _cards(raw[1], lambda: _where(t, p, raw[0]))
    if not cards:
        raise DealLogError(f"{_where(t, p, raw[0])}a play has no cards")
    split = None
    if len(raw) == 3:
        where = _where(t, p, raw[0])
        extra = raw[2]
        if not isinstance(extra, Mapping) or not isinstance(extra.get("as"), (list, tuple)):
            raise DealLogError(f'{where}the third element must be {{"as": [[cards], ...]}}')
        split = tuple(_cards(part, where) for part in extra["as"])
        if Counter(c for part in split for c in part) != Counter(cards) or any(not p for p in split):
            raise DealLogError(f"{where}the declared split does not match the cards played")
    return Play(seat, cards, split)


def _ruling(raw: object, i: int) -> Ruling:
    where = f"rulings[{i}]: "
    if not isinstance(raw, Mapping):
        raise DealLogError(f"{where}a ruling must be an object")
    try:
        seat = parse_seat(raw.get("seat"))
    except ValueError as exc:
        raise DealLogError(f"{where}{exc}") from None
    vals: dict[str, int] = {}
    for name, top in (("points", MAX_RULING_POINTS), ("levels", MAX_RULING_LEVELS)):
        v = raw.get(name, 0)
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= top:
            raise DealLogError(f"{where}{name} must be a whole number from 0 to {top}")
        vals[name] = v
    trick = raw.get("trick")
    if trick is not None and (not isinstance(trick, int) or isinstance(trick, bool) or trick < 1):
        raise DealLogError(f"{where}trick must be a trick number ≥ 1")
    return Ruling(
        seat=seat,
        kind=str(raw.get("kind", "other")),
        points=vals["points"],
        levels=vals["levels"],
        deals_next=bool(raw.get("deals_next", False)),
        trick=trick,
        note=str(raw.get("note", "")),
    )


def _check_complete(
    rules: RuleSet,
    dealer: Seat,
    tricks: Sequence[Trick],
    bottom: tuple[AnyCard, ...] | None,
    seen: list[int],
    unknown: list[UnknownCard],
    left: dict[int, int],
) -> tuple[frozenset[int], ...] | None:
    """A finished log accounts for the whole deal: the dealer led the first trick, every hand was
    played out, the bottom has the rule set's size, and every card of the decks appears exactly
    ``decks`` times over the plays and the bottom (``seen``: named copies per code; ``unknown``:
    the unknown cards in log order; ``left``: the copies left over, as :class:`Inventory`).
    Raises :class:`DealLogError` naming what is missing; returns the unknown cards' options (None
    when there are none)."""
    if not tricks:
        raise DealLogError("finished, but the log does not account for the whole deal: it has no tricks")
    if tricks[0].leader is not dealer:
        raise DealLogError(
            f"trick 1, play 1 ({tricks[0].leader}): a finished deal starts with the dealer's lead, "
            f"but the dealer is {dealer} (a log that started late is never finished)"
        )
    problems: list[str] = []
    played = [0, 0, 0, 0]
    for trick in tricks:
        for play in trick.plays:
            played[play.seat.index] += len(play.cards)
    short = [f"{s} played {played[s.index]}" for s in SEAT_ORDER if played[s.index] != rules.hand_size]
    if short:
        problems.append(f"each hand has {rules.hand_size} cards, but " + ", ".join(short))
    size = len(bottom) if bottom is not None else 0
    if size != rules.bottom_size:
        problems.append(f"the bottom has {size} of {rules.bottom_size} cards")
    decks = rules.decks
    missing = [ALL_CARDS[code] for code, n in enumerate(seen) if n < decks for _ in range(decks - n)]

    def listed() -> str:
        more = f" and {len(missing) - _MISSING_SHOWN} more" if len(missing) > _MISSING_SHOWN else ""
        return " ".join(str(c) for c in missing[:_MISSING_SHOWN]) + more

    if len(missing) > len(unknown):
        also = f", {len(unknown)} unknown card(s) stand for some of" if unknown else ""
        problems.append(f"{len(missing) - len(unknown)} card(s) of the decks never appear{also} ({listed()})")
    elif unknown and not problems:
        found = options([u.candidates for u in unknown], left, exact=True)
        if found is None:
            written = " ".join(str(u) for u in unknown[:_MISSING_SHOWN])
            problems.append(f"the unknown cards ({written}) cannot be the cards missing ({listed()})")
        else:
            return tuple(found)
    if problems:
        raise DealLogError(
            "finished, but the log does not account for the whole deal: " + "; ".join(problems)
        )
    return None


def parse_deal_log(data: object) -> DealLog:
    """Validate and type a decoded JSON deal log; raises :class:`DealLogError`."""
    if not isinstance(data, Mapping):
        raise DealLogError("a deal log must be a JSON object")
    try:
        rules = get_rule_set(data.get("rules"))
    except ValueError as exc:
        raise DealLogError(f"rules: {exc}") from None
    try:
        level = parse_rank(str(data.get("level")))
    except ValueError as exc:
        raise DealLogError(f"level: {exc}") from None
    trump_raw = data.get("trump")
    trump = trump_raw.strip().upper() if isinstance(trump_raw, str) else None
    if trump not in (*SUITS, "NT"):
        raise DealLogError(f"trump: unknown trump {shown(trump_raw)} (S, H, D, C or NT)")
    try:
        dealer = parse_seat(data.get("dealer"))
    except ValueError as exc:
        raise DealLogError(f"dealer: {exc}") from None
    bottom = None
    if data.get("bottom") is not None:
        bottom = _cards(data["bottom"], "bottom: ")
        if len(bottom) > rules.bottom_size:
            raise DealLogError(f"bottom: {len(bottom)} cards, {rules.id} buries {rules.bottom_size}")
    raw_tricks = data.get("tricks", [])
    if not isinstance(raw_tricks, Sequence) or isinstance(raw_tricks, str):
        raise DealLogError("tricks must be a list")
    tricks: list[Trick] = []
    unknown = 0
    slots: list[tuple[Where, UnknownCard]] = []
    seen = [0] * N_CODES  # named copies per card code
    decks = rules.decks
    for t, raw in enumerate(raw_tricks, start=1):
        raw_plays = raw.get("plays") if isinstance(raw, dict) else None
        if not isinstance(raw_plays, (list, tuple)):
            raise DealLogError(f"trick {t}: a trick must be an object with a list of plays")
        read: list[Play] = []
        # A play out of turn or holding a card beyond its copies is reported once the whole trick
        # is read: a play that cannot be read comes first, then too many plays.
        late: DealLogError | None = None
        order: tuple[Seat, ...] = ()
        for i, p in enumerate(raw_plays, start=1):
            play = None
            if p.__class__ is list and len(p) == 2 and (named := p[1]).__class__ is list and named:
                try:  # the usual form: a seat's name and canonical card names
                    play = _new(Play)  # Play(seat, cards), its slots set as its __init__ sets them
                    _set_seat(play, SEAT_BY_NAME[p[0]])
                    _set_cards(play, tuple([BY_SPELLING[c] for c in named]))
                    _set_split(play, None)
                except (KeyError, TypeError):
                    play = None  # another spelling, or not a play: _play reads it in full
            if play is None:
                play = _play(p, t, i)
            read.append(play)
            if late is not None or i > 4:
                continue
            if i == 1:
                order = _ORDER[play.seat.index]
            if play.seat is not order[i - 1]:
                late = DealLogError(
                    f"{_where(t, i, play.seat.name)}seat {play.seat.name} played out of turn "
                    f"(expected {order[i - 1].name})"
                )
                continue
            over = None
            before = unknown
            for c in play.cards:
                if isinstance(c, Card):
                    code = c.code
                    n = seen[code] = seen[code] + 1
                    if n > decks and over is None:
                        over = c
                else:
                    unknown += 1
            if unknown != before:
                slots += [
                    ((t - 1, i - 1, j), c) for j, c in enumerate(play.cards) if isinstance(c, UnknownCard)
                ]
            if over is not None:
                late = DealLogError(
                    f"{_where(t, i, play.seat.name)}{over} appears more than {rules.decks} "
                    f"time(s) with {rules.decks} deck(s)"
                )
        if not read:
            raise DealLogError(f"trick {t}: no plays")
        if len(read) > 4:
            raise DealLogError(f"trick {t}: {len(read)} plays, a trick has at most 4")
        if late is not None:
            raise late
        plays = tuple(read)
        if tricks and not tricks[-1].complete:
            raise DealLogError(f"trick {t}: trick {t - 1} has only {len(tricks[-1].plays)} plays")
        tricks.append(Trick(plays))
    if bottom is not None:
        slots += [(("bottom", j), c) for j, c in enumerate(bottom) if isinstance(c, UnknownCard)]
        unknown = len(slots)
        for c in bottom:
            if isinstance(c, Card):
                seen[c.code] += 1
        beyond = [c for c in bottom if isinstance(c, Card) and seen[c.code] > rules.decks]
        if beyond:
            raise DealLogError(f"bottom: {beyond[0]} appears more than {rules.decks} time(s) in the log")
    finished = data.get("finished", False)
    if not isinstance(finished, bool):
        raise DealLogError("finished must be true or false")
    if finished and tricks and not tricks[-1].complete:
        raise DealLogError(f"trick {len(tricks)}: the log is finished but the last trick is incomplete")
    inventory = None
    if slots:
        left = {code: decks - n for code, n in enumerate(seen) if n != decks}
        found = (
            _check_complete(rules, dealer, tricks, bottom, seen, [c for _, c in slots], left)
            if finished
            else None
        )
        inventory = Inventory(tuple(slots), left, found)
    elif finished:
        _check_complete(rules, dealer, tricks, bottom, seen, [], {})
    raw_rulings = data.get("rulings", [])
    if not isinstance(raw_rulings, Sequence) or isinstance(raw_rulings, str):
        raise DealLogError("rulings must be a list")
    rulings = tuple(_ruling(r, i) for i, r in enumerate(raw_rulings))
    return DealLog(
        rules,
        level,
        None if trump == "NT" else trump,
        dealer,
        tuple(tricks),
        bottom,
        finished,
        rulings,
        unknown,
        inventory,
    )
