"""Scoring a log with unknown cards (``deal-log.md``, "Unknown cards").

An unknown card is any card consistent with everything else in the log: what is written of it
(``J?``, ``?H``, ``?J``, ``??``), the deck inventory (:mod:`engine.inventory`: each card exactly
``decks`` times over a finished deal, at most that often before), and the order of leaders (the
leader of trick k + 1 won trick k). What every completion agrees on is printed as known; the rest
is ``None`` with bounds beside it. The bounds come from each trick's completions taken one trick at
a time (the inventory's coupling between tricks is not followed further), so they always contain
the true value and may be wider than the tightest ones. A trick with more than :data:`MAX_READINGS`
completions is bounded card by card.

Violations are those the named cards prove for every completion (:mod:`engine.evidence`); an
unknown card, settled by the inventory or not, is never their proof.

>>> from engine.deal_log import parse_deal_log
>>> log = parse_deal_log({"rules": "national-2deck", "level": "2", "trump": "S", "dealer": "S",
...     "tricks": [{"plays": [["S", ["AH"]], ["E", ["??"]], ["N", ["3H"]], ["W", ["?H"]]]}]})
>>> r = evaluate_open(log).to_json()
>>> r["tricks"], r["captured"], r["captured_range"], r["unknown"]
([{'trick': 1, 'leader': 'S', 'winner': None, 'winner_possible': ['S', 'E', 'W'], 'points': None, 'points_range': [0, 20]}], None, [0, 20], 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from operator import itemgetter
from typing import Final, cast

from engine.cards import ALL_CARDS, CARD_POINTS, N_CODES, Card, UnknownCard
from engine.context import TrumpContext, trump_context
from engine.deal_log import DealLog, DealLogError, LeaderError, Play, Where
from engine.evidence import TrickView, find_violations
from engine.inventory import options
from engine.results import (
    BottomResult,
    DealResult,
    Outcome,
    Range,
    Resolved,
    TrickResult,
    penalty_of,
    rulings_applied,
)
from engine.scoring import bottom_multiplier, outcome
from engine.seats import Seat
from engine.trick import InvalidSplitError, Lead, read_lead, winning_play

#: Completions of one trick read one by one at most; beyond, bounds come card by card.
MAX_READINGS: Final = 4096
#: Every multiplier a bottom can get, for a last trick too open to read.
_ANY_MULTIPLIER: Final = tuple(range(0, 65))


@dataclass(frozen=True, slots=True)
class _Case:
    """One way the last trick can go: who takes it, its points, the bottom's multiplier."""

    winner: Seat
    points: int
    multiplier: int


def _span(values: Sequence[int]) -> Range:
    return (min(values), max(values))


def _known(bounds: Range) -> int | None:
    return bounds[0] if bounds[0] == bounds[1] else None


def _left(log: DealLog) -> dict[int, int]:
    """The copies of each card code the named cards leave over (codes with none left out)."""
    named = [0] * N_CODES
    for trick in log.tricks:
        for play in trick.plays:
            for c in play.cards:
                if isinstance(c, Card):
                    named[c.code] += 1
    for c in log.bottom or ():
        if isinstance(c, Card):
            named[c.code] += 1
    decks = log.rules.decks
    return {code: decks - n for code, n in enumerate(named) if n != decks}


