"""A deal simulator: shuffle and deal any rule set's decks, then four bots play random *legal*
cards to the end, through the check / can / do API of :class:`DealState`.

Every state change is a recorded play; the finished deal is a deal log (``deal-log.md``) with the
initial hands added. Optional injections produce one revoke or one failed throw for tests.

>>> log = simulate_deal("national-1deck", seed=7)
>>> log["finished"], len(log["tricks"]) > 0, sorted(log["hands"])
(True, True, ['E', 'N', 'S', 'W'])
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.cards import RANK_NAME, SUITS, Card, format_cards, full_deck
from engine.combos import Component, counts_of, find_shapes, has_above, runs, windows
from engine.context import TRUMP, TrumpContext, trump_context
from engine.follow import best_plan, best_profile
from engine.rules import RuleSet, get_rule_set
from engine.seats import SEAT_ORDER, Seat
from engine.trick import Lead, read_lead, winning_play


class IllegalPlayError(ValueError):
    """A play the rules forbid in the current state; the message gives the reason."""


@dataclass
class DealState:
    """A deal in progress with known hands (the simulator's view, not the camera's)."""

    rules: RuleSet
    ctx: TrumpContext
    dealer: Seat
    hands: dict[Seat, Counter[int]]
    bottom: tuple[Card, ...]
    tricks: list[list[tuple[Seat, tuple[Card, ...]]]] = field(default_factory=list)
    lead: Lead | None = None
    leader: Seat | None = None

    @property
    def to_play(self) -> Seat | None:
        """The seat whose turn it is, ``None`` when the hands are empty."""
        if not self.tricks or len(self.tricks[-1]) == 4:
            if not any(n > 0 for s in Seat for n in self.hands[s].values()):
                return None
            return self.dealer if not self.tricks else self.leader
        return self.tricks[-1][-1][0].next

    def hand(self, seat: Seat) -> list[Card]:
        return [Card(code) for code, n in sorted(self.hands[seat].items()) for _ in range(n)]

    def _suit_counts(self, seat: Seat, cls: int) -> dict[int, int]:
        return {c: n for c, n in self.hands[seat].items() if n and self.ctx.cls[c] == cls}

    def verify_play(self, seat: Seat, cards: Sequence[Card]) -> None:
        """Raise :class:`IllegalPlayError` with the reason if ``seat`` may not play ``cards`` now."""
        if seat is not self.to_play:
            raise IllegalPlayError(f"not {seat}'s turn (to play: {self.to_play})")
        need = Counter(c.code for c in cards)
        if not cards or any(self.hands[seat][code] < n for code, n in need.items()):
            raise IllegalPlayError(f"{seat} does not hold {' '.join(map(str, cards))}")
        starting = not self.tricks or len(self.tricks[-1]) == 4
        if starting:
            lead = read_lead(cards, None, self.ctx)
            if lead.cls is None:
                raise IllegalPlayError("a lead must be of one suit class")
            if lead.is_throw:
                for other in Seat:
                    if other is seat:
                        continue
                    held = self._suit_counts(other, lead.cls)
                    if any(has_above(held, self.ctx, lead.cls, c.shape, c.top) for c in lead.components):
                        raise IllegalPlayError(f"failed throw: {other} holds a higher combination")
            return
        current = self.lead
        assert current is not None and current.cls is not None
        self._verify_follow(seat, cards, current)

    def _verify_follow(self, seat: Seat, cards: Sequence[Card], lead: Lead) -> None:
        assert lead.cls is not None
        if len(cards) != lead.size:
            raise IllegalPlayError(f"must play {lead.size} cards")
        held = self._suit_counts(seat, lead.cls)
        in_suit = [c for c in cards if self.ctx.cls[c.code] == lead.cls]
        if len(in_suit) < min(lead.size, sum(held.values())):
            raise IllegalPlayError("must follow the led suit class")
        if len(in_suit) == lead.size and lead.structured:
            mine = best_profile(counts_of(in_suit), self.ctx, lead.cls, lead.shapes, self.rules.follow)
            best = best_profile(held, self.ctx, lead.cls, lead.shapes, self.rules.follow)
            if mine < best:
                raise IllegalPlayError("must match the lead's shape as closely as the hand allows")

    def can_play(self, seat: Seat, cards: Sequence[Card]) -> bool:
        try:
            self.verify_play(seat, cards)
        except IllegalPlayError:
            return False
        return True

    def play(self, seat: Seat, cards: Sequence[Card], *, check: bool = True) -> None:
        """Apply a play (verified unless ``check=False``, which the injections use)."""
        if check:
            self.verify_play(seat, cards)
        starting = not self.tricks or len(self.tricks[-1]) == 4
        if starting:
            self.tricks.append([])
            self.lead = read_lead(cards, None, self.ctx)
        for c in cards:
            self.hands[seat][c.code] -= 1
        self.tricks[-1].append((seat, tuple(cards)))
        if len(self.tricks[-1]) == 4:
            assert self.lead is not None
            plays = [p for _, p in self.tricks[-1]]
            self.leader = self.tricks[-1][winning_play(plays, self.lead, self.ctx)][0]


def _cards(comps: Sequence[Component]) -> list[Card]:
    return [c for comp in comps for c in comp.cards()]


class Bot:
    """Random legal play; leads favour structure (tractors, triples, pairs) and sometimes throw."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def lead(self, state: DealState, seat: Seat) -> list[Card]:
        rng, ctx = self.rng, state.ctx
        classes = sorted({ctx.cls[c] for c, n in state.hands[seat].items() if n})
        cls = rng.choice(classes)
        held = state._suit_counts(seat, cls)
        options: list[list[Card]] = []
        for width in (3, 2):
            for low, high in runs(held, ctx, cls, width):
                if high > low:
                    options.append(next(windows(held, ctx, cls, width, 2)).cards())
        options += [[Card(c)] * min(n, 3) for c, n in held.items() if n >= 2]
        options.append([Card(rng.choice(sorted(held)))])
        if rng.random() < 0.15:
            top = sorted(held, key=lambda c: -ctx.keys[c])[:2]
            throw = [Card(c) for c in top]
            if len(throw) == 2 and state.can_play(seat, throw):
                return throw
        for cards in rng.sample(options, len(options)):
            if state.can_play(seat, cards):
                return cards
        return [Card(rng.choice(sorted(held)))]

    def follow(self, state: DealState, seat: Seat) -> list[Card]:
        rng, ctx = self.rng, state.ctx
        lead = state.lead
        assert lead is not None and lead.cls is not None
        n = lead.size
        held = state._suit_counts(seat, lead.cls)
        total = sum(held.values())
        if total >= n:
            plan = best_plan(held, ctx, lead.cls, lead.shapes, state.rules.follow)
            chosen = _cards(plan.taken)
            rest = Counter(held)
            rest.subtract(c.code for c in chosen)
            pool = [Card(c) for c, k in rest.items() for _ in range(k)]
            return chosen + rng.sample(pool, n - len(chosen))
        chosen = [Card(c) for c, k in held.items() for _ in range(k)]
        others = [c for c in state.hand(seat) if ctx.cls[c.code] != lead.cls]
        if not chosen and lead.cls != TRUMP and rng.random() < 0.6:
            trumps = state._suit_counts(seat, TRUMP)
            ruff = find_shapes(trumps, ctx, TRUMP, lead.shapes)
            if ruff is not None:
                return _cards(ruff)
        return chosen + rng.sample(others, n - len(chosen))


