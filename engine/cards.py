"""Cards, suits and ranks in the notation of ``RULES.md``.

A card is rank-first text: ``2``…``10``, ``J``, ``Q``, ``K``, ``A`` followed by a suit letter
``S H D C``; ``T`` is accepted for ten on input, case is not significant. Jokers are ``BJ``
(大王, big) and ``SJ`` (小王, small). With k decks every card exists k times and identical copies
are indistinguishable, so a card is just its identity.

>>> parse_card("th")
Card('10H')
>>> str(parse_card("bj")), parse_card("KS").points
('BJ', 10)
>>> parse_cards(["5c", "SJ"])
(Card('5C'), Card('SJ'))
>>> parse_card("1X")
Traceback (most recent call last):
...
engine.cards.UnknownCardError: unknown card '1X'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from engine.text import shown

SUITS: Final = ("S", "H", "D", "C")
RANKS: Final = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
#: Rank values: 2..14 (ace high).
RANK_VALUE: Final = {r: i + 2 for i, r in enumerate(RANKS)}
RANK_NAME: Final = {v: r for r, v in RANK_VALUE.items()}

SMALL_JOKER: Final = 52
BIG_JOKER: Final = 53
N_CODES: Final = 54


class UnknownCardError(ValueError):
    """Text that is not a card of the notation (``parse_card``)."""


class UnknownRankError(ValueError):
    """Text that is not a rank ``2``…``A`` (``parse_rank``)."""


class UnknownSuitError(ValueError):
    """Text that is not a suit letter (``parse_suit``)."""


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One card identity. ``code`` is 0…51 for ``suit * 13 + (rank - 2)`` and 52/53 for SJ/BJ.

    The code order matches the detector's class ids (``vision.labels``).
    """

    code: int

    def __post_init__(self) -> None:
        if not 0 <= self.code < N_CODES:
            raise UnknownCardError(f"card code out of range: {self.code}")

    @property
    def is_joker(self) -> bool:
        return self.code >= SMALL_JOKER

    @property
    def suit(self) -> str | None:
        """``S H D C`` or ``None`` for a joker."""
        return None if self.is_joker else SUITS[self.code // 13]

    @property
    def rank(self) -> int:
        """2…14 for ranked cards, 15 for the small joker, 16 for the big joker."""
        if self.is_joker:
            return 15 if self.code == SMALL_JOKER else 16
        return self.code % 13 + 2

    @property
    def points(self) -> int:
        return CARD_POINTS[self.code]

    @property
    def candidates(self) -> frozenset[int]:
        """The card codes it may be: its own (as :attr:`UnknownCard.candidates` for one not named).

        >>> parse_card("KS").candidates == frozenset({parse_card("KS").code})
        True
        """
        return frozenset((self.code,))

    def __str__(self) -> str:
        return CARD_NAMES[self.code]

    def __repr__(self) -> str:
        return f"Card({CARD_NAMES[self.code]!r})"


def card_code(rank: int, suit: str) -> int:
    return SUITS.index(suit) * 13 + rank - 2


#: The jokers' names: small, big.
JOKER_NAMES: Final = ("SJ", "BJ")
CARD_NAMES: Final = tuple(RANK_NAME[c % 13 + 2] + SUITS[c // 13] for c in range(52)) + JOKER_NAMES
CARD_POINTS: Final = tuple({5: 5, 10: 10, 13: 10}.get(c % 13 + 2, 0) if c < 52 else 0 for c in range(N_CODES))
_BY_NAME: Final = {name: code for code, name in enumerate(CARD_NAMES)}
ALL_CARDS: Final = tuple(Card(c) for c in range(N_CODES))


def parse_rank(text: str) -> int:
    """Rank value 2…14 from ``2``…``10``/``T``, ``J``, ``Q``, ``K``, ``A`` (case-insensitive)."""
    key = str(text).strip().upper()
    if key == "T":
        key = "10"
    try:
        return RANK_VALUE[key]
    except KeyError:
        raise UnknownRankError(f"unknown rank {shown(text)}") from None


def parse_suit(text: str) -> str:
    key = str(text).strip().upper()
    if key not in SUITS:
        raise UnknownSuitError(f"unknown suit {shown(text)}")
    return key


def parse_card(text: str) -> Card:
    """Parse one card; raises :class:`UnknownCardError`."""
    if not isinstance(text, str):
        raise UnknownCardError(f"unknown card {shown(text)}")
    fast = _BY_NAME.get(text)
    if fast is not None:
        return ALL_CARDS[fast]
    key = text.strip().upper()
    if len(key) == 2 and key[0] == "T":
        key = "10" + key[1]
    code = _BY_NAME.get(key)
    if code is None:
        raise UnknownCardError(f"unknown card {shown(text)}")
    return ALL_CARDS[code]


@dataclass(frozen=True, slots=True)
class UnknownCard:
    """A card the camera saw but could not name in full (``deal-log.md``, "Unknown cards"): ``??``
    (a card, nothing more), ``J?`` (a jack, suit unknown), ``?H`` (a heart, rank unknown), ``?J``
    (a joker, big or small unknown). At most one of ``rank``, ``suit`` and ``joker`` is set.

    >>> parse_any("j?"), parse_any("?h"), parse_any("?J"), parse_any("t?")
    (UnknownCard('J?'), UnknownCard('?H'), UnknownCard('?J'), UnknownCard('10?'))
    >>> sorted(CARD_NAMES[c] for c in parse_any("?J").candidates), len(parse_any("??").candidates)
    (['BJ', 'SJ'], 54)
    """

    rank: int | None = None
    suit: str | None = None
    joker: bool = False

    @property
    def candidates(self) -> frozenset[int]:
        """The card codes it may be, from what is written of it."""
        return _CANDIDATES[(self.rank, self.suit, self.joker)]

    def __str__(self) -> str:
        if self.joker:
            return "?J"
        if self.rank is not None:
            return RANK_NAME[self.rank] + "?"
        if self.suit is not None:
            return "?" + self.suit
        return "??"

    def __repr__(self) -> str:
        return f"UnknownCard({str(self)!r})"


#: A card of a deal log: named, or seen but not (fully) named.
AnyCard = Card | UnknownCard


def _candidates(rank: int | None, suit: str | None, joker: bool) -> frozenset[int]:
    if joker:
        return frozenset((SMALL_JOKER, BIG_JOKER))
    if rank is not None:
        return frozenset(s * 13 + rank - 2 for s in range(4))
    if suit is not None:
        return frozenset(range(SUITS.index(suit) * 13, SUITS.index(suit) * 13 + 13))
    return frozenset(range(N_CODES))


_CANDIDATES: Final[dict[tuple[int | None, str | None, bool], frozenset[int]]] = {
    **{(r, None, False): _candidates(r, None, False) for r in RANK_NAME},
    **{(None, s, False): _candidates(None, s, False) for s in SUITS},
    (None, None, True): _candidates(None, None, True),
    (None, None, False): _candidates(None, None, False),
}


#: Every card and unknown card by its canonical spelling (``AH``, ``10?``, ``?H``, ``?J``, ``??``).
BY_SPELLING: Final[dict[str, AnyCard]] = {
    **{name: ALL_CARDS[code] for code, name in enumerate(CARD_NAMES)},
    **{name + "?": UnknownCard(rank=rank) for rank, name in RANK_NAME.items()},
    **{"?" + suit: UnknownCard(suit=suit) for suit in SUITS},
    "?J": UnknownCard(joker=True),
    "??": UnknownCard(),
}


def parse_any(text: str) -> AnyCard:
    """A named card, or an unknown one (``??``, ``J?``, ``?H``, ``?J``); raises
    :class:`UnknownCardError` for anything else."""
    fast = BY_SPELLING.get(text) if isinstance(text, str) else None
    if fast is not None:
        return fast
    if isinstance(text, str) and "?" in text:
        key = text.strip().upper()
        if key == "??":
            return UnknownCard()
        if key == "?J":
            return UnknownCard(joker=True)
        if len(key) == 2 and key[0] == "?" and key[1] in SUITS:
            return UnknownCard(suit=key[1])
        if key.endswith("?") and key[:-1] in (*RANK_VALUE, "T"):
            return UnknownCard(rank=parse_rank(key[:-1]))
        raise UnknownCardError(f"unknown card {shown(text)}")
    return parse_card(text)


def may_be_same(a: AnyCard, b: AnyCard) -> bool:
    """Whether two cards, either perhaps not named in full, can be one card: some card is both.

    >>> may_be_same(parse_any("K?"), parse_any("KS")), may_be_same(parse_any("??"), parse_any("BJ"))
    (True, True)
    >>> may_be_same(parse_any("?J"), parse_any("KS")), may_be_same(parse_any("5H"), parse_any("6H"))
    (False, False)
    """
    return bool(a.candidates & b.candidates)


def is_any_joker(card: AnyCard) -> bool:
    """A joker, named (``SJ``, ``BJ``) or of unknown size (``?J``).

    >>> [is_any_joker(parse_any(c)) for c in ("SJ", "?J", "??", "KS")]
    [True, True, False, False]
    """
    return card.is_joker if isinstance(card, Card) else card.joker


def format_any(cards: Iterable[AnyCard]) -> list[str]:
    return [str(c) for c in cards]


def parse_cards(texts: Iterable[str]) -> tuple[Card, ...]:
    return tuple(parse_card(t) for t in texts)


def format_cards(cards: Iterable[Card]) -> list[str]:
    return [str(c) for c in cards]


def full_deck(decks: int) -> list[Card]:
    """All cards of ``decks`` decks (54 each)."""
    return [card for card in ALL_CARDS for _ in range(decks)]
