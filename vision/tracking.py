"""From frames' card readings to plays and tricks: the table service's tracker.

Two steps, each a small typed piece:

* :func:`table_state` puts one frame's cards where they lie on the table (``table.json``): each
  seat's play zone, the centre (the defenders' captured point cards, never a play) and the rest of
  the table (``loose``: the bottom when it is turned up, a card dropped outside a zone).
* :class:`TrickTracker` follows a stream of :class:`TableState` and cuts it into plays and tricks,
  Frigate-style with **zone inertia**: a zone counts as holding a play only after ``inertia``
  consecutive readings show cards there. The trick ends at the first reading with every zone empty
  (the clear; a play the reader never saw must not merge two tricks), unless the next reading shows
  the same plays again: then that empty reading was a misread and the trick goes on. A clear that
  a misread zone kept from looking empty ends the trick too: when a seat's zone and another
  play's emptied together for ``inertia`` readings and the seat then lays cards none of its play's,
  a seat plays once a trick, so a new trick began where the zones emptied. **Cards left lying
  through a clear are set aside**: at such a clear, cards of the trick just cleared that lie in a
  seat's zone in every reading until the next trick's first play (a captured point card put down
  in front of a player, a play not yet picked up) are no play of the next trick; they are taken
  out of that zone's readings until the zone reads empty for ``inertia`` readings (the cards were
  moved). A play's cards are then decided by **votes over every reading**
  taken while it lay on the table (the multiset read most often; a play laid card by card counts as what it grew to), so one bad frame (an arm over
  the cards, a glare) neither starts a play nor changes what was played.

The tracker knows nothing of the rules; the table service turns its tricks into a deal log.

Cards are the engine's :data:`~engine.cards.AnyCard` throughout (text given for them is parsed);
where they are ordered, they are ordered by their text (``10H`` before ``2H``), as the log shows them.

>>> from vision.tracking import TableState, TrickTracker
>>> t = TrickTracker(inertia=2)
>>> def state(**zones):
...     return TableState(zones={s: tuple(zones.get(s, ())) for s in "SENW"})
>>> for s in [state(S=["AH"]), state(S=["AH"]), state(S=["AH"], W=["3H"]), state(S=["AH"], W=["3H"]),
...           state(), state()]:
...     t.update(s)
>>> [(p.seat, format_any(p.cards)) for p in t.tricks()[0].plays]
[('S', ['AH']), ('W', ['3H'])]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from calibration.table import Seat, TableGeometry
from engine.cards import AnyCard, Card, UnknownCard, format_any, parse_any
from engine.seats import SEAT_NAMES
from vision.instances import CardInstance

SEATS: tuple[Seat, ...] = SEAT_NAMES
#: A card the readings could not name at all.
UNKNOWN: Final = UnknownCard()
#: Cards of one reading or play, in the order of their text.
Cards = tuple[AnyCard, ...]


def in_order(cards: Iterable[AnyCard | str]) -> Cards:
    """``cards`` (text parsed) sorted by their text, the order readings and plays keep.

    >>> format_any(in_order(["2H", "10H", "??", "AS"]))
    ['10H', '2H', '??', 'AS']
    """
    return tuple(sorted((parse_any(c) if isinstance(c, str) else c for c in cards), key=str))


def _parsed(cards: Iterable[AnyCard | str]) -> Cards:
    """``cards`` with text parsed, in their order."""
    return tuple(parse_any(c) if isinstance(c, str) else c for c in cards)


class TrackerConfigError(ValueError):
    """A tracker setting out of range (``inertia`` below 1)."""


@dataclass(frozen=True)
class TableState:
    """The face-up cards of one reading, by where they lie: ``zones`` per seat (sorted by their
    text), ``centre`` and ``loose`` (anywhere else on the table). Text given for a card is parsed."""

    zones: dict[Seat, Cards]
    centre: Cards = ()
    loose: Cards = ()
    frame: int = 0

    def __post_init__(self) -> None:
        if any(
            isinstance(c, str) for cards in (*self.zones.values(), self.centre, self.loose) for c in cards
        ):
            object.__setattr__(self, "zones", {s: _parsed(c) for s, c in self.zones.items()})
            object.__setattr__(self, "centre", _parsed(self.centre))
            object.__setattr__(self, "loose", _parsed(self.loose))

    def empty(self) -> bool:
        """Whether no seat's zone holds a card."""
        return not any(self.zones.get(s) for s in SEATS)