def _bury(
    hand: list[Card], ctx: TrumpContext, size: int, rng: random.Random
) -> tuple[list[Card], list[Card]]:
    """The dealer buries ``size`` cards, preferring low plain cards."""
    order = sorted(
        hand, key=lambda c: (ctx.cls[c.code] == TRUMP, c.points > 0, ctx.keys[c.code], rng.random())
    )
    bottom = order[:size]
    keep = order[size:]
    return keep, bottom


def deal_state(
    rules_id: str,
    seed: int,
    *,
    level: int | None = None,
    trump: str | None = None,
    dealer: Seat | None = None,
) -> DealState:
    """Shuffle, deal and bury: a new deal at a random level, trump (``NT`` for no trump) and dealer,
    unless given (a match's next deal); the seed draws the same shuffle either way."""
    rules = get_rule_set(rules_id)
    rng = random.Random(seed)
    drawn_level = rng.randint(2, 14)
    drawn_trump = rng.choice([*SUITS, *SUITS, None])
    ctx = trump_context(
        drawn_level if level is None else level,
        drawn_trump if trump is None else (None if trump == "NT" else trump),
    )
    drawn_dealer = rng.choice(SEAT_ORDER)
    dealer = drawn_dealer if dealer is None else dealer
    deck = full_deck(rules.decks)
    rng.shuffle(deck)
    hands: dict[Seat, list[Card]] = {}
    for i, seat in enumerate(SEAT_ORDER):
        hands[seat] = deck[i * rules.hand_size : (i + 1) * rules.hand_size]
    kitty = deck[4 * rules.hand_size :]
    keep, bottom = _bury(hands[dealer] + kitty, ctx, rules.bottom_size, rng)
    hands[dealer] = keep
    return DealState(
        rules, ctx, dealer, {s: Counter(c.code for c in h) for s, h in hands.items()}, tuple(bottom)
    )


