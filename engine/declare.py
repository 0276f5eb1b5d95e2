"""Trump declaration (亮主 / 反主 / 加固 / 定主) as a function of the declared cards.

Each :class:`Declaration` is one action: a seat laying out level cards (or jokers, where the rule
set allows) of one kind. Per rule set (``DeclarePolicy``):

- national (seed 002 art. 8, 21) and zhku (seed 001 art. 10): a bid is k same-suit level cards;
  another seat overrides with more (k' > k); the current declarer may add a same-suit level card
  (加固 / 防反) until someone else overrides; nobody may override himself.
- challenge (seed 004 (7)): a single level card declares; the declarer may reinforce it to a
  pair; another seat overrides a single with a level pair or a joker pair; a joker pair overrides
  a level pair and makes no-trump; a joker pair cannot open, nor override another joker pair.
- No declaration: national flips the bottom's first non-joker card (later deals; the first deal
  is redealt, art. 8), zhku lets the dealer (on the first deal the first drawer) name trump
  (art. 8), challenge plays no-trump.

On the first deal the last successful declarer becomes the dealer.

>>> from engine.cards import parse_cards
>>> d = [Declaration(Seat.S, parse_cards(["5H"])), Declaration(Seat.E, parse_cards(["5S", "5S"]))]
>>> r = resolve_trump("national-2deck", 5, d, first_deal=True)
>>> r.trump, r.dealer, r.accepted
('S', Seat.E, (True, True))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.cards import Card
from engine.rules import get_rule_set
from engine.seats import Seat


class DeclarationError(ValueError):
    """Declaration input that cannot be resolved (e.g. no bottom to flip)."""


@dataclass(frozen=True, slots=True)
class Declaration:
    seat: Seat
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class TrumpDecision:
    """``trump`` is a suit letter or ``"NT"``; ``dealer`` is set on a first deal (or ``None`` when
    the rules say to redeal); ``accepted[i]`` tells whether declaration i took effect."""

    trump: str | None
    dealer: Seat | None
    accepted: tuple[bool, ...]
    redeal: bool = False
    how: str = ""


@dataclass
class _Bid:
    seat: Seat
    suit: str | None  # None = jokers → no-trump
    count: int


def _kind(cards: Sequence[Card], level: int, jokers: bool) -> tuple[str | None, int] | None:
    """``(suit, count)`` of a valid declaring set: identical level cards, or a joker pair."""
    if not cards or len(set(cards)) != 1:
        return None
    card = cards[0]
    if card.is_joker:
        return (None, len(cards)) if jokers and len(cards) == 2 else None
    if card.rank != level:
        return None
    return (card.suit, len(cards))


def resolve_trump(
    rules_id: str,
    level: int,
    declarations: Sequence[Declaration],
    *,
    first_deal: bool,
    dealer: Seat | None = None,
    bottom: Sequence[Card] = (),
    named_trump: str | None = None,
    first_drawer: Seat | None = None,
) -> TrumpDecision:
    """Resolve a deal's declarations to its trump (and the first deal's dealer)."""
    rules = get_rule_set(rules_id)
    policy = rules.declare
    cur: _Bid | None = None
    accepted: list[bool] = []
    for d in declarations:
        kind = _kind(d.cards, level, policy.joker_pairs)
        ok = False
        if kind is not None:
            suit, count = kind
            if cur is not None and d.seat is cur.seat:
                # reinforcement of the standing bid (nobody overrode it yet), up to the deck count
                total = cur.count + count
                fits = not policy.pairs_only_override or total == 2
                if suit == cur.suit and suit is not None and total <= rules.decks and fits:
                    cur.count, ok = total, True
            elif cur is None:
                ok = suit is not None and count <= rules.decks
                if ok:
                    cur = _Bid(d.seat, suit, count)
            else:
                if policy.pairs_only_override:
                    if count == 2 and suit is None:
                        ok = cur.suit is not None  # joker pair beats a level single or pair
                    elif count == 2:
                        ok = cur.count == 1 and cur.suit is not None
                else:
                    ok = suit is not None and cur.count < count <= rules.decks
                if ok:
                    cur = _Bid(d.seat, suit, count)
        accepted.append(ok)
    if cur is not None:
        trump = cur.suit if cur.suit is not None else "NT"
        return TrumpDecision(trump, cur.seat if first_deal else dealer, tuple(accepted), how="declared")
    fallback = policy.fallback_first_deal if first_deal else policy.fallback_later
    if fallback == "no_trump":
        return TrumpDecision("NT", first_drawer if first_deal else dealer, tuple(accepted), how="no-trump")
    if fallback == "redeal":
        return TrumpDecision(None, None, tuple(accepted), redeal=True, how="redeal")
    if fallback == "dealer_names":
        if named_trump is None:
            raise DeclarationError("nobody declared: the dealer must name the trump suit")
        who = first_drawer if first_deal else dealer
        return TrumpDecision(named_trump, who, tuple(accepted), how="named by the dealer")
    for card in bottom:
        if not card.is_joker:
            return TrumpDecision(card.suit, dealer, tuple(accepted), how=f"flipped {card}")
    raise DeclarationError("nobody declared and the bottom has no card to flip")