def table_state(cards: Sequence[CardInstance], geometry: TableGeometry, frame: int = 0) -> TableState:
    """Place one frame's cards on the table by the centre of each card's box.

    A card read from one corner has only that index's box; its centre still lies on the card, and
    play zones are far larger than a card, so the zone is right unless the card straddles a border.
    """
    zones: dict[Seat, list[AnyCard]] = {s: [] for s in SEATS}
    centre: list[AnyCard] = []
    loose: list[AnyCard] = []
    if cards:
        px = np.array([[(c.box[0] + c.box[2]) / 2, (c.box[1] + c.box[3]) / 2] for c in cards])
        for card, (x, y) in zip(cards, geometry.pixel_to_table(px), strict=True):
            at = (float(x), float(y))
            seat = geometry.seat_of(at)
            if seat is not None:
                zones[seat].append(card.card)
            elif geometry.in_centre(at):
                centre.append(card.card)
            else:
                loose.append(card.card)
    return TableState(
        zones={s: in_order(v) for s, v in zones.items()},
        centre=in_order(centre),
        loose=in_order(loose),
        frame=frame,
    )


@dataclass(frozen=True)
class TrackedPlay:
    """One play as the tracker decided it: the seat, the cards (sorted), how many readings saw the
    play on the table and how many of them read exactly these cards; ``beyond``: what readings that
    saw more cards than :attr:`cards` (all of them and others) knew of the others, a card, or a rank
    or a suit alone (``?C``, ``K?``, ``?J``), read in at least :data:`MIN_SUPPORT` readings, the most
    read first (:func:`beyond_cards`): a play read short of its lead is filled up with these before
    ``??`` (and its trick is doubtful: no alert rests on it). Text given for a card is parsed."""

    seat: Seat
    cards: Cards
    readings: int
    agreeing: int
    first_frame: int
    beyond: Cards = ()

    def __post_init__(self) -> None:
        if any(isinstance(c, str) for c in (*self.cards, *self.beyond)):
            object.__setattr__(self, "cards", _parsed(self.cards))
            object.__setattr__(self, "beyond", _parsed(self.beyond))

    @property
    def agreement(self) -> float:
        """Share of the play's readings that read exactly :attr:`cards` (1.0: every frame agreed)."""
        return self.agreeing / self.readings if self.readings else 0.0


@dataclass(frozen=True)
class TrackedTrick:
    """A trick's plays in the order they were laid; ``complete`` once the table was cleared (a trick
    may be cleared with fewer than four plays when the camera missed one)."""

    plays: tuple[TrackedPlay, ...]
    complete: bool


@dataclass
class _Open:
    seat: Seat
    first_frame: int
    #: every reading of the play, (frame, cards), in order
    history: list[tuple[int, Cards]] = field(default_factory=list)
    #: the frame at which the seat's zone last went empty while the play was open (None: it shows
    #: cards), how many readings it has been empty since, and whether another play's zone was
    #: empty in one of them too
    gap_from: int | None = None
    gap: int = 0
    gap_shared: bool = False
    #: the frames at which the seat's zone read empty while the play was open
    empty: list[int] = field(default_factory=list)

    def add(self, frame: int, cards: Cards) -> None:
        self.history.append((frame, cards))

    @property
    def votes(self) -> Counter[Cards]:
        """How many readings read each multiset, in the order first read."""
        return Counter(cards for _, cards in self.history)

    def decide(self) -> TrackedPlay:
        votes = self.votes
        total = sum(votes.values())
        if not any(_is_unknown(c) for key in votes for c in key):
            # the multiset read most often, a play laid card by card counted as it grew
            # (:func:`grown_votes`); a tie goes to the one with more cards (a card hidden in one
            # frame is likelier than one invented), then to the one read first
            order = {k: i for i, k in enumerate(votes)}
            grown = grown_votes(self.history)
            cards = max(grown, key=lambda k: (grown[k], len(k), -order[k]))
            return TrackedPlay(
                self.seat, cards, total, votes[cards], self.first_frame, beyond_cards(cards, votes)
            )
        return _decide_with_unknown(self.seat, votes, self.first_frame)


