"""Points, the bottom award (抠底) and the deal outcome."""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import Card
from engine.combos import Component, shape_priority
from engine.rules import BottomPolicy, RuleSet
from engine.seats import Seat


def points(cards: Sequence[Card]) -> int:
    """5 = 5, 10 = 10, K = 10.

    >>> from engine.cards import parse_cards
    >>> points(parse_cards(["5H", "10S", "KD", "QD", "BJ"]))
    25
    """
    return sum(c.points for c in cards)


def bottom_multiplier(policy: BottomPolicy, components: Sequence[Component]) -> int:
    """Multiplier for the bottom by the shape of the last trick's lead (components biggest first).

    >>> from engine.rules import RULE_SETS
    >>> from engine.combos import Component
    >>> pair, single = Component(2, (5,), 5), Component(1, (3,), 3)
    >>> bottom_multiplier(RULE_SETS["national-2deck"].bottom, [pair])
    4
    >>> bottom_multiplier(RULE_SETS["zhku-3deck"].bottom, [pair, single])
    5
    """
    mults = [policy.component(c.width, c.length) for c in components]
    if len(components) == 1:
        return mults[0]
    if policy.throw == "sum_two_highest":
        return mults[0] + mults[1]
    if policy.throw == "tractor_pair_or_3":
        tractors = [m for c, m in zip(components, mults, strict=True) if c.length >= 2]
        if tractors:
            return max(tractors)
        return policy.pair if any(c.width >= 2 for c in components) else 3
    # "max3_largest": 3, or the multiplier of its largest component (by cards) if more
    largest = max(components, key=lambda c: (c.size, shape_priority(c.shape)))
    return max(3, policy.component(largest.width, largest.length))


def outcome(rules: RuleSet, dealer: Seat, total: int) -> tuple[str, int, Seat]:
    """``(side, levels, next dealer)``: the dealer side winning passes the deal to the dealer's
    partner; the defenders winning pass it to the dealer's 下家."""
    side, levels = rules.levels.outcome(total)
    return side, levels, dealer.partner if side == "dealer" else dealer.next