class _Open:
    """The log's unknown cards and the codes each may be."""

    def __init__(self, log: DealLog) -> None:
        self.log = log
        inventory = log.inventory
        slots = log.unknown_slots
        capacity = _left(log) if inventory is None else inventory.left
        found: Sequence[frozenset[int]] | None = None if inventory is None else inventory.options
        if found is None:
            found = options([u.candidates for _, u in slots], capacity, exact=log.finished)
        if found is None:
            written = " ".join(str(u) for _, u in slots[:12])
            raise DealLogError(f"the unknown cards ({written}) cannot all be cards the log leaves over")
        self.where: dict[Where, frozenset[int]] = {w: o for (w, _), o in zip(slots, found, strict=True)}
        #: The unknown cards of each trick (0-based) and of the bottom (``"bottom"``), in log order.
        self.within: dict[int | str, list[Where]] = {}
        for w in self.where:
            self.within.setdefault(w[0], []).append(w)
        # A finished deal's unknown cards are exactly the cards its named ones leave over, so the
        # points they hold together are known, and a group of them holds the total less the rest.
        self.total: int | None = None
        if log.finished:
            self.total = sum(CARD_POINTS[code] * n for code, n in capacity.items())
        self.low = {w: min([CARD_POINTS[c] for c in codes]) for w, codes in self.where.items()}
        self.high = {w: max([CARD_POINTS[c] for c in codes]) for w, codes in self.where.items()}
        self.low_all, self.high_all = sum(self.low.values()), sum(self.high.values())

    def bound(self, group: Sequence[Where], named: int, bounds: Range, where: str = "") -> Range:
        """``bounds`` of the points a trick or the bottom holds (``named`` from its named cards, the
        rest from its unknown ones, the ``group``), narrowed by the total the unknown cards of a
        finished deal hold: the group holds that total less what the others can hold. Raises
        :class:`DealLogError` when no points are left: what ``where`` needs of its unknown cards
        (``bounds``) and what the deal leaves over for them cannot both hold (a misread card)."""
        if self.total is None:
            return bounds
        lo_in = sum([self.low[w] for w in group])
        hi_in = sum([self.high[w] for w in group])
        lo = max(bounds[0], named + self.total - (self.high_all - hi_in))
        hi = min(bounds[1], named + self.total - (self.low_all - lo_in))
        if lo > hi:
            raise DealLogError(
                f"{where or 'the log'}: the unknown cards cannot hold both the {bounds[0]}–{bounds[1]} points "
                f"it needs and what the cards the deal leaves over hold"
            )
        return (lo, hi)

    def resolved(self) -> tuple[Resolved, ...]:
        out = []
        for where, codes in self.where.items():
            if len(codes) != 1:
                continue
            code = next(iter(codes))
            if where[0] == "bottom":
                out.append(Resolved(None, None, int(where[1]), ALL_CARDS[code]))
            else:
                t, p, i = where  # type: ignore[misc]
                out.append(Resolved(t + 1, self.log.tricks[t].plays[p].seat, i, ALL_CARDS[code]))
        return tuple(out)


_Cards = tuple[Card, ...]
_Seen = tuple[tuple[Seat, _Cards], ...]


class _TrickCards:
    """A trick with unknown cards as the model reads it: each play's named cards, the codes each
    card of the plays with unknown cards may be (``flat``, play by play), and the lead of every
    completion when the lead has no unknown card."""

    __slots__ = (
        "trick",
        "group",
        "open_plays",
        "named",
        "maybe",
        "flat",
        "named_points",
        "fixed",
        "lead",
        "leads",
    )

    def __init__(self, log: DealLog, t: int, state: _Open, ctx: TrumpContext) -> None:
        trick = self.trick = log.tricks[t]
        self.group = state.within[t]
        plays = trick.plays
        where = state.where
        #: The plays with unknown cards, and how many cards each holds.
        self.open_plays = [(p, len(plays[p].cards)) for p in dict.fromkeys([w[1] for w in self.group])]
        named = cast("list[_Cards]", [play.cards for play in plays])  # the open ones below
        cls_of = ctx.cls
        #: Per play, the suit classes each of its unknown cards could be.
        maybe: list[tuple[frozenset[int], ...]] = [()] * len(plays)
        flat: list[tuple[int, ...]] = []
        open_points = 0  # of the named cards of the plays with unknown cards
        for p, _ in self.open_plays:
            cards = plays[p].cards
            named[p] = mine = tuple([c for c in cards if isinstance(c, Card)])
            open_points += sum([CARD_POINTS[c.code] for c in mine])
            classes = []
            for i, c in enumerate(cards):
                if isinstance(c, Card):
                    flat.append((c.code,))
                else:
                    codes = where[(t, p, i)]
                    classes.append(frozenset([cls_of[code] for code in codes]))
                    flat.append(tuple(sorted(codes)))
            maybe[p] = tuple(classes)
        self.named, self.maybe, self.flat = named, tuple(maybe), flat
        self.named_points = sum([CARD_POINTS[c.code] for cards in named for c in cards])
        #: The points of the plays without unknown cards.
        self.fixed = self.named_points - open_points
        self.lead: Lead | None = None
        if self.open_plays[0][0] != 0:
            self.lead = _lead(plays[0], named[0], ctx)
        #: A lead with unknown cards as read for each completion of it, by its codes.
        self.leads: dict[tuple[int, ...], Lead] = {}

    def points_bounds(self) -> Range:
        """Bounds of the trick's points, card by card."""
        lo = sum([min([CARD_POINTS[c] for c in card]) for card in self.flat])
        hi = sum([max([CARD_POINTS[c] for c in card]) for card in self.flat])
        return (self.fixed + lo, self.fixed + hi)

    def readings(self) -> int:
        n = 1
        for card in self.flat:
            n *= len(card)
        return n

    def completions(self) -> list[tuple[int, tuple[int, ...]]]:
        """Every completion of the trick: its points and the codes of the plays with unknown cards."""
        fixed = self.fixed
        return [(fixed + sum([CARD_POINTS[c] for c in combo]), combo) for combo in product(*self.flat)]

    def read(self, combo: tuple[int, ...], ctx: TrumpContext) -> tuple[list[_Cards], Lead]:
        """A completion's cards play by play, and its lead."""
        out = list(self.named)
        i = 0
        for p, n in self.open_plays:
            out[p] = tuple([ALL_CARDS[c] for c in combo[i : i + n]])
            i += n
        if self.lead is not None:
            return out, self.lead
        key = combo[: len(out[0])]  # the lead is the first play with unknown cards
        lead = self.leads.get(key)
        if lead is None:
            lead = self.leads[key] = _lead(self.trick.plays[0], out[0], ctx)
        return out, lead