def beyond_cards(cards: Cards, votes: Counter[Cards]) -> Cards:
    """What the readings of a play that hold every card of ``cards`` and more say of the others:
    each card, or rank or suit alone (``?C``, ``K?``, ``?J``; not ``??``), read in at least
    :data:`MIN_SUPPORT` such readings, as many copies as one reading held, the most read first (a
    fanned play whose lower card a later reading lost, or paired with the card over it: the
    readings that saw it name it).

    >>> v = Counter({in_order(["JC"]): 9, in_order(["??", "JC"]): 1, in_order(["?C", "JC"]): 2,
    ...              in_order(["?D", "QS"]): 3})
    >>> format_any(beyond_cards(in_order(["JC"]), v))
    ['?C']
    >>> eights = in_order(["8H", "8H"])
    >>> format_any(beyond_cards(eights, Counter({eights: 40, in_order(["8H", "8H", "8H"]): 5})))
    ['8H']
    >>> beyond_cards(in_order(["JC"]), Counter({in_order(["JC"]): 9, in_order(["?C", "JC"]): 1}))
    ()
    """
    have = Counter(cards)
    support: Counter[AnyCard] = Counter()
    copies: Counter[AnyCard] = Counter()
    for key, n in votes.items():
        extra = Counter(key) - have
        if len(key) <= len(cards) or have - Counter(key):
            continue
        for form, k in extra.items():
            if form != UNKNOWN:
                support[form] += n
                copies[form] = max(copies[form], k)
    return tuple(
        form
        for form, n in sorted(support.items(), key=lambda kv: (-kv[1], str(kv[0])))
        if n >= MIN_SUPPORT
        for _ in range(copies[form])
    )


def grown_votes(history: Sequence[tuple[int, Cards]]) -> Counter[Cards]:
    """The votes of a play's readings (frame, cards), where a play laid one card at a time counts as
    what it grew to: the readings of cards that were all read again, with more, in at least
    :data:`MIN_SUPPORT` readings that all came later are votes for that larger play. Without it the
    first card's readings outvote the whole play until it has lain as long, and the trick's result
    waits. A card that goes missing later (an arm over it) is not growth: those readings vote for
    themselves.

    >>> ks, both = in_order(["KS"]), in_order(["3C", "KS"])
    >>> h = [(f, ks) for f in range(5)] + [(5, both), (6, both)]
    >>> [(format_any(k), n) for k, n in grown_votes(h).most_common()]
    [(['3C', 'KS'], 7), (['KS'], 0)]
    >>> grown_votes(h[:6])[ks]  # the larger play read once: perhaps a misread, not yet growth
    5
    """
    votes = Counter(cards for _, cards in history)
    first: dict[Cards, int] = {}
    last: dict[Cards, int] = {}
    for i, (_, cards) in enumerate(history):
        first.setdefault(cards, i)
        last[cards] = i
    out = Counter(votes)
    for small in votes:  # in the order first read
        later = [
            big
            for big in votes
            if len(big) > len(small)
            and votes[big] >= MIN_SUPPORT
            and first[big] > last[small]
            and not Counter(small) - Counter(big)
        ]
        if later:
            grew = min(later, key=lambda k: first[k])
            out[grew] += out[small]
            out[small] = 0
    return out


#: Readings that must name a card before a play with unknown cards takes that name.
MIN_SUPPORT = 2


def _is_unknown(card: AnyCard) -> bool:
    """A card the readings did not name in full (``??``, ``J?``, ``?H``, ``?J``)."""
    return isinstance(card, UnknownCard)


