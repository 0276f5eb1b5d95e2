"""The evidence model: which rule breaks a deal log *proves*.

An overhead camera sees only played cards. Every card a seat plays from trick t on was in its
hand at trick t, so the cards a seat plays in tricks t…k are a lower bound of its hand at t,
growing with k. A follow at trick t is a proven revoke (藏张) once that lower bound shows the seat
could have followed better (more cards of the led suit class, or a better shape: see
``engine.follow``); a throw at trick t is proven failed once another seat's lower bound shows a
higher combination of the same shape as one of its components (seed 002 art. 11). ``proven_at``
is the first trick k whose plays make it certain. Nothing is reported that the evidence does not
prove: profiles are exact and monotone in the hand.

With unknown cards (``deal-log.md``), a :class:`TrickView` holds each play's *named* cards and,
per play, the suit classes each of its unknown cards could be. A violation is reported only when it
holds for every completion of the unknowns: an unknown card is never evidence; an unknown card of
the offender's play at trick t counts as of the led suit class whenever it could be; a lead with an
unknown card has a sure suit class only when all its cards can only be of one, and its shape is then
open, so only the count of led-class cards can prove a revoke there, and its throw cannot fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.cards import Card
from engine.combos import Counts, counts_of, has_above
from engine.context import TrumpContext
from engine.follow import best_profile
from engine.rules import FollowPolicy
from engine.seats import Seat
from engine.trick import Lead


@dataclass(frozen=True, slots=True)
class Violation:
    """A rule break the log proves: ``trick`` and ``proven_at`` are 1-based."""

    kind: str  # "revoke" | "failed_throw" | "card_count"
    seat: Seat
    trick: int
    proven_at: int
    reason: str
    evidence: tuple[Card, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "seat": self.seat.name,
            "trick": self.trick,
            "proven_at": self.proven_at,
            "reason": self.reason,
            "evidence": [str(c) for c in self.evidence],
        }


@dataclass(frozen=True, slots=True)
class TrickView:
    """What the evidence model needs of one trick: its lead and each seat's (named) cards; with
    unknown cards, per play the suit classes each unknown card could be (``maybe``), the lead's
    class sure but its shape open (``lead_open``), or its class open too (``lead_unsure``)."""

    lead: Lead
    plays: tuple[tuple[Seat, tuple[Card, ...]], ...]
    maybe: tuple[tuple[frozenset[int], ...], ...] | None = None
    lead_open: bool = False
    lead_unsure: bool = False

    def size(self, i: int) -> int:
        """How many cards play ``i`` holds, named or not."""
        return len(self.plays[i][1]) + (len(self.maybe[i]) if self.maybe is not None else 0)

    def could_be(self, i: int, cls: int) -> int:
        """How many of play ``i``'s unknown cards could be of suit class ``cls``."""
        return 0 if self.maybe is None else sum(1 for m in self.maybe[i] if cls in m)


def _suit(cards: Sequence[Card], ctx: TrumpContext, cls: int) -> list[Card]:
    return [c for c in cards if ctx.cls[c.code] == cls]


class Evidence:
    """Per seat and suit class, the cards the seat played in each trick (0-based), for lower bounds
    of hands."""

    def __init__(self, tricks: Sequence[TrickView], ctx: TrumpContext):
        self.cls_of = ctx.cls
        self._index: dict[tuple[Seat, int], list[tuple[int, tuple[Card, ...]]]] = {}
        self._by_seat: dict[Seat, list[tuple[int, tuple[Card, ...]]]] = {s: [] for s in Seat}
        for t, view in enumerate(tricks):
            for who, cards in view.plays:
                self._by_seat[who].append((t, cards))

    def _plays(self, seat: Seat, cls: int) -> list[tuple[int, tuple[Card, ...]]]:
        """The seat's cards of suit class ``cls`` per trick, built on first use."""
        key = (seat, cls)
        got = self._index.get(key)
        if got is None:
            cls_of = self.cls_of
            got = []
            for t, cards in self._by_seat[seat]:
                mine = tuple([c for c in cards if cls_of[c.code] == cls])
                if mine:
                    got.append((t, mine))
            self._index[key] = got
        return got

    def steps(self, seat: Seat, t: int, cls: int) -> list[tuple[int, Counts]]:
        """``(k, counts)``: the seat's known cards of suit class ``cls`` at trick ``t`` after each
        trick ``k ≥ t`` in which that knowledge grew (the first entry is trick ``t`` itself)."""
        counts: Counts = {}
        out: list[tuple[int, Counts]] = [(t, counts)]
        for k, cards in self._plays(seat, cls):
            if k < t:
                continue
            counts = dict(counts)
            for card in cards:
                counts[card.code] = counts.get(card.code, 0) + 1
            if k == t:
                out[0] = (t, counts)
            else:
                out.append((k, counts))
        return out