def _inject_revoke(state: DealState, seat: Seat, rng: random.Random) -> list[Card] | None:
    """An illegal follow for ``seat`` (withholding led-suit cards), if one exists."""
    lead = state.lead
    assert lead is not None and lead.cls is not None
    held = state._suit_counts(seat, lead.cls)
    others = [c for c in state.hand(seat) if state.ctx.cls[c.code] != lead.cls]
    if held and len(others) >= lead.size:
        return rng.sample(others, lead.size)
    return None


def _inject_throw(state: DealState, seat: Seat) -> list[Card] | None:
    """A throw by ``seat`` that another seat can beat, if one exists."""
    ctx = state.ctx
    for cls in range(5):
        held = sorted(state._suit_counts(seat, cls).items(), key=lambda kv: -ctx.keys[kv[0]])
        if len(held) < 2:
            continue
        cards = [Card(held[0][0]), Card(held[-1][0])]
        lead = read_lead(cards, None, ctx)
        if lead.is_throw and not state.can_play(seat, cards):
            return cards
    return None


def simulate_deal(
    rules: str,
    seed: int,
    *,
    inject_revoke: bool = False,
    inject_failed_throw: bool = False,
    level: int | None = None,
    trump: str | None = None,
    dealer: Seat | None = None,
) -> dict[str, Any]:
    """Play a whole deal with four bots and return its finished deal log plus ``hands`` (after the
    bottom was buried) and ``injected`` (the violations put in on purpose). ``level`` (2…14),
    ``trump`` (a suit letter or ``NT``) and ``dealer`` fix what is otherwise drawn from the seed."""
    state = deal_state(rules, seed, level=level, trump=trump, dealer=dealer)
    rng = random.Random(seed * 7919 + 1)
    bot = Bot(rng)
    initial = {s.name: format_cards(state.hand(s)) for s in Seat}
    n_tricks_est = state.rules.hand_size  # upper bound
    revoke_at = rng.randint(1, max(1, n_tricks_est // 2)) if inject_revoke else -1
    throw_at = rng.randint(0, max(0, n_tricks_est // 3)) if inject_failed_throw else -1
    injected: list[dict[str, Any]] = []
    while (seat := state.to_play) is not None:
        t = len(state.tricks) if (not state.tricks or len(state.tricks[-1]) == 4) else len(state.tricks) - 1
        starting = not state.tricks or len(state.tricks[-1]) == 4
        cards: list[Card] | None = None
        if starting:
            if t >= throw_at >= 0 and not any(i["kind"] == "failed_throw" for i in injected):
                cards = _inject_throw(state, seat)
                if cards is not None:
                    injected.append({"kind": "failed_throw", "seat": seat.name, "trick": t + 1})
            if cards is None:
                cards = bot.lead(state, seat)
            state.play(
                seat,
                cards,
                check=not injected
                or injected[-1]["trick"] != t + 1
                or injected[-1]["kind"] != "failed_throw",
            )
            continue
        if t >= revoke_at >= 0 and not any(i["kind"] == "revoke" for i in injected):
            left = sum(state.hands[seat].values())
            lead = state.lead
            if lead is not None and left > lead.size:  # not the last trick: it must become provable
                cards = _inject_revoke(state, seat, rng)
                if cards is not None:
                    injected.append({"kind": "revoke", "seat": seat.name, "trick": t + 1})
                    state.play(seat, cards, check=False)
                    continue
        state.play(seat, bot.follow(state, seat))
    return {
        "rules": state.rules.id,
        "level": RANK_NAME[state.ctx.level],
        "trump": state.ctx.trump_name,
        "dealer": state.dealer.name,
        "bottom": format_cards(state.bottom),
        "tricks": [{"plays": [[s.name, format_cards(c)] for s, c in trick]} for trick in state.tricks],
        "finished": True,
        "hands": initial,
        "injected": injected,
    }