def _lead(play: Play, cards: tuple[Card, ...], ctx: TrumpContext) -> Lead:
    """The lead as read for one completion: its declared split applies when every card of it is
    named, else the canonical reading."""
    split = None
    if play.split is not None and all(isinstance(c, Card) for part in play.split for c in part):
        split = tuple(tuple(c for c in part if isinstance(c, Card)) for part in play.split)
    try:
        return read_lead(cards, split, ctx)
    except InvalidSplitError:
        return read_lead(cards, None, ctx)


def _named_points(cards: Sequence[object]) -> int:
    """Points of the named cards among ``cards`` (unknown ones, settled or not, left out)."""
    return sum(c.points for c in cards if isinstance(c, Card))


def _points_bounds(choices: list[list[tuple[int, ...]]]) -> Range:
    lo = sum(min(CARD_POINTS[c] for c in card) for play in choices for card in play)
    hi = sum(max(CARD_POINTS[c] for c in card) for play in choices for card in play)
    return (lo, hi)


def _view(tc: _TrickCards, ctx: TrumpContext) -> TrickView:
    """What the evidence model may use of a trick: named cards, and the classes each unknown card
    could be (settled ones included: an unknown card is never proof)."""
    trick = tc.trick
    named = tuple([(p.seat, tc.named[j]) for j, p in enumerate(trick.plays)])
    cls_of, maybe = ctx.cls, tc.maybe
    lead_play = trick.plays[0]
    if not maybe[0]:
        assert tc.lead is not None
        return TrickView(tc.lead, named, maybe)
    classes = {cls_of[c.code] for c in named[0][1]}
    sure = set(classes)
    for m in maybe[0]:
        sure |= m
    if len(classes) > 1:  # the named cards already mix classes: a failed throw whatever the rest
        return TrickView(read_lead(named[0][1], None, ctx), named, maybe)
    if len(sure) == 1:
        return TrickView(Lead(sure.pop(), (), (), len(lead_play.cards), True), named, maybe, lead_open=True)
    return TrickView(Lead(None, (), (), len(lead_play.cards), True), named, maybe, lead_unsure=True)


