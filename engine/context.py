"""The trump context of a deal: which cards are trump, and each card's strength/position.

Within a *suit class* (trump, or one plain suit) every card has a ``key``: higher keys are
stronger, equal keys are equal (the off-suit level cards), and tractors are runs of consecutive
keys. Positions skip the level rank, so with level 8 the 7s and 9s are adjacent; in trumps the
order is … trump A (11), off-suit level cards (12, one position for all), trump-suit level (13),
SJ (14), BJ (15); in no-trump the level cards share 12, SJ is 13 and BJ 14. No wrap-around.

>>> ctx = trump_context(8, "H")
>>> from engine.cards import parse_card as c
>>> ctx.key(c("9S")) - ctx.key(c("7S")), ctx.is_trump(c("8S")), ctx.key(c("8S")) == ctx.key(c("8D"))
(1, True, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from engine.cards import BIG_JOKER, N_CODES, SMALL_JOKER, SUITS, Card

if TYPE_CHECKING:
    from engine.trick import Lead

#: Suit class id of trumps; plain suits use their index in ``SUITS`` (0…3).
TRUMP = 4
SUIT_CLASS_NAMES = ("S", "H", "D", "C", "trump")


@dataclass(frozen=True, slots=True)
class TrumpContext:
    """Level rank (2…14) and trump suit (``None`` = no-trump) with per-card lookup tables."""

    level: int
    trump: str | None
    cls: tuple[int, ...] = field(repr=False)
    keys: tuple[int, ...] = field(repr=False)
    #: ``codes_at[suit_class][key]``: the card codes that have that key in that suit class.
    codes_at: tuple[tuple[tuple[int, ...], ...], ...] = field(repr=False)
    #: ``strength[led_class][code]``: how strongly a card (or a pair, a triple of it) answers a lead
    #: of one card (pair, triple) of that suit class: ``32 + key`` in the led class, ``64 + key``
    #: a trump ruffing a plain lead, 0 a discard.
    strength: tuple[tuple[int, ...], ...] = field(repr=False)
    #: The leads of one card, a pair or a triple by ``code * 4 + count``, as
    #: :func:`engine.trick.read_lead` reads them (filled on first use).
    same_leads: dict[int, Lead] = field(default_factory=dict, repr=False, compare=False, hash=False)

    def is_trump(self, card: Card) -> bool:
        return self.cls[card.code] == TRUMP

    def suit_class(self, card: Card) -> int:
        return self.cls[card.code]

    def key(self, card: Card) -> int:
        return self.keys[card.code]

    @property
    def trump_name(self) -> str:
        return self.trump if self.trump is not None else "NT"


@cache
def trump_context(level: int, trump: str | None) -> TrumpContext:
    """The (cached) context for a level rank 2…14 and trump suit letter or ``None``/``"NT"``."""
    if trump == "NT":
        trump = None
    if not 2 <= level <= 14:
        raise ValueError(f"level out of range: {level}")
    if trump is not None and trump not in SUITS:
        raise ValueError(f"unknown trump suit: {trump!r}")
    cls = [0] * N_CODES
    keys = [0] * N_CODES
    for code in range(52):
        suit, rank = SUITS[code // 13], code % 13 + 2
        plain_pos = rank - 2 - (1 if rank > level else 0)
        if rank == level:
            cls[code] = TRUMP
            keys[code] = 13 if (trump is not None and suit == trump) else 12
        elif suit == trump:
            cls[code] = TRUMP
            keys[code] = plain_pos
        else:
            cls[code] = SUITS.index(suit)
            keys[code] = plain_pos
    top = 13 if trump is not None else 12
    cls[SMALL_JOKER] = cls[BIG_JOKER] = TRUMP
    keys[SMALL_JOKER], keys[BIG_JOKER] = top + 1, top + 2
    codes_at: list[list[list[int]]] = [[[] for _ in range(16)] for _ in range(5)]
    for code in range(N_CODES):
        codes_at[cls[code]][keys[code]].append(code)
    strength = tuple(
        tuple(
            32 + keys[c] if cls[c] == led else 64 + keys[c] if cls[c] == TRUMP else 0 for c in range(N_CODES)
        )
        for led in range(5)
    )
    return TrumpContext(
        level=level,
        trump=trump,
        cls=tuple(cls),
        keys=tuple(keys),
        codes_at=tuple(tuple(tuple(v) for v in row) for row in codes_at),
        strength=strength,
    )
