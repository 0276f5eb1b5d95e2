"""The tracker's tricks → a deal log (``../shared/spec/deal-log.md``).

What the camera cannot see comes from :class:`DealInfo` (the rule set, the level, trump, the
dealer: declared before the first trick, outside the film). What it sees decides the rest:

* the tricks and their plays (:mod:`vision.tracking`): the play seen first leads, and the others
  follow in turn order from it (S, E, N, W), whatever order the camera settled them in (two plays
  laid between two readings settle together);
* the **bottom**: turned up after the last trick, all at once, it shows as one more "trick" that
  settled in one reading and includes the dealer's zone, or as loose cards, of the rule set's
  bottom size (:func:`_bottom`);
* ``finished``: the bottom was seen, or every seat has played a full hand; never for the deal *so
  far* (``so_far=True``: the live events while the source goes on), since the bottom is turned up
  only after the last trick is cleared, and a finished log without its bottom is one the engine
  refuses (a false ``mismatch`` alert, the last trick's result lost).

A finished log the engine accepts accounts for the whole deal (every hand played out, a full
bottom, every card of the decks): nothing seen later can belong to it, so the table service posts
it at once (:func:`hands_played_out` tells, cheaply, when that is worth checking).

The log is checked with the engine (:func:`engine.score.score_log`: read and scored). A card read
more often than the decks hold it was misread at one of its places: the deal is decoded with the
card unknown at each place in turn, and the place whose log the engine accepts with the fewest
violations is taken (:func:`_place_misreads`); unless the rules settle it by a clear margin, every
place's trick is doubtful (no alert rests on a reading the inventory contradicts). A log the engine still refuses
(a misread card three times in two decks, a leader who cannot have won the trick before) is
returned, with the engine's one-line reason in :attr:`RecognisedDeal.problem`, so a referee can
correct it: nothing the camera saw is dropped. Before that, a finished log in which every hand
lacks the same few cards (no more than the longest play seen) is the log of a deal one of whose
tricks the camera never saw at all: a trick of unknown cards is put in where the time between the
tricks either side says it lay (:func:`unseen_trick_places`), and kept where the engine then takes
the log; it and the tricks beside it are doubtful (no alert rests on them), and the engine's
unknown cards raise the looks a referee settles (:attr:`RecognisedDeal.unseen`).

>>> from vision.tracking import UNKNOWN, Cards, TrackedPlay, TrackedTrick, in_order
>>> p = lambda seat, *cards: TrackedPlay(seat, tuple(cards), 3, 3, 0)
>>> t = TrackedTrick((p("S", "AH"), p("E", "3H"), p("N", "2H"), p("W", "QH")), True)
>>> deal = build_deal([t], (), DealInfo("national-2deck", "5", "H", "S"))
>>> deal.log.to_json()["tricks"], deal.log.finished, deal.problem
([{'plays': [['S', ['AH']], ['E', ['3H']], ['N', ['2H']], ['W', ['QH']]]}], False, None)
>>> deal.log.tricks[0].plays[1]
Play(seat=Seat.E, cards=(Card('3H'),), split=None)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any

from engine.cards import SUITS, AnyCard, UnknownCard, format_any, parse_any, parse_rank
from engine.deal_log import DealLog, DealLogError, LeaderError, Play, Trick
from engine.rules import get_rule_set
from engine.score import evaluate
from engine.seats import SEAT_BY_NAME, SEAT_NAMES, SeatName, parse_seat
from vision.tracking import UNKNOWN, Cards, TrackedPlay, TrackedTrick, in_order


@dataclass(frozen=True)
class DealInfo:
    """What the table service is told rather than sees: rule set id, level rank, trump (a suit
    letter or ``NT``) and the dealer's seat. ``None`` is what the film must tell: the dealer is the
    first trick's leader (the dealer leads the first trick); trump and level come from the
    declaration (:mod:`edge_app.session`; the pipeline fills them in before :func:`build_deal`)."""

    rules: str
    level: str | None
    trump: str | None
    dealer: str | None = None


@dataclass(frozen=True)
class RecognisedDeal:
    """A deal log as the camera read it (``log``: the engine's type, built as read, not checked),
    the engine's reason when it refuses the log (``problem``), and each play's frame agreement
    (trick, seat, share of readings that read the chosen cards) for the referee."""

    log: DealLog
    problem: str | None
    agreement: tuple[tuple[int, str, float], ...]
    #: a JPEG of each play as it lay on the table, by (trick, seat): the evidence an alert carries
    crops: Mapping[tuple[int, str], bytes] = field(default_factory=dict)
    #: tricks (1-based) whose reading the decoding had to question (:func:`decode_tricks`)
    doubtful: frozenset[int] = frozenset()
    #: of those, the plays (trick, seat) whose own cards it questioned: a card added, dropped or made
    #: unknown there (the trick's other doubts, such as who led it, leave a play's cards as read)
    doubtful_plays: frozenset[tuple[int, str]] = frozenset()
    #: the deal's place among those the source showed (0: the first)
    number: int = 0
    #: nobody was seen declaring trump: the log's trump was inferred from the play
    trump_inferred: bool = False
    #: the seat seen declaring trump, if any
    declared_by: str | None = None
    #: why the deal's level (taken from the level card declared) is in doubt, if it is
    level_doubt: str | None = None
    #: the frame at which the deal was seen finished with the engine accepting it
    finished_at: int | None = None
    #: (trick, cards): the centre (the defenders' won point cards) read most often while that trick
    #: lay on the table, i.e. what they had won before it
    centre: tuple[tuple[int, Cards], ...] = ()
    #: tricks (1-based, in the log) the camera never saw, put in as unknown cards so that the log
    #: accounts for every hand (:func:`unseen_trick_places`); the tracker's trick ``t`` is the log's
    #: :meth:`log_trick` ``(t)``
    unseen: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if any(isinstance(c, str) for _, cards in self.centre for c in cards):
            object.__setattr__(self, "centre", tuple((k, in_order(cards)) for k, cards in self.centre))

    def log_trick(self, tracked: int) -> int:
        """The log's number of the tracker's trick ``tracked`` (1-based), past the unseen tricks.

        >>> from engine.deal_log import parse_deal_log
        >>> log = parse_deal_log({"rules": "national-2deck", "level": "5", "trump": "H", "dealer": "S"})
        >>> [RecognisedDeal(log, None, (), unseen=(2, 4)).log_trick(t) for t in (1, 2, 3)]
        [1, 3, 5]
        """
        number = tracked
        for u in sorted(self.unseen):
            if u <= number:
                number += 1
        return number

    @cached_property
    def _scored(self) -> tuple[dict[str, Any] | None, str | None]:
        return (None, self.problem) if self.problem is not None else _score(self.log)

    @property
    def result(self) -> dict[str, Any] | None:
        """The engine's score of :attr:`log` (the ``score`` output), or None when the engine refuses
        it (:attr:`refusal`). Scored once per deal: :func:`build_deal` hands over the score it
        checked the log with, and every reader of the deal (the live events, the pipeline's choice
        of trump, the outcome) takes it from here.

        >>> from engine.deal_log import parse_deal_log
        >>> log = parse_deal_log({"rules": "national-2deck", "level": "5", "trump": "H", "dealer": "S",
        ...        "tricks": [{"plays": [["S", ["AH"]], ["E", ["3H"]], ["N", ["2H"]], ["W", ["QH"]]]}]})
        >>> RecognisedDeal(log, None, ()).result["tricks"][0]["winner"]  # the ace of trump takes it
        'S'
        >>> RecognisedDeal(log, "refused", ()).result is None
        True
        """
        return self._scored[0]

    @property
    def refusal(self) -> str | None:
        """Why the engine refuses :attr:`log`: :attr:`problem` when the deal came with one, else the
        engine's reason when scoring it fails; None when the engine takes the log.

        >>> from engine.deal_log import parse_deal_log
        >>> log = parse_deal_log({"rules": "national-2deck", "level": "5", "trump": "H", "dealer": "S",
        ...        "tricks": [{"plays": [["S", ["AH"]], ["E", ["3H"]], ["N", ["2H"]], ["W", ["QH"]]]}]})
        >>> RecognisedDeal(replace(log, finished=True), None, ()).refusal.split(":")[0]
        'finished, but the log does not account for the whole deal'
        """
        return self._scored[1]

    def agreement_of(self, trick: int, seat: str) -> float:
        """The share of readings that read the play of ``seat`` at ``trick`` as the log has it: 0 for
        a play the readings do not hold, 1 for every play of a log that was given, not read (no
        ``agreement`` at all)."""
        if not self.agreement:
            return 1.0
        return next((a for t, s, a in self.agreement if (t, s) == (trick, seat)), 0.0)


#: Turn order (S, E, N, W): the engine's seat names.
TURN = SEAT_NAMES


def turn_from(leader: SeatName) -> list[SeatName]:
    """The four seats in the order they play a trick ``leader`` leads.

    >>> turn_from("N")
    ['N', 'W', 'S', 'E']
    """
    seat = SEAT_BY_NAME[leader]
    return [seat.offset(k).letter for k in range(4)]


@dataclass(frozen=True)
class _Doubt:
    """What a decoding questioned (:func:`decode_tricks`): tricks (1-based), and the plays (trick,
    seat) whose own cards it questioned (their tricks are among ``tricks`` too)."""

    tricks: frozenset[int] = frozenset()
    plays: frozenset[tuple[int, str]] = frozenset()

    def more(self, tricks: Iterable[int] = (), plays: Iterable[tuple[int, str]] = ()) -> _Doubt:
        """This doubt and ``tricks`` and ``plays`` (with their tricks)."""
        plays = frozenset(plays)
        return _Doubt(self.tricks | frozenset(tricks) | {t for t, _ in plays}, self.plays | plays)


#: A trick while the deal is decoded: its plays as ``(seat, cards)``, lead first, the cards a list
#: because fitting the inventory changes earlier tricks' cards (:func:`_fit_inventory`); the log
#: gets the engine's :class:`~engine.deal_log.Trick` (:func:`_typed`).
_Trick = list[tuple[str, list[AnyCard]]]


def _typed(tricks: Sequence[_Trick]) -> tuple[Trick, ...]:
    """The engine's tricks of decoded ones.

    >>> from engine.cards import parse_any
    >>> _typed([[("S", [parse_any("AH")]), ("E", [parse_any("??")])]])[0].plays[1]
    Play(seat=Seat.E, cards=(UnknownCard('??'),), split=None)
    """
    return tuple(Trick(tuple(Play(SEAT_BY_NAME[seat], tuple(cards)) for seat, cards in t)) for t in tricks)


def _cards(cards: Sequence[AnyCard] | None) -> tuple[AnyCard, ...] | None:
    return None if cards is None else tuple(cards)


def _named(card: AnyCard) -> bool:
    """Whether a card was named in full (not ``??``, ``K?``, ``?H``, ``?J``)."""
    return not isinstance(card, UnknownCard)


def _listed(tricks: Sequence[_Trick]) -> list[list[tuple[str, list[str]]]]:
    """Decoded tricks with their cards as text (for reading them in examples)."""
    return [[(seat, format_any(cards)) for seat, cards in t] for t in tricks]


def in_turn(trick: TrackedTrick) -> list[TrackedPlay]:
    """A trick's plays in turn order from the play seen first.

    >>> p = lambda seat: TrackedPlay(seat, ("3C",), 1, 1, 0)
    >>> [q.seat for q in in_turn(TrackedTrick((p("N"), p("S"), p("W")), False))]
    ['N', 'W', 'S']
    """
    if not trick.plays:
        return []
    order = turn_from(trick.plays[0].seat)
    return sorted(trick.plays, key=lambda p: order.index(p.seat))


def _bottom(
    tricks: list[TrackedTrick], loose: Sequence[AnyCard], dealer: str, size: int, hand_size: int | None = None
) -> list[AnyCard] | None:
    """The bottom, if the end of the film shows it: once every hand is played out (``hand_size``),
    the cards on the table; else, after at least one complete trick, either a
    trailing incomplete "trick" whose plays all settled in the same reading (the bottom is turned up
    at once, and a row of it may reach a neighbour's zone), that includes the dealer's zone, and
    whose cards with the loose ones number the bottom's size; or loose cards of that number."""
    if not any(t.complete for t in tricks):
        return None
    last = tricks[-1]
    if not last.complete and hand_size is not None and _rounds(tricks[:-1]) >= hand_size:
        # every hand is played out (each cleared trick took the lead's length from every seat,
        # seen or not): whatever lies on the table now is the bottom, a card not seen in it ??
        return _fit([c for p in last.plays for c in p.cards] + list(loose), size, pad=True)
    if not last.complete and len({p.first_frame for p in last.plays}) == 1:
        cards = [c for p in last.plays for c in p.cards] + list(loose)
        if any(p.seat == dealer for p in last.plays):
            return _fit(cards, size)
    if last.complete:
        return _fit(list(loose), size)
    return None


def _fit_bottom(
    cards: list[AnyCard], tricks: Sequence[_Trick], size: int, decks: int
) -> list[AnyCard] | None:
    """The bottom from more named cards than it holds: the cards the plays already hold as often as
    there are decks go first (a card read twice, a neighbour's index), then :func:`_fit`.

    >>> from engine.cards import parse_any
    >>> plays = [[("S", [parse_any("5S")]), ("E", [parse_any("5S")])]]
    >>> format_any(_fit_bottom(list(in_order(["3S", "5S", "4C"])), plays, 2, 2) or [])
    ['3S', '4C']
    """
    held = Counter(c for t in tricks for _, cs in t for c in cs if _named(c))
    kept: list[AnyCard] = []
    for card in cards:
        if _named(card) and held[card] >= decks:
            continue
        kept.append(card)
        held[card] += 1
    return _fit(kept, size, pad=True) or _fit(cards, size, pad=True)


def _rounds(tricks: Sequence[TrackedTrick]) -> int:
    """Cards each seat has played in the cleared ``tricks``: every seat plays the lead's length (the
    length most seen in each trick, a tie the longer), whether the camera saw its play or not."""
    total = 0
    for t in tricks:
        if t.complete and t.plays:
            total += _lead_length({p.seat: list(p.cards) for p in t.plays}, "")
    return total


def _fit(cards: list[AnyCard], size: int, *, pad: bool = False) -> list[AnyCard] | None:
    """``cards`` as a bottom of ``size`` cards (sorted by their text): as many, or more only by
    unknown ones (an index the reader could not name beside a card it did: the same card's other
    corner), which are dropped; with ``pad``, fewer (at least half) filled up with ``??``.

    >>> from engine.cards import parse_any
    >>> fit = lambda cards, size, pad=False: (r := _fit([parse_any(c) for c in cards], size, pad=pad)) and format_any(r)
    >>> fit(["3S", "??", "4C"], 2), fit(["3S", "4C", "5C"], 2), fit(["3S"], 2), fit(["3S"], 2, pad=True)
    (['3S', '4C'], None, None, ['3S', '??'])
    """
    named = [c for c in cards if _named(c)]
    if len(cards) == size:
        return list(in_order(cards))
    if pad and 2 * len(cards) >= size and len(cards) < size:
        return [*in_order(cards), *[UNKNOWN] * (size - len(cards))]
    if len(cards) > size and len(named) <= size:
        return list(in_order(named + [c for c in cards if not _named(c)][: size - len(named)]))
    return None


def hands_played_out(tricks: Sequence[TrackedTrick], rules_id: str) -> bool:
    """Whether every seat has played a full hand over the cleared ``tricks`` (each takes the lead's
    length from every seat, seen or not: :func:`_rounds`): a finished log needs it, so until then
    there is no finished deal to look for. Raises ``UnknownRuleSetError``.

    >>> p = lambda seat, n=25: TrackedPlay(seat, ("3C",) * n, 1, 1, 0)
    >>> hands_played_out([TrackedTrick(tuple(p(s) for s in "SEN"), True)], "national-2deck")
    True
    >>> hands_played_out([TrackedTrick(tuple(p(s, 24) for s in "SENW"), True)], "national-2deck")
    False
    """
    return _rounds(tricks) >= get_rule_set(rules_id).hand_size


def _lead_length(seen: Mapping[str, Sequence[object]], leader: str) -> int:
    """The lead's length: the leader's play if seen, unless at least two followers agree on a longer
    one (a card of the lead the camera missed is likelier than two follows read long), or all three
    followers were seen and agree on a shorter one (a card read into the lead is likelier than
    three follows each missing one); else the length most seen (a tie: the longer).

    >>> _lead_length({"S": ["BJ"], "E": ["4C", "8C"], "N": ["5S", "QS"], "W": ["3S"]}, "S")
    2
    >>> _lead_length({"S": ["BJ"], "E": ["4C", "8C"], "N": ["5S"], "W": ["3S"]}, "S")
    1
    >>> _lead_length({"S": ["7H", "KH"], "E": ["2C"], "N": ["6S"], "W": ["10D"]}, "S")
    1
    """
    if leader in seen:
        size = len(seen[leader])
        longer = Counter(len(c) for s, c in seen.items() if s != leader and len(c) > size)
        agreed = [n for n, k in longer.items() if k >= 2]
        follows = {len(c) for s, c in seen.items() if s != leader}
        if not agreed and len(seen) == 4 and len(follows) == 1 and 0 < min(follows) < size:
            return min(follows)
        return max(agreed) if agreed else size
    lengths = Counter(len(c) for c in seen.values())
    return max(lengths.items(), key=lambda kv: (kv[1], kv[0]))[0]


def _winners(head: DealLog, tricks: Sequence[_Trick]) -> list[SeatName]:
    """Who may have taken the last of ``tricks`` as the engine reads the log so far: one seat, the
    seats the unknown cards leave possible, or none (the engine refuses the log)."""
    return list(_last_winners(replace(head, tricks=_typed(tricks), finished=False)))


@lru_cache(maxsize=1024)
def _last_winners(log: DealLog) -> tuple[SeatName, ...]:
    """:func:`_winners` of a log (kept: a deal is decoded again at every trick and for every place
    of a misread card, and its first tricks come out the same each time; the engine is pure)."""
    try:
        result = evaluate(log.checked())
    except (DealLogError, ValueError):
        return ()
    last = result.tricks[-1]
    if last.winner is not None:
        return (last.winner.letter,)
    return tuple(s.letter for s in last.winner_possible)


def _likeliest_leader(candidates: Sequence[SeatName], settled: Sequence[SeatName]) -> SeatName:
    """Of the seats that may lead, the one whose turn order agrees best with the order the plays
    settled in (pairs in the right order; a tie: the seat that settled first, then seat order)."""

    def agree(leader: SeatName) -> tuple[int, bool]:
        pos = {seat: k for k, seat in enumerate(turn_from(leader))}
        pairs = sum(pos[a] < pos[b] for i, a in enumerate(settled) for b in settled[i + 1 :])
        return pairs, bool(settled) and settled[0] == leader

    return max(candidates, key=agree)


def decode_tricks(
    tricks: Sequence[TrackedTrick],
    head: DealLog,
    doubtful: set[int] | None = None,
    swaps: list[tuple[AnyCard, int, int, int]] | None = None,
    leads: Mapping[int, SeatName] | None = None,
    guesses: list[tuple[int, list[SeatName]]] | None = None,
    doubtful_plays: set[tuple[int, str]] | None = None,
) -> list[_Trick]:
    """The log's tricks from the tracker's, with what the rules say of what the camera missed. The
    leader is known (the dealer leads the first trick, each trick's winner the next, as the engine
    reads the log so far) and leads, whatever play settled first; otherwise the play seen first
    leads. Every seat plays in every cleared trick, so a seat the camera never saw there played
    cards it could not name (``??``, the lead's length), and a play read short of the lead's length
    is filled up with ``??`` (the tracker's prior: the rules make a follow as long as the lead; a
    real short play is rarer than a card the camera missed). In a trick still on the table, a seat
    skipped before one seen played unseen cards too. The engine then settles what it can.

    ``doubtful`` collects the tricks (1-based) whose reading the decoding had to question: the leader
    was a guess (the engine refused the log so far, or left the winner open and the camera did not
    see one of the possible winners lay its play first, alone), a play other than the
    leader's settled first (then the trick before is doubtful too: a misread there moves the lead),
    or cards were added, dropped or made unknown (a card read too often: every trick it was read in,
    since which reading was wrong is open). No alert may rest on them (:mod:`edge_app.events`).
    ``doubtful_plays`` collects, of those, the plays (trick, seat) whose own cards were added, dropped
    or made unknown.
    ``swaps`` collects each card the inventory made unknown and where (card, trick, play, position:
    0-based), for :func:`_place_misreads`. ``guesses`` collects each trick (1-based) whose leader was
    picked among several seats that may have won the trick before, with the seats not picked;
    ``leads`` gives such a trick's leader instead (one of those seats), for :func:`build_deal` to
    try when the engine refuses the guess once the whole deal is read.

    >>> from vision.tracking import UNKNOWN, Cards, TrackedPlay, TrackedTrick, in_order
    >>> p = lambda seat, *cards: TrackedPlay(seat, tuple(cards), 3, 3, 0)
    >>> from engine.deal_log import parse_deal_log
    >>> head = parse_deal_log({"rules": "national-2deck", "level": "5", "trump": "H", "dealer": "S"})
    >>> _listed(decode_tricks([TrackedTrick((p("S", "AS", "AS"), p("E", "3S"), p("W", "4S", "4S")), True)], head))
    [[('S', ['AS', 'AS']), ('E', ['3S', '??']), ('N', ['??', '??']), ('W', ['4S', '4S'])]]
    """
    out: list[_Trick] = []
    doubt: set[int] = set() if doubtful is None else doubtful
    plays_doubt: set[tuple[int, str]] = set() if doubtful_plays is None else doubtful_plays
    leaders: list[SeatName] = [head.dealer.letter]
    decks = head.rules.decks
    agreement: dict[tuple[int, str], float] = {}
    counts: Counter[AnyCard] = Counter()
    # every named card as often as the whole deal's readings hold it: a card read more often than
    # there are decks is the likeliest extra card of a follow read longer than its lead
    totals: Counter[AnyCard] = Counter(c for t in tricks for p in t.plays for c in p.cards if _named(c))
    for t in tricks:
        seen: dict[str, list[AnyCard]] = {p.seat: within_decks(p.cards, decks) for p in in_turn(t)}
        beyond = {p.seat: p.beyond for p in t.plays}
        if not seen:
            continue
        first = in_turn(t)[0].seat
        settled = [p.seat for p in t.plays]
        number = len(out) + 1
        for p in t.plays:
            if len(seen[p.seat]) < len(p.cards):  # a card read more often than the decks hold it
                doubt.add(number)
                plays_doubt.add((number, p.seat))
        leader: SeatName = _likeliest_leader(leaders, settled) if leaders else first
        if leads is not None and leads.get(number) in leaders:
            leader = leads[number]
        if leader not in seen and not (t.complete and len(seen) < 4):
            leader = first
        if guesses is not None and len(leaders) > 1:
            guesses.append((number, [s for s in leaders if s != leader]))
        # the winner before was left open: the leader is a guess unless it is one of the seats that may
        # have won and its play settled alone, before any other
        alone = len(t.plays) == 1 or t.plays[0].first_frame < t.plays[1].first_frame
        if len(leaders) != 1 and not (leader in leaders and leader == settled[0] and alone):
            doubt.add(number)
        if leader != settled[0]:
            doubt.update((number, number - 1))
        size = _lead_length(seen, leader)
        order = turn_from(leader)
        last_seen = max(k for k, seat in enumerate(order) if seat in seen)
        plays: _Trick = []
        for k, seat in enumerate(order):
            if not t.complete and k > last_seen:
                break
            cards = seen.get(seat, [])
            if t.complete or seat not in seen:  # a cleared trick's plays, or a gap: the lead's length
                if len(cards) < size:
                    doubt.add(number)
                    plays_doubt.add((number, seat))
                known = beyond.get(seat, ())[: max(0, size - len(cards))]  # what readings knew of them
                cards = cards + list(known) + [UNKNOWN] * max(0, size - len(cards) - len(known))
            plays.append((seat, cards))
        for p in t.plays:
            agreement[(len(out), p.seat)] = p.agreement
        out.append(plays)
        changed = _fit_inventory(out, size, decks, counts, agreement, totals, swaps)
        doubt.update(trick for trick, _ in changed)
        plays_doubt.update(changed)
        leaders = _winners(head, out) if t.complete else []
    return out


def within_decks(cards: Sequence[AnyCard], decks: int) -> list[AnyCard]:
    """``cards`` with no card more often than ``decks`` copies (a play read with one card's two
    corners as two cards holds a copy no deck has; the extra copies go).

    >>> from engine.cards import parse_any
    >>> format_any(within_decks([parse_any(c) for c in ("2D", "SJ", "SJ")], 1))
    ['2D', 'SJ']
    >>> format_any(within_decks([parse_any(c) for c in ("SJ", "SJ", "??", "??")], 2))
    ['SJ', 'SJ', '??', '??']
    """
    kept: Counter[AnyCard] = Counter()
    out = []
    for c in cards:
        if not _named(c) or kept[c] < decks:
            kept[c] += 1
            out.append(c)
    return out


def _check(log: DealLog) -> tuple[dict[str, Any] | None, str | None, int | None]:
    """:func:`_score`, and the trick (1-based) the engine refuses ``log`` at for its leader
    (:class:`LeaderError`: the seat cannot have won the trick before), else None."""
    try:
        return evaluate(log.checked()).to_json(), None, None
    except LeaderError as exc:
        return None, str(exc), exc.trick
    except (DealLogError, ValueError) as exc:
        return None, str(exc), None


def _score(log: DealLog) -> tuple[dict[str, Any] | None, str | None]:
    """The engine's score of ``log`` (the ``score`` output) and None, or None and its reason for
    refusing the log (reading or scoring it)."""
    result, problem, _ = _check(log)
    return result, problem


#: The most places of a card read too often that :func:`_place_misreads` tries, and the most
#: other readings each repair of :func:`build_deal` tries.
REPAIR_TRIES = 8


#: How many more proven violations every other place of a card read too often must imply, for the
#: rules to settle which reading was the misread one (:func:`_place_misreads`): a second revoke
#: or failed throw by the players is far rarer than a misread card.
SETTLE_MARGIN = 2


def _marked_unknown(tricks: Sequence[TrackedTrick], place: tuple[int, int, int]) -> list[TrackedTrick]:
    """The tracker's tricks with the card at ``place`` (trick, play, card: 0-based) read ``??``."""
    t, i, j = place
    play = tricks[t].plays[i]
    cards = (*play.cards[:j], UNKNOWN, *play.cards[j + 1 :])
    plays = (*tricks[t].plays[:i], replace(play, cards=cards), *tricks[t].plays[i + 1 :])
    return [*tricks[:t], replace(tricks[t], plays=plays), *tricks[t + 1 :]]


def _place_misreads(
    tricks: Sequence[TrackedTrick],
    swaps: Sequence[tuple[AnyCard, int, int, int]],
    decode: Callable[[list[TrackedTrick]], tuple[DealLog, _Doubt, list[tuple[AnyCard, int, int, int]]]],
) -> tuple[DealLog, _Doubt, dict[str, Any]] | None:
    """Where the cards read more often than the decks hold them were misread. For each such card
    (``swaps``, the inventory's), the deal is decoded with each of its places read ``??`` in turn
    and scored: the place whose log the engine accepts with the fewest proven violations is the
    misread one (on a tie, the play whose readings agreed least, the later one: the inventory's own
    choice), for a misread card is far likelier than a player breaking the rules. It is then read
    ``??`` as if the camera had said so. The rules *settle* it when that log has at least
    :data:`SETTLE_MARGIN` fewer violations than every other place's log the engine accepts (or no
    other is accepted); otherwise the tricks of all the card's places stay doubtful, since which
    reading was wrong is open, and no alert rests on them.

    Returns the log so decoded, its doubt (:class:`_Doubt`) and its score; None when no place of
    any card makes a log the engine accepts, or the card has more than :data:`REPAIR_TRIES` places
    (left to the inventory's choice). ``decode`` is :func:`build_deal`'s (tracked tricks → log,
    doubtful, swaps)."""
    marked = list(tricks)
    open_plays: set[tuple[int, str]] = set()
    placed: tuple[DealLog, _Doubt, dict[str, Any]] | None = None  # ``marked`` decoded and scored
    for card in dict.fromkeys(c for c, *_ in swaps):
        places = [
            (t, i, j)
            for t, trick in enumerate(marked)
            for i, play in enumerate(trick.plays)
            for j, c in enumerate(play.cards)
            if c == card
        ]
        if len(places) > REPAIR_TRIES:
            continue
        scored: list[tuple[int, tuple[float, int, int, int], int]] = []
        trials: list[tuple[list[TrackedTrick], tuple[DealLog, _Doubt, dict[str, Any]]]] = []
        for t, i, j in places:
            trial = _marked_unknown(marked, (t, i, j))
            log, doubtful, _ = decode(trial)
            result, problem = _score(log)
            if result is not None and problem is None:
                agreement = marked[t].plays[i].agreement
                scored.append((len(result["violations"]), (agreement, -t, -i, -j), len(trials)))
                trials.append((trial, (log, doubtful, result)))
        if not scored:
            continue
        scored.sort()
        marked, placed = trials[scored[0][2]]
        if len(scored) > 1 and scored[1][0] - scored[0][0] < SETTLE_MARGIN:
            open_plays.update((t + 1, marked[t].plays[i].seat) for t, i, _ in places)
    if placed is None:
        return None
    log, doubtful, result = placed
    return log, doubtful.more(plays=open_plays), result


def _fit_inventory(
    out: list[_Trick],
    size: int,
    decks: int,
    counts: Counter[AnyCard],
    agreement: dict[tuple[int, str], float],
    totals: Counter[AnyCard] | None = None,
    swaps: list[tuple[AnyCard, int, int, int]] | None = None,
) -> set[tuple[int, str]]:
    """Make the newest trick fit the deck inventory: a play longer than the lead's length (a follow,
    or a lead the follows all read shorter) drops an unknown card, else a card the log already holds
    ``decks`` times, else one the whole deal's readings (``totals``) hold more often than that (a lead
    none of these fits is left all unknown); then a card named more often than there are decks loses its
    least sure occurrence (the play whose readings agreed least, the later on a tie) to ``??``.
    Returns the plays (trick 1-based, seat) it changed, and for a card made unknown every play holding
    it (which one was misread is open)."""
    changed: set[tuple[int, str]] = set()
    newest = out[-1]
    for k, play in enumerate(newest):
        while len(play[1]) > size:
            extra = (
                next((c for c in play[1] if not _named(c)), None)
                or next((c for c in play[1] if counts[c] + play[1].count(c) > decks), None)
                or next((c for c in play[1] if totals is not None and totals[c] > decks), None)
            )
            if extra is None:
                if k == 0:  # a lead read longer than every follow: which card was not there is open
                    play[1][:] = [UNKNOWN] * size
                    changed.add((len(out), play[0]))
                break
            play[1].remove(extra)
            changed.add((len(out), play[0]))
    counts.update(c for _, cards in newest for c in cards if _named(c))
    for card in [c for c, n in counts.items() if n > decks]:
        while counts[card] > decks:
            places = [
                (agreement.get((k, seat), 0.0), -k, -i, -j, k, i, j)
                for k, trick in enumerate(out)
                for i, (seat, cards) in enumerate(trick)
                for j, c in enumerate(cards)
                if c == card
            ]
            *_, k, i, j = min(places)
            changed.update((place[4] + 1, out[place[4]][place[5]][0]) for place in places)  # which: open
            out[k][i][1][j] = UNKNOWN
            if swaps is not None:
                swaps.append((card, k, i, j))
            counts[card] -= 1
            lead, cards = len(out[k][0][1]), out[k][i][1]
            if i and len(cards) > lead:  # a follow read long: the card now unknown was the extra one
                cards.remove(UNKNOWN)
    return changed


def _short_by(log: DealLog) -> int:
    """How many cards every hand of a finished ``log`` lacks, when all four lack the same number
    (a whole trick the camera never saw), else 0.

    >>> from engine.deal_log import parse_deal_log
    >>> log = parse_deal_log({"rules": "national-2deck", "level": "5", "trump": "H", "dealer": "S",
    ...        "tricks": [{"plays": [["S", ["AH"]], ["E", ["3H"]], ["N", ["2H"]], ["W", ["QH"]]]}]})
    >>> _short_by(log)
    24
    """
    played = Counter({s: 0 for s in TURN})
    for trick in log.tricks:
        for play in trick.plays:
            played[play.seat.letter] += len(play.cards)
    short = {log.rules.hand_size - n for n in played.values()}
    return short.pop() if len(short) == 1 and 0 < min(short) < log.rules.hand_size else 0


def unseen_trick_places(tricks: Sequence[TrackedTrick]) -> list[int]:
    """Where a trick the camera never saw most likely lay, best first: the places between the
    tracker's tricks (0: before the first, ``len(tricks)``: after the last), ordered by the time
    between the first plays of the tricks either side, longest first (a missed trick leaves about
    one trick's time more there); the ends last, the last place before the first.

    >>> from vision.tracking import UNKNOWN, Cards, TrackedPlay, TrackedTrick, in_order
    >>> t = lambda frame: TrackedTrick((TrackedPlay("S", ("3H",), 3, 3, frame),), True)
    >>> unseen_trick_places([t(0), t(40), t(120), t(160)])
    [2, 1, 3, 4, 0]
    """
    starts = [min((p.first_frame for p in t.plays), default=0) for t in tricks]
    inner = sorted(range(1, len(tricks)), key=lambda k: (-(starts[k] - starts[k - 1]), k))
    return [*inner, len(tricks), 0] if tricks else [0]


def _unseen_trick(cards: int, tricks: Sequence[TrackedTrick], place: int) -> TrackedTrick:
    """A cleared trick of ``cards`` unknown cards from every seat, put in at ``place`` (its plays
    never read: no agreement, the first frame the trick before's last)."""
    frame = max((p.first_frame for t in tricks[:place] for p in t.plays), default=0)
    return TrackedTrick(tuple(TrackedPlay(s, (UNKNOWN,) * cards, 0, 0, frame) for s in TURN), True)


def build_deal(
    tricks: Sequence[TrackedTrick], loose: Sequence[AnyCard | str], info: DealInfo, *, so_far: bool = False
) -> RecognisedDeal:
    """Assemble the deal log (see the module docstring); ``so_far``: the deal while the source goes
    on, never ``finished``. Text given for a loose card is parsed. Raises ``UnknownRuleSetError`` (a
    ``ValueError``) for a rule set id that is not one of the engine's."""
    on_table: list[AnyCard] = [parse_any(c) if isinstance(c, str) else c for c in loose]
    rules = get_rule_set(info.rules)
    if info.level is None or info.trump is None:
        raise ValueError("build_deal needs the level and trump (DealInfo with None fills them in first)")
    tricks = list(tricks)
    post: list[AnyCard] = []  # cards of "tricks" cleared after every hand was played out: the bottom
    if not so_far:
        n = next((k for k in range(1, len(tricks) + 1) if _rounds(tricks[:k]) >= rules.hand_size), None)
        if n is not None and n < len(tricks):
            post = [c for t in tricks[n:] for p in t.plays for c in p.cards]
            tricks, on_table = tricks[:n], [*post, *on_table]
    dealer = info.dealer or (tricks[0].plays[0].seat if tricks and tricks[0].plays else "S")
    bottom = _bottom(tricks, on_table, dealer, rules.bottom_size, rules.hand_size)
    hands_done = _rounds([t for t in tricks if t.complete]) >= rules.hand_size
    after: list[AnyCard] = list(on_table) if post else []  # on the on_table after the last hand: the bottom
    if tricks and not tricks[-1].complete and (bottom is not None or hands_done):
        after = [c for p in tricks.pop().plays for c in p.cards] + list(on_table)  # never a play
    if info.trump not in (*SUITS, "NT"):
        raise ValueError(f"trump: unknown trump {info.trump!r} (S, H, D, C or NT)")
    head = DealLog(
        rules, parse_rank(info.level), None if info.trump == "NT" else info.trump, parse_seat(dealer), ()
    )

    def decode(
        tracked: list[TrackedTrick],
        leads: Mapping[int, SeatName] | None = None,
        guesses: list[tuple[int, list[SeatName]]] | None = None,
    ) -> tuple[DealLog, _Doubt, list[tuple[AnyCard, int, int, int]]]:
        doubtful: set[int] = set()
        doubtful_plays: set[tuple[int, str]] = set()
        swaps: list[tuple[AnyCard, int, int, int]] = []
        decoded = decode_tricks(tracked, head, doubtful, swaps, leads, guesses, doubtful_plays)
        cards = bottom
        if bottom is None and hands_done and after:
            cards = _fit_bottom(after, decoded, rules.bottom_size, rules.decks)
        finished = not so_far and bool(tracked) and (cards is not None or hands_done) and tracked[-1].complete
        log = replace(head, tricks=_typed(decoded), bottom=_cards(cards), finished=finished)
        return log, _Doubt(frozenset(doubtful), frozenset(doubtful_plays)), swaps

    guessed: list[tuple[int, list[SeatName]]] = []  # the leaders the tracker's own reading guessed
    log, doubtful, swaps = decode(tricks, guesses=guessed)
    placed = _place_misreads(tricks, swaps, decode) if swaps else None
    result: dict[str, Any] | None
    problem: str | None
    named: int | None
    if placed is not None:
        log, doubtful, result = placed
        problem = named = None
    else:
        result, problem, named = _check(log)
    if problem is not None:
        # a leader picked among the seats that may have won the trick before by the order the
        # plays settled in, which the whole deal's inventory then rules out: first the trick the
        # engine names, its other seats, following on to the next trick it names
        leads: dict[int, SeatName] = {}
        current_guessed, tries_left = guessed, REPAIR_TRIES
        while named is not None and tries_left > 0:
            options = [seat for n, others in current_guessed if n == named for seat in others]
            step: tuple[int, list[tuple[int, list[SeatName]]], SeatName] | None = None
            for seat in options[:tries_left]:
                tries_left -= 1
                trial_guessed: list[tuple[int, list[SeatName]]] = []
                trial, trial_doubtful, _ = decode(tricks, {**leads, named: seat}, trial_guessed)
                trial_result, trial_problem, later = _check(trial)
                if trial_problem is None:
                    leads[named] = seat
                    log, result, problem = trial, trial_result, None
                    doubtful = trial_doubtful.more({n for k in leads for n in (k - 1, k)})
                    break
                if step is None and later is not None and later > named:
                    step = (later, trial_guessed, seat)
            if problem is None or step is None:
                break
            leads[named] = step[2]
            named, current_guessed = step[0], step[1]
    if problem is not None:
        # else each guess alone, the latest first
        tries = [(n, seat) for n, others in reversed(guessed) for seat in others][:REPAIR_TRIES]
        for number, seat in tries:
            trial, trial_doubtful, _ = decode(tricks, {number: seat})
            trial_result, trial_problem = _score(trial)
            if trial_problem is None:
                log, result, problem = trial, trial_result, None
                doubtful = trial_doubtful.more({number - 1, number})
                break
    unseen: tuple[int, ...] = ()
    if problem is not None and log.finished:
        short = _short_by(log)
        longest = max((len(p.cards) for t in tricks for p in t.plays), default=0)
        if 0 < short <= longest:  # a whole trick unseen, no longer than a play the camera did see
            for place in unseen_trick_places(tricks)[:REPAIR_TRIES]:
                trial_tricks = [*tricks[:place], _unseen_trick(short, tricks, place), *tricks[place:]]
                trial, trial_doubtful, _ = decode(trial_tricks)
                trial_result, trial_problem = _score(trial)
                if trial_problem is None:
                    log, result, problem = trial, trial_result, None
                    doubtful = trial_doubtful.more({place, place + 1, place + 2})
                    tricks, unseen = trial_tricks, (place + 1,)
                    break
    agreement = tuple(
        (i + 1, p.seat, round(p.agreement, 3))
        for i, t in enumerate(tricks)
        if i + 1 not in unseen
        for p in t.plays
    )
    deal = RecognisedDeal(
        log, problem, agreement, doubtful=doubtful.tricks, doubtful_plays=doubtful.plays, unseen=unseen
    )
    deal.__dict__["_scored"] = (result, problem)  # the score the log was checked with, kept
    return deal