def _last_cases(log: DealLog, tc: _TrickCards, ctx: TrumpContext) -> tuple[set[Seat], list[int], list[_Case]]:
    """The last trick's completions: its possible winners, points and cases."""
    trick = tc.trick
    dealer_side = log.dealer.side
    winners: set[Seat] = set()
    pts: list[int] = []
    cases: list[_Case] = []
    if tc.readings() <= MAX_READINGS:
        for value, combo in tc.completions():
            cards, lead = tc.read(combo, ctx)
            seat = trick.plays[winning_play(cards, lead, ctx)].seat
            mult = bottom_multiplier(log.rules.bottom, lead.components) if seat.side != dealer_side else 0
            winners.add(seat)
            pts.append(value)
            cases.append(_Case(seat, value, mult))
        return winners, pts, cases
    bounds = tc.points_bounds()
    for play in trick.plays:
        winners.add(play.seat)
        mults = _ANY_MULTIPLIER if play.seat.side != dealer_side else (0,)
        cases += [_Case(play.seat, v, m) for v in bounds for m in mults]
    return winners, list(bounds), cases


def _check_winner(log: DealLog, t: int, tc: _TrickCards, ctx: TrumpContext) -> Range:
    """The least and most points of trick ``t``'s completions in which the next trick's leader wins
    it (the order of leaders); raises :class:`DealLogError` when there is none. Past
    :data:`MAX_READINGS` completions, the card-by-card bounds."""
    plays, leader = tc.trick.plays, log.tricks[t + 1].leader
    if tc.readings() > MAX_READINGS:
        return tc.points_bounds()

    def won(combo: tuple[int, ...]) -> bool:
        cards, lead = tc.read(combo, ctx)
        return plays[winning_play(cards, lead, ctx)].seat is leader

    ranked = tc.completions()
    if len(ranked) == 1:  # every unknown card of the trick settled
        if not won(ranked[0][1]):
            raise _not_won(t, leader)
        return (ranked[0][0], ranked[0][0])
    # Only the extremes matter: read completions from the fewest points up, then from the most down.
    ranked.sort(key=itemgetter(0))
    lo = next((value for value, combo in ranked if won(combo)), None)
    if lo is None:
        raise _not_won(t, leader)
    for value, combo in reversed(ranked):
        if value == lo or won(combo):
            return (lo, value)
    raise AssertionError("unreachable: the completion at lo was won")


def _not_won(t: int, leader: Seat) -> LeaderError:
    return LeaderError(
        f"trick {t + 2}, play 1 ({leader}): {leader} led, but no reading of trick {t + 1}'s "
        f"unknown cards lets {leader} win it",
        t + 2,
    )


