"""Reading a trick: the lead's combinations and who wins (seed 002 art. 14–15, seed 004 (9)).

A play beats the current best only if it is all of the led suit class or all trump, has the
lead's exact shape (every component matched) and is strictly higher in the deciding component
(the biggest: tractor, else triple, else pair, else single). Anything else is a discard. Trump
beats plain; equal cards: the one played first wins.

>>> from engine.context import trump_context
>>> from engine.cards import parse_cards
>>> ctx = trump_context(5, "H")
>>> plays = [parse_cards(p.split()) for p in ("AS AS", "3S 4S", "2H 2H", "6H 6H")]
>>> winning_play(plays, read_lead(plays[0], None, ctx), ctx)
3
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.cards import Card
from engine.combos import Component, Shape, component_of, counts_of, decompose, match_shapes, shape_priority
from engine.context import TRUMP, TrumpContext


@dataclass(frozen=True, slots=True)
class Lead:
    """The lead's suit class (``None`` when it mixes classes: an invalid throw) and components,
    biggest first; ``shapes``, ``size`` and ``structured`` are derived once by :meth:`of`."""

    cls: int | None
    components: tuple[Component, ...]
    shapes: tuple[Shape, ...]
    size: int
    #: Whether following needs more than the right suit (any pair or bigger).
    structured: bool

    @classmethod
    def of(cls, suit_class: int | None, components: Sequence[Component]) -> Lead:
        comps = tuple(components)
        return cls(
            suit_class,
            comps,
            tuple(c.shape for c in comps),
            sum(c.size for c in comps),
            any(c.width > 1 for c in comps),
        )

    @property
    def is_throw(self) -> bool:
        return len(self.components) > 1


class InvalidSplitError(ValueError):
    """A declared throw split whose parts are not single combinations of one suit class."""


def read_lead(cards: Sequence[Card], split: Sequence[Sequence[Card]] | None, ctx: TrumpContext) -> Lead:
    """Components of a lead: the declared split if given, else the canonical reading."""
    first = cards[0].code
    n = len(cards)
    if (
        split is None
        and n <= 3
        and (n == 1 or (cards[1].code == first and (n == 2 or cards[2].code == first)))
    ):
        lead = ctx.same_leads.get(first * 4 + n)  # one card, a pair or a triple: read once per context
        if lead is None:
            lead = ctx.same_leads[first * 4 + n] = Lead.of(
                ctx.cls[first], [Component(n, (first,), ctx.keys[first])]
            )
        return lead
    classes = {ctx.cls[c.code] for c in cards}
    if len(classes) > 1:
        comps: list[Component] = []
        for cls in sorted(classes):
            comps += decompose(counts_of(c for c in cards if ctx.cls[c.code] == cls), ctx, cls)
        return Lead.of(None, comps)
    cls = classes.pop()
    if split is None:
        return Lead.of(cls, decompose(counts_of(cards), ctx, cls))
    parts: list[Component] = []
    for part in split:
        comp = component_of(counts_of(part), ctx, cls)
        if comp is None:
            raise InvalidSplitError(f"declared part {' '.join(map(str, part))} is not one combination")
        parts.append(comp)
    parts.sort(key=lambda c: (shape_priority(c.shape), c.top), reverse=True)
    return Lead.of(cls, parts)


def play_strength(cards: Sequence[Card], lead: Lead, ctx: TrumpContext) -> tuple[int, int] | None:
    """``(rank class, top)`` of a play that could win: rank class 1 for the led suit class, 2 for
    trump (ruffing a plain lead); ``None`` for a discard."""
    if lead.cls is None or len(cards) != lead.size:
        return None
    shapes = lead.shapes
    if len(shapes) == 1 and shapes[0][1] == 1:  # single, pair, triple: identical cards
        code = cards[0].code
        for c in cards:
            if c.code != code:
                return None
        cls = ctx.cls[code]
        if cls == lead.cls:
            return (1, ctx.keys[code])
        return (2, ctx.keys[code]) if cls == TRUMP else None
    classes = {ctx.cls[c.code] for c in cards}
    if len(classes) != 1:
        return None
    cls = classes.pop()
    if cls != lead.cls and cls != TRUMP:
        return None
    rank_class = 1 if cls == lead.cls else 2
    top = match_shapes(counts_of(cards), ctx, cls, shapes)
    if top is None:
        return None
    return (rank_class, top)


def winning_play(plays: Sequence[Sequence[Card]], lead: Lead, ctx: TrumpContext) -> int:
    """Index of the play that takes the trick (the lead wins if nothing beats it)."""
    if lead.cls is None:
        return 0
    shapes = lead.shapes
    if len(shapes) == 1 and shapes[0][1] == 1:
        # A single, pair or triple: only as many identical cards can win, as in play_strength
        # (ranked by ctx.strength; a discard has 0).
        size, strength = lead.size, ctx.strength[lead.cls]
        winner, top = 0, 31  # a lead always has its own shape; keep the leader as winner regardless
        for i, cards in enumerate(plays):
            if len(cards) != size:
                continue
            code = cards[0].code
            if size > 1 and (cards[1].code != code or (size == 3 and cards[2].code != code)):
                continue
            if strength[code] > top:
                top, winner = strength[code], i
        return winner
    best = play_strength(plays[0], lead, ctx)
    if best is None:  # a lead always has its own shape; keep the leader as winner regardless
        best = (1, -1)
    winner = 0
    for i in range(1, len(plays)):
        s = play_strength(plays[i], lead, ctx)
        if s is not None and s > best:
            best, winner = s, i
    return winner
