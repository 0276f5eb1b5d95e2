"""Combinations (牌型): singles, pairs, triples and tractors of pairs or triples, within one suit class.

Cards are handled as *counts*: ``{card code: copies}`` of cards that all belong to one suit class
of a :class:`~engine.context.TrumpContext`. A :class:`Component` is one combination; its
``shape`` is ``(width, length)``: ``(1, 1)`` single, ``(2, 1)`` pair, ``(3, 1)`` triple,
``(2, n)``/``(3, n)`` with ``n ≥ 2`` a pair/triple tractor.

>>> from engine.context import trump_context, TRUMP
>>> from engine.cards import parse_cards
>>> ctx = trump_context(8, "H")
>>> [c.shape for c in decompose(counts_of(parse_cards("9S 9S 7S 7S".split())), ctx, 0)]
[(2, 2)]
>>> [c.shape for c in decompose(counts_of(parse_cards("AS AS 2S 2S".split())), ctx, 0)]
[(2, 1), (2, 1)]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from engine.cards import Card
from engine.context import TrumpContext

Counts = dict[int, int]
Shape = tuple[int, int]


def counts_of(cards: Iterable[Card]) -> Counts:
    out: Counts = {}
    for card in cards:
        out[card.code] = out.get(card.code, 0) + 1
    return out


def shape_priority(shape: Shape) -> tuple[bool, int, int]:
    """Sort key, biggest first when sorted in reverse: triple tractors (longer first), pair
    tractors (longer first), triples, pairs, singles (seed 001 art. 11.2(2))."""
    width, length = shape
    return (length >= 2, width, length)


@dataclass(frozen=True, slots=True)
class Component:
    """One combination: ``codes`` from the highest position down, each used ``width`` times."""

    width: int
    codes: tuple[int, ...]
    top: int

    @property
    def length(self) -> int:
        return len(self.codes)

    @property
    def shape(self) -> Shape:
        return (self.width, len(self.codes))

    @property
    def size(self) -> int:
        return self.width * len(self.codes)

    def cards(self) -> list[Card]:
        return [Card(code) for code in self.codes for _ in range(self.width)]


def _avail(counts: Counts, ctx: TrumpContext, cls: int, key: int, width: int) -> list[int]:
    return [code for code in ctx.codes_at[cls][key] if counts.get(code, 0) >= width]


def runs(counts: Counts, ctx: TrumpContext, cls: int, width: int) -> list[tuple[int, int]]:
    """Maximal runs ``(low key, high key)`` of consecutive keys holding a ``width``-of-a-kind."""
    keys = ctx.keys
    present = sorted({keys[code] for code, n in counts.items() if n >= width and ctx.cls[code] == cls})
    out: list[tuple[int, int]] = []
    for key in present:
        if out and out[-1][1] == key - 1:
            out[-1] = (out[-1][0], key)
        else:
            out.append((key, key))
    return out


def windows(
    counts: Counts, ctx: TrumpContext, cls: int, width: int, length: int, above: int = -1
) -> Iterator[Component]:
    """Every combination of shape ``(width, length)`` in ``counts`` whose top key is > ``above``,
    highest first (all code choices where a position has several codes)."""
    cands: list[Component] = []
    for low, high in runs(counts, ctx, cls, width):
        for top in range(high, low + length - 2, -1):
            if top <= above:
                break
            choices = [_avail(counts, ctx, cls, k, width) for k in range(top, top - length, -1)]
            for combo in _product(choices):
                cands.append(Component(width, combo, top))
    cands.sort(key=lambda c: -c.top)
    yield from cands


def _product(choices: Sequence[Sequence[int]]) -> Iterator[tuple[int, ...]]:
    if not choices:
        yield ()
        return
    for first in choices[0]:
        for rest in _product(choices[1:]):
            yield (first, *rest)


def has_above(counts: Counts, ctx: TrumpContext, cls: int, shape: Shape, above: int) -> bool:
    """Whether ``counts`` holds a combination of ``shape`` whose top key is strictly above ``above``."""
    width, length = shape
    return any(high > above and high - low + 1 >= length for low, high in runs(counts, ctx, cls, width))


def take(counts: Counts, comp: Component) -> Counts:
    out = dict(counts)
    for code in comp.codes:
        left = out[code] - comp.width
        if left:
            out[code] = left
        else:
            del out[code]
    return out


def decompose(counts: Counts, ctx: TrumpContext, cls: int) -> list[Component]:
    """Canonical reading of a lead: longest triple tractors, then pair tractors, then triples,
    pairs, singles (greedy, highest first). Used when the leader declared no split."""
    comps: list[Component] = []
    rest = dict(counts)
    for width in (3, 2):
        while True:
            best: tuple[int, int] | None = None
            for low, high in runs(rest, ctx, cls, width):
                if high - low >= 1 and (best is None or high - low > best[1] - best[0]):
                    best = (low, high)
            if best is None:
                break
            low, high = best
            codes = tuple(max(_avail(rest, ctx, cls, k, width)) for k in range(high, low - 1, -1))
            comp = Component(width, codes, high)
            comps.append(comp)
            rest = take(rest, comp)
    for width in (3, 2, 1):
        for code in sorted(rest, key=lambda c: -ctx.keys[c]):
            while rest.get(code, 0) >= width:
                comp = Component(width, (code,), ctx.keys[code])
                comps.append(comp)
                rest = take(rest, comp)
    comps.sort(key=lambda c: (shape_priority(c.shape), c.top), reverse=True)
    return comps


def component_of(counts: Counts, ctx: TrumpContext, cls: int) -> Component | None:
    """The single combination that ``counts`` is exactly, or ``None`` (a declared throw part)."""
    comps = decompose(counts, ctx, cls)
    return comps[0] if len(comps) == 1 else None


def match_shapes(counts: Counts, ctx: TrumpContext, cls: int, shapes: Sequence[Shape]) -> int | None:
    """If ``counts`` splits into exactly ``shapes`` (biggest first), the highest possible top key of
    the first (deciding) shape; else ``None``."""
    if sum(w * n for w, n in shapes) != sum(counts.values()):
        return None
    first, rest = shapes[0], shapes[1:]
    for comp in windows(counts, ctx, cls, first[0], first[1]):
        if _fits(take(counts, comp), ctx, cls, rest):
            return comp.top
    return None


def _fits(counts: Counts, ctx: TrumpContext, cls: int, shapes: Sequence[Shape]) -> bool:
    if not shapes:
        return not counts
    if all(length == 1 for _, length in shapes):
        need3 = sum(1 for w, _ in shapes if w == 3)
        need2 = sum(1 for w, _ in shapes if w == 2)
        c3 = sum(1 for v in counts.values() if v >= 3)
        c2 = sum(1 for v in counts.values() if v == 2)
        return need3 <= c3 and need2 <= (c3 - need3) + c2
    first, rest = shapes[0], shapes[1:]
    return any(
        _fits(take(counts, comp), ctx, cls, rest) for comp in windows(counts, ctx, cls, first[0], first[1])
    )


def find_shapes(
    counts: Counts, ctx: TrumpContext, cls: int, shapes: Sequence[Shape]
) -> list[Component] | None:
    """Combinations of exactly ``shapes`` (biggest first) drawn from ``counts``, or ``None``."""
    if not shapes:
        return []
    width, length = shapes[0]
    if length >= 2:
        cands = list(windows(counts, ctx, cls, width, length))
    else:
        cands = [Component(width, (code,), ctx.keys[code]) for code, v in counts.items() if v >= width]
    for comp in cands:
        rest = find_shapes(take(counts, comp), ctx, cls, shapes[1:])
        if rest is not None:
            return [comp, *rest]
    return None
