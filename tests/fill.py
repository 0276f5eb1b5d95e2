"""Whole deals from short hand-written ones, for tests whose outcomes are worked out by hand.

A finished deal log must account for the whole deal (``deal-log.md``): every card of the decks,
every hand played out, a full bottom. A test that reasons about a few tricks by hand gets a whole
deal from :func:`complete`, which puts *filler* tricks before the hand-written ones and pads the
bottom with cards worth no points, built so that the hand-written reasoning still holds:

* the dealer leads every filler trick with a single card and wins it, so the defenders capture
  nothing in them; the last filler trick is won by the seat that leads the first hand-written trick
  (with nothing in it worth points when that seat is a defender), so the order of leaders holds;
* no filler play breaks a follow obligation: a seat either follows the led suit class or holds none
  of it, in the filler and in the hand-written tricks alike (see :func:`_attempt`); and filler cards
  are no evidence against hand-written plays, since the evidence for a trick comes after it;
* the hand-written tricks stay the last ones, so the last trick (and the bottom multiplier) is
  theirs. Their numbers move up by :func:`offset`.

This module arranges cards and never scores; it reads the engine's card and trump-order tables to
arrange them, as a dealer would. The arrangement is found by a seeded search, so it is the same on
every run.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from typing import Any

from engine.cards import ALL_CARDS, Card, parse_card, parse_rank
from engine.context import TRUMP, trump_context
from engine.rules import get_rule_set
from engine.seats import parse_seat


class FillError(ValueError):
    """The short log cannot be completed this way (say so in the test data, not here)."""


def _cards(raw: Any) -> list[Card]:
    return [parse_card(c) for c in raw]


def complete(short: dict[str, Any], holds: dict[str, str] | None = None) -> dict[str, Any]:
    """A finished whole-deal log whose last tricks are ``short``'s (see the module docstring).

    ``holds`` names plain suits a seat is never void in during the filler (``{"W": "CD"}``), so
    that a test may change that seat's hand-written cards between those suits and keep the deal
    legal: the filler is then the same for both versions."""
    log = copy.deepcopy(short)
    rules = get_rule_set(log["rules"])
    ctx = trump_context(parse_rank(log["level"]), None if log["trump"] == "NT" else log["trump"])
    dealer = parse_seat(log["dealer"]).name
    seats = "SENW"
    tricks = log.get("tricks", [])
    used = {s: 0 for s in seats}
    later: dict[str, set[int]] = {s: set() for s in seats}
    pool: Counter[Card] = Counter({c: rules.decks for c in ALL_CARDS})
    for trick in tricks:
        for seat, cards, *_ in trick["plays"]:
            for card in _cards(cards):
                pool[card] -= 1
                used[seat] += 1
                later[seat].add(ctx.cls[card.code])
    if len(set(used.values())) != 1:
        raise FillError(f"the hand-written tricks give the seats different numbers of cards: {used}")
    for seat, suits in (holds or {}).items():
        later[seat] |= {"SHDC".index(suit) for suit in suits}
    bottom = _cards(log.get("bottom") or [])
    for card in bottom:
        pool[card] -= 1
    if any(n < 0 for n in pool.values()):
        raise FillError("a card appears more often than there are decks")
    # Pad the bottom with cards worth nothing, from the plainest end of the pool.
    spare = sorted(
        (c for c in pool.elements() if c.points == 0), key=lambda c: (ctx.cls[c.code] == TRUMP, c.code)
    )
    while len(bottom) < rules.bottom_size:
        if not spare:
            raise FillError("no point-free card left to pad the bottom")
        card = spare.pop(0)
        bottom.append(card)
        pool[card] -= 1
    first_leader = tricks[0]["plays"][0][0] if tricks else dealer
    filler = _filler(list(pool.elements()), ctx, dealer, first_leader, later)
    per_seat = len(filler)
    if per_seat + used[dealer] != rules.hand_size:
        raise FillError(f"{per_seat} filler tricks and {used[dealer]} hand-written cards are not a hand")
    log["bottom"] = [str(c) for c in bottom]
    log["tricks"] = filler + tricks
    log["finished"] = True
    return log


def offset(short: dict[str, Any]) -> int:
    """How many filler tricks :func:`complete` puts before ``short``'s tricks."""
    return len(complete(short)["tricks"]) - len(short.get("tricks", []))


def _turn(leader: str) -> list[str]:
    i = "SENW".index(leader)
    return ["SENW"[(i + k) % 4] for k in range(4)]