def evaluate_open(log: DealLog) -> DealResult:
    """Score a parsed log that holds unknown cards (see the module docstring)."""
    ctx = trump_context(log.level, log.trump)
    state = _Open(log)
    dealer_side = log.dealer.side
    results: list[TrickResult] = []
    views: list[TrickView] = []
    prior = [0, 0]  # what the defenders take in the tricks before the last complete one
    cases: list[_Case] = []
    n = len(log.tricks)
    for t, trick in enumerate(log.tricks):
        plays = trick.plays
        if t not in state.within:
            # Every card named: the one reading.
            cards = cast("list[_Cards]", [p.cards for p in plays])
            lead = (
                read_lead(cards[0], None, ctx) if plays[0].split is None else _lead(plays[0], cards[0], ctx)
            )
            value = sum([CARD_POINTS[c.code] for p in cards for c in p])
            views.append(TrickView(lead, cast(_Seen, tuple([(p.seat, p.cards) for p in plays]))))
            complete = len(plays) == 4
            took_it = None
            if complete:
                took_it = plays[winning_play(cards, lead, ctx)].seat
                if t + 1 < n:
                    if took_it is not log.tricks[t + 1].leader:
                        raise _not_won(t, log.tricks[t + 1].leader)
                    if took_it.side != dealer_side:
                        prior[0] += value
                        prior[1] += value
                else:
                    mult = (
                        bottom_multiplier(log.rules.bottom, lead.components)
                        if took_it.side != dealer_side
                        else 0
                    )
                    cases = [_Case(took_it, value, mult)]
            results.append(TrickResult(t + 1, plays[0].seat, took_it, value, (value, value), complete))
            continue
        tc = _TrickCards(log, t, state, ctx)
        views.append(_view(tc, ctx))
        if not trick.complete:
            bounds = state.bound(tc.group, tc.named_points, tc.points_bounds(), f"trick {t + 1}")
            results.append(TrickResult(t + 1, trick.leader, None, _known(bounds), bounds, complete=False))
            continue
        winners: set[Seat] = set()
        if t + 1 < n:
            winner: Seat | None = log.tricks[t + 1].leader
            winning = _check_winner(log, t, tc, ctx)
            try:
                bounds = state.bound(tc.group, tc.named_points, winning, f"trick {t + 1}")
            except DealLogError as exc:  # no completion lets the next leader win with the cards left over
                raise LeaderError(
                    f"trick {t + 2}, play 1 ({winner}): {winner} led, but the readings of trick {t + 1}'s "
                    f"unknown cards that let {winner} win it give the trick {winning[0]}–{winning[1]} points, "
                    "which the cards the deal leaves over cannot",
                    t + 2,
                ) from exc
            if winner is not None and winner.side != dealer_side:
                prior[0] += bounds[0]
                prior[1] += bounds[1]
        else:
            winners, pts, cases = _last_cases(log, tc, ctx)
            winner = next(iter(winners)) if len(winners) == 1 else None
            bounds = state.bound(tc.group, tc.named_points, _span(pts), f"trick {t + 1}")
            cases = [c for c in cases if bounds[0] <= c.points <= bounds[1]]
        could_win = () if winner is not None else tuple(sorted(winners, key=lambda seat: seat.value))
        results.append(
            TrickResult(t + 1, trick.leader, winner, _known(bounds), bounds, winner_possible=could_win)
        )
    took = [c.points if c.winner.side != dealer_side else 0 for c in cases] or [0]
    captured = (prior[0] + min(took), prior[1] + max(took))
    penalty = penalty_of(log)
    violations = find_violations(views, ctx, log.rules.follow)
    resolved = state.resolved()
    open_count = sum(1 for codes in state.where.values() if len(codes) > 1)
    if not log.finished:
        total = (captured[0] + penalty, captured[1] + penalty)
        return DealResult(
            tuple(results),
            _known(captured),
            _known(total),
            tuple(violations),
            penalty=penalty,
            captured_range=captured,
            defender_total_range=total,
            resolved=resolved,
            unknown=open_count,
        )
    # The bottom's points card by card; each way the last trick goes gives its multiplier.
    bottom_choices = [
        tuple(sorted(state.where[("bottom", i)])) if isinstance(c, UnknownCard) else (c.code,)
        for i, c in enumerate(log.bottom or ())
    ]
    bottom_pts = state.bound(
        state.within.get("bottom", []),
        _named_points(log.bottom or ()),
        _points_bounds([bottom_choices]),
        "the bottom",
    )
    totals: list[int] = []
    awarded: list[int] = []
    reachable: set[int] = set()  # the defenders' totals some completion gives
    for case in set(cases):
        taken = case.points if case.winner.side != dealer_side else 0
        award = (bottom_pts[0] * case.multiplier, bottom_pts[1] * case.multiplier)
        lo = prior[0] + taken + award[0] + penalty
        hi = prior[1] + taken + award[1] + penalty
        awarded += award
        totals += [lo, hi]
        reachable.update(range(lo, hi + 1))
    outcomes: dict[tuple[str, int, str], Outcome] = {}
    for side, levels, next_dealer in {outcome(log.rules, log.dealer, d) for d in reachable}:
        got = rulings_applied(log, side, levels, next_dealer)
        outcomes[(got.side, got.levels, got.next_dealer.name)] = got
    mults = sorted({c.multiplier for c in cases})
    award_span = _span(awarded)
    bottom = BottomResult(
        _known(bottom_pts),
        mults[0] if len(mults) == 1 else None,
        _known(award_span),
        bottom_pts,
        tuple(mults),
        award_span,
    )
    total = _span(totals)
    possible = tuple(outcomes[k] for k in sorted(outcomes))
    return DealResult(
        tuple(results),
        _known(captured),
        _known(total),
        tuple(violations),
        bottom,
        possible[0] if len(possible) == 1 else None,
        penalty,
        captured_range=captured,
        defender_total_range=total,
        outcome_possible=possible,
        resolved=resolved,
        unknown=open_count,
        finished=True,
    )


__all__ = ["MAX_READINGS", "evaluate_open"]