def _decide_with_unknown(seat: Seat, votes: Counter[Cards], first_frame: int) -> TrackedPlay:
    """A play some readings saw without naming every card (``??``, ``J?``, ``?H``, ``?J``): its
    length is the length read most often (a tie: the longer); a card is named when at least
    :data:`MIN_SUPPORT` readings of that length name it (the most supported first); the rest stay
    unknown, with what every such reading agrees on (``?J`` when all say a joker), else ``??``; what
    longer readings knew of the cards beyond these is kept (:func:`beyond_cards`).

    >>> v = Counter({in_order(["AH", "??"]): 3, in_order(["AH", "KH"]): 2, in_order(["QH"]): 1})
    >>> format_any(_decide_with_unknown("S", v, 0).cards)
    ['AH', 'KH']
    >>> format_any(_decide_with_unknown("S", Counter({in_order(["??"]): 3, in_order(["QH"]): 1}), 0).cards)
    ['??']
    """
    lengths: Counter[int] = Counter()
    for key, n in votes.items():
        lengths[len(key)] += n
    size = max(lengths.items(), key=lambda kv: (kv[1], kv[0]))[0]
    same = {key: n for key, n in votes.items() if len(key) == size}
    support: Counter[tuple[AnyCard, int]] = Counter()
    for key, n in same.items():
        seen: Counter[AnyCard] = Counter(c for c in key if not _is_unknown(c))
        for card, copies in seen.items():
            for k in range(1, copies + 1):
                support[(card, k)] += n
    named = [
        ck
        for ck, n in sorted(support.items(), key=lambda kv: (-kv[1], str(kv[0][0]), kv[0][1]))
        if n >= MIN_SUPPORT
    ][:size]
    cards: list[AnyCard] = [card for card, _ in named]
    forms = {c for key in same for c in key if _is_unknown(c)}
    filler = forms.pop() if len(forms) == 1 else UNKNOWN
    cards += [filler] * (size - len(cards))
    chosen = Counter(c for c in cards if not _is_unknown(c))
    agreeing = sum(
        n for key, n in same.items() if not (Counter(c for c in key if not _is_unknown(c)) - chosen)
    )
    played = in_order(cards)
    return TrackedPlay(seat, played, sum(votes.values()), agreeing, first_frame, beyond_cards(played, votes))


def set_aside(cards: Cards, aside: Counter[AnyCard]) -> Cards:
    """A zone's reading without the cards set aside in it: each set-aside card takes its own name
    away, or else one partial name it fits (``10?`` or ``?S`` for ``10S``; never ``??``, which may
    be any card).

    >>> ten = Counter([parse_any("10S")])
    >>> format_any(set_aside(in_order(["10S", "QD"]), ten))
    ['QD']
    >>> format_any(set_aside(in_order(["10?", "QD"]), ten)), format_any(set_aside(in_order(["??", "QD"]), ten))
    (['QD'], ['??', 'QD'])
    """
    if not aside:
        return cards
    left = list(cards)
    for card, n in aside.items():
        for _ in range(n):
            if card in left:
                left.remove(card)
                continue
            fits = next(
                (
                    c
                    for c in left
                    if c != UNKNOWN
                    and isinstance(card, Card)
                    and isinstance(c, UnknownCard)
                    and card.code in c.candidates
                ),
                None,
            )
            if fits is not None:
                left.remove(fits)
    return tuple(left)


def lying_through(readings: Sequence[Cards], trick: Counter[AnyCard]) -> Counter[AnyCard]:
    """The cards of ``trick`` (the trick just cleared) that every one of ``readings`` (a zone's,
    from the clear to the next trick's first play) shows: cards left lying through the clear.

    >>> ten, four = parse_any("10S"), parse_any("4S")
    >>> lying_through([in_order(["10S"]), in_order(["10S", "QD"])], Counter({ten: 1, four: 1}))
    Counter({Card('10S'): 1})
    >>> lying_through([in_order(["10S"]), ()], Counter({ten: 1}))
    Counter()
    """
    if not readings:
        return Counter()
    common = Counter(readings[0])
    for cards in readings[1:]:
        common &= Counter(cards)
    return Counter({c: n for c, n in (common & trick).items() if not _is_unknown(c)})