def _trick(dealer: str, cards: dict[str, Card]) -> dict[str, Any]:
    return {"plays": [[s, [str(cards[s])]] for s in _turn(dealer)]}


def _filler(
    pool: list[Card], ctx: Any, dealer: str, last_winner: str, later: dict[str, set[int]]
) -> list[dict[str, Any]]:
    """Filler tricks (see the module docstring), found by a seeded greedy search with restarts."""
    final: list[dict[str, Any]] = []
    if last_winner != dealer:
        final_cards = _handover(pool, ctx, dealer, last_winner)
        for card in final_cards.values():
            pool.remove(card)
        led = ctx.cls[final_cards[dealer].code]
        later = {s: later[s] | {led} for s in later}
        final = [_trick(dealer, final_cards)]
    rng = random.Random(0)
    for _ in range(20000):
        tricks = _attempt(pool, ctx, dealer, later, rng)
        if tricks is not None:
            return tricks + final
    raise FillError("no filler found: change the hand-written tricks")


def _handover(pool: list[Card], ctx: Any, dealer: str, winner: str) -> dict[str, Card]:
    """The last filler trick, led by the dealer and won by ``winner`` with nothing in it worth points."""
    key = ctx.keys
    for led in (0, 1, 2, 3, TRUMP):
        cards = sorted(
            (c for c in pool if ctx.cls[c.code] == led and not c.points), key=lambda c: key[c.code]
        )
        if len(cards) >= 4 and key[cards[-1].code] > key[cards[2].code]:
            low = iter(cards[:3])
            return {s: (cards[-1] if s == winner else next(low)) for s in _turn(dealer)}
    raise FillError(f"no point-free trick for {winner} to win before the hand-written tricks")


def _attempt(
    pool: list[Card], ctx: Any, dealer: str, later: dict[str, set[int]], rng: random.Random
) -> list[dict[str, Any]] | None:
    """One random try. Each suit class X gets a set of seats void in it (``void[X]``: never the
    dealer, never a seat that plays X in the hand-written tricks); every X-led trick is led by the
    dealer with the highest X card, followed in X by the other seats, and the void seats discard
    there a card of a class they are not void in (a plain card on a plain lead: a trump would win).
    Void seats hold no X card at any time, so no play breaks a follow obligation, in any order."""
    key, cls_of = ctx.keys, ctx.cls
    cards: dict[int, list[Card]] = {}
    for card in sorted(pool, key=lambda c: (-key[c.code], c.code)):
        cards.setdefault(cls_of[card.code], []).append(card)
    classes = sorted(cards)
    void = {
        x: {s for s in "SENW" if s != dealer and x not in later[s] and rng.random() < 0.5} for x in classes
    }
    discarded: dict[int, int] = {}
    for z in classes:
        width = 4 - len(void[z])
        base = len(cards[z]) % width
        choices = [d for d in range(base, len(cards[z]) + 1, width)][:3]
        discarded[z] = rng.choice(choices)
    # Discard slots: (led class, seat) for each trick led in that class and each seat void in it.
    slots: list[tuple[int, str]] = []
    for x in classes:
        n = (len(cards[x]) - discarded[x]) // (4 - len(void[x]))
        slots += [(x, s) for s in sorted(void[x]) for _ in range(n)]
    if len(slots) != sum(discarded.values()):
        return None
    # Which cards are discarded: the lowest of each class; placed into compatible slots.
    spare = [c for z in classes for c in cards[z][len(cards[z]) - discarded[z] :]]
    rng.shuffle(spare)
    rng.shuffle(slots)
    placed: dict[tuple[int, str], list[Card]] = {}
    for card in spare:
        z = cls_of[card.code]
        for i, (x, s) in enumerate(slots):
            if x != z and s not in void[z] and (z != TRUMP or x == TRUMP):
                placed.setdefault((x, s), []).append(card)
                del slots[i]
                break
        else:
            return None
    tricks: list[dict[str, Any]] = []
    for x in classes:
        led = cards[x][: len(cards[x]) - discarded[x]]
        width = 4 - len(void[x])
        for t in range(len(led) // width):
            group = iter(led[t * width : (t + 1) * width])  # highest first: the dealer's
            trick = {}
            for s in _turn(dealer):
                trick[s] = placed[(x, s)].pop() if s in void[x] else next(group)
            tricks.append(_trick(dealer, trick))
    rng.shuffle(tricks)
    return tricks