def _fmt(cards: Sequence[Card]) -> str:
    return " ".join(str(c) for c in cards)


def find_violations(tricks: Sequence[TrickView], ctx: TrumpContext, follow: FollowPolicy) -> list[Violation]:
    ev = Evidence(tricks, ctx)
    out: list[Violation] = []
    for t, view in enumerate(tricks):
        lead = view.lead
        leader, lead_cards = view.plays[0]
        size = view.size(0)
        if view.lead_unsure:
            pass  # the lead's class is open: only the cards' count can break a rule
        elif lead.cls is None:
            out.append(
                Violation(
                    "failed_throw",
                    leader,
                    t + 1,
                    t + 1,
                    f"{leader} led {_fmt(lead_cards)}, which mixes suit classes",
                    lead_cards,
                )
            )
        elif lead.is_throw and not view.lead_open:
            v = _failed_throw(ev, t, leader, lead, ctx)
            if v is not None:
                out.append(v)
        for i, (seat, cards) in enumerate(view.plays[1:], start=1):
            if view.size(i) != size:
                out.append(
                    Violation(
                        "card_count",
                        seat,
                        t + 1,
                        t + 1,
                        f"{seat} played {view.size(i)} cards to a {size}-card lead",
                        cards,
                    )
                )
            elif lead.cls is not None and not view.lead_unsure:
                v = _revoke(
                    ev, t, seat, cards, lead, ctx, follow, size, view.could_be(i, lead.cls), view.lead_open
                )
                if v is not None:
                    out.append(v)
    return out


def _revoke(
    ev: Evidence,
    t: int,
    seat: Seat,
    cards: tuple[Card, ...],
    lead: Lead,
    ctx: TrumpContext,
    follow: FollowPolicy,
    size: int,
    maybe: int = 0,
    lead_open: bool = False,
) -> Violation | None:
    """``maybe``: the play's unknown cards that could be of the led class (counted as if they
    were); ``lead_open``: the lead's shape is not known (only the count can prove a revoke)."""
    cls = lead.cls
    assert cls is not None
    in_suit = _suit(cards, ctx, cls)
    if len(in_suit) + maybe >= size and (maybe or lead_open or not lead.structured):
        return None  # followed suit with every card (as far as can be known): nothing more to prove
    steps = ev.steps(seat, t, cls)
    if len(in_suit) + maybe < size:
        for k, known in steps:
            if sum(known.values()) > len(in_suit):
                held = _held(known)
                return Violation(
                    "revoke",
                    seat,
                    t + 1,
                    k + 1,
                    f"{seat} played {len(in_suit)} of the led suit class to trick {t + 1} "
                    f"but held at least {sum(known.values())} (played by trick {k + 1})",
                    held,
                )
        return None
    if not lead.structured:
        return None
    mine = best_profile(counts_of(in_suit), ctx, cls, lead.shapes, follow)
    last_k, last = steps[-1]
    if best_profile(last, ctx, cls, lead.shapes, follow) <= mine:
        return None  # even all the evidence does not prove it
    for k, known in steps:
        if best_profile(known, ctx, cls, lead.shapes, follow) > mine:
            return Violation(
                "revoke",
                seat,
                t + 1,
                k + 1,
                f"{seat} followed {_fmt(cards)} to trick {t + 1} but held a closer match "
                f"to the lead's shape (cards played by trick {k + 1})",
                _held(known),
            )
    raise AssertionError("unreachable: the last step proved it")


def _held(counts: Counts) -> tuple[Card, ...]:
    return tuple(Card(code) for code, n in sorted(counts.items()) for _ in range(n))


def _failed_throw(ev: Evidence, t: int, leader: Seat, lead: Lead, ctx: TrumpContext) -> Violation | None:
    cls = lead.cls
    assert cls is not None
    first: tuple[int, Seat, Counts] | None = None
    for seat in Seat:
        if seat is leader:
            continue
        for k, known in ev.steps(seat, t, cls):
            if first is not None and k >= first[0]:
                break
            if any(has_above(known, ctx, cls, c.shape, c.top) for c in lead.components):
                first = (k, seat, known)
                break
    if first is None:
        return None
    k, seat, known = first
    return Violation(
        "failed_throw",
        leader,
        t + 1,
        k + 1,
        f"{leader}'s throw at trick {t + 1} could be beaten: {seat} held a higher "
        f"combination (cards played by trick {k + 1})",
        _held(known),
    )