class TrickTracker:
    """Cuts a stream of :class:`TableState` into tricks (see the module docstring).

    ``update`` takes each reading in order; ``tricks()`` gives the tricks so far (the last one
    incomplete while the table is not cleared); ``loose()`` the steadiest reading of the cards
    outside the zones and the centre since the last trick was cleared (the bottom, at the end);
    ``in_play(state)`` a reading without the cards set aside (left lying through a clear).

    Raises :class:`TrackerConfigError` for ``inertia`` below 1.
    """

    def __init__(self, inertia: int = 2) -> None:
        if inertia < 1:
            raise TrackerConfigError(f"inertia must be at least 1, got {inertia}")
        self.inertia = inertia
        self._done: list[TrackedTrick] = []
        self._open: list[_Open] = []  # plays of the current trick, in the order they were laid
        # per seat without a play yet, the consecutive readings (frame, cards) of its zone
        self._pending: dict[Seat, list[tuple[int, Cards]]] = {s: [] for s in SEATS}
        # per seat, the cards set aside in its zone (left lying through a clear), and for how many
        # readings since the zone has read empty
        self._aside: dict[Seat, Counter[AnyCard]] = {s: Counter() for s in SEATS}
        self._aside_gap: dict[Seat, int] = {s: 0 for s in SEATS}
        self._empty_streak = 0
        self._reopen: list[_Open] = []  # the plays of the trick cleared at the last reading
        self._loose: Counter[Cards] = Counter()

    def in_play(self, state: TableState) -> TableState:
        """``state`` without the cards set aside in each zone (:func:`set_aside`)."""
        if not any(self._aside.values()):
            return state
        zones = {s: set_aside(c, self._aside[s]) if self._aside.get(s) else c for s, c in state.zones.items()}
        return TableState(zones=zones, centre=state.centre, loose=state.loose, frame=state.frame)

    def _forget_moved(self, state: TableState) -> None:
        """Cards set aside in a zone that read empty for ``inertia`` readings were moved."""
        for seat in SEATS:
            if not self._aside[seat]:
                continue
            self._aside_gap[seat] = 0 if state.zones.get(seat) else self._aside_gap[seat] + 1
            if self._aside_gap[seat] >= self.inertia:
                self._aside[seat] = Counter()

    def update(self, state: TableState) -> None:
        """Take one reading."""
        self._forget_moved(state)
        raw, state = state, self.in_play(state)
        if state.loose:
            self._loose[state.loose] += 1
        if state.empty():
            self._empty_streak += 1
            if self._open:  # the table was cleared
                self._reopen = self._open
                self._close()
            for seat in SEATS:
                self._pending[seat] = []
            return
        if self._empty_streak == 1 and self._reopen and self._same_table(state, self._reopen):
            # one reading saw an empty table and the next the same plays: a misread, not a clear
            self._done.pop()
            self._open = self._reopen
        self._reopen = []
        self._empty_streak = 0
        gone = {p.seat for p in self._open if not state.zones.get(p.seat)}
        for seat in SEATS:
            # a split earlier in this loop may have set cards aside
            cards = set_aside(raw.zones.get(seat, ()), self._aside[seat])
            play = next((p for p in self._open if p.seat == seat), None)
            if not cards:
                self._pending[seat] = []
                if play is not None:
                    play.gap_from = state.frame if play.gap_from is None else play.gap_from
                    play.gap += 1
                    play.gap_shared |= len(gone) > 1
                    play.empty.append(state.frame)
                continue
            if play is not None:
                if self._laid_again(play, cards):
                    self._pending[seat].append((state.frame, cards))
                    if len(self._pending[seat]) >= self.inertia:
                        self._split(seat, play.gap_from or state.frame)
                    continue
                self._pending[seat] = []
                play.gap_from, play.gap, play.gap_shared = None, 0, False
                play.add(state.frame, cards)
                continue
            self._pending[seat].append((state.frame, cards))
            if len(self._pending[seat]) >= self.inertia:
                self._open_play(seat)

    def _open_play(self, seat: Seat) -> None:
        """The seat's pending readings become its play in the trick on the table."""
        play = _Open(seat, self._pending[seat][0][0])
        for frame, cards in self._pending[seat]:
            play.add(frame, cards)
        self._open.append(play)
        self._pending[seat] = []

    def _laid_again(self, play: _Open, cards: Cards) -> bool:
        """Whether ``cards`` in the seat's zone are a new play rather than more readings of ``play``:
        the zone was empty for at least ``inertia`` readings, another play's zone was empty with it
        (the table was cleared, though a misread elsewhere kept a reading from looking empty), and
        none of the cards is one the play was read as."""
        return play.gap >= self.inertia and play.gap_shared and not set(cards) & set(play.decide().cards)

    def _split(self, seat: Seat, cleared: int) -> None:
        """``seat`` laid a new play after its zone and another were emptied from frame ``cleared``
        on: a clear the tracker did not see as an empty table. The trick on the table ends there.
        A play's readings before ``cleared`` stay in it. Cards of that trick lying in a zone from
        some reading on until the next trick's first play are set aside (:func:`lying_through`).
        A later reading that, without them, still shares a card with the play is the play not yet
        picked up and stays in it; a seat whose other later readings (``inertia`` or more) hold
        cards laid a play in the next trick, as did a seat first seen after the clear. ``seat``'s
        pending readings are its play in the next trick."""
        old: list[tuple[_Open, _Open]] = []
        new: list[_Open] = []
        for p in self._open:
            before = [(f, c) for f, c in p.history if f < cleared]
            if not before:
                new.append(p)
                continue
            old.append((p, _Open(p.seat, before[0][0], before)))
        trick: Counter[AnyCard] = Counter()
        for _, kept in old:
            trick += Counter(kept.decide().cards)
        # a seat first seen after the clear whose cards until ``seat`` laid are the trick's lay
        # there still: set aside, and its other readings are its play
        laid = self._pending[seat][0][0]
        fresh: list[_Open] = []
        for p in new:
            aside = self._lying(p, trick, cleared, laid)
            left = [(f, r) for f, c in p.history if (r := set_aside(c, aside))]
            if len(left) >= self.inertia:
                fresh.append(_Open(p.seat, left[0][0], left))
        new = fresh
        lead = min([laid, *(p.first_frame for p in new)])
        for p, kept in old:
            after = p.history[len(kept.history) :]
            aside = self._lying(p, trick, cleared, lead) if p.seat != seat else Counter()
            cards = set(kept.decide().cards)
            moved: list[tuple[int, Cards]] = []
            for f, c in after:
                rest = set_aside(c, aside)
                if set(rest) & cards or (not rest and set(c) & cards):
                    kept.history.append((f, c))
                elif rest:
                    moved.append((f, rest))
            if len(moved) >= self.inertia:
                new.append(_Open(p.seat, moved[0][0], moved))
        self._open = [kept for _, kept in old]
        self._close()
        self._open = sorted(new, key=lambda p: p.first_frame)
        self._open_play(seat)

    def _lying(self, play: _Open, trick: Counter[AnyCard], cleared: int, lead: int) -> Counter[AnyCard]:
        """Set aside (and return) the cards of ``trick`` lying in ``play``'s zone from some reading
        after frame ``cleared`` on until frame ``lead`` (the zone's readings in between, empty ones
        too; the run of readings with cards that reaches ``lead``)."""
        shown: list[tuple[int, Cards]] = [(f, c) for f, c in play.history if cleared <= f < lead]
        shown += [(f, ()) for f in play.empty if cleared <= f < lead]
        shown.sort(key=lambda fc: (fc[0], format_any(fc[1])))  # a frame's cards by their text
        run: list[Cards] = []
        for _, c in shown:
            run = [*run, c] if c else []
        aside = lying_through(run, trick)
        if aside:
            self._aside[play.seat] += aside
            self._aside_gap[play.seat] = 0
        return aside

    @staticmethod
    def _same_table(state: TableState, plays: list[_Open]) -> bool:
        """Whether every zone with cards shows what the same seat's play was read as most, and
        every one of those plays is there again."""
        read = {s: c for s, c in state.zones.items() if c}
        return set(read) == {p.seat for p in plays} and all(read[p.seat] == p.decide().cards for p in plays)

    def _close(self) -> None:
        self._done.append(TrackedTrick(tuple(p.decide() for p in self._open), True))
        self._open = []
        self._loose.clear()

    def current(self, seat: Seat) -> TrackedPlay | None:
        """The seat's play in the trick on the table, as decided so far (None: no play yet)."""
        play = next((p for p in self._open if p.seat == seat), None)
        return None if play is None else play.decide()

    @property
    def completed(self) -> int:
        """How many tricks have been cleared so far."""
        return len(self._done)

    def tricks(self) -> list[TrackedTrick]:
        """Complete tricks, then the one in progress (if any play is on the table)."""
        if not self._open:
            return list(self._done)
        return [*self._done, TrackedTrick(tuple(p.decide() for p in self._open), False)]

    def loose(self) -> Cards:
        """The loose cards read most often since the last clear (empty when none were seen)."""
        if not self._loose:
            return ()
        return max(self._loose.items(), key=lambda kv: (kv[1], len(kv[0])))[0]
