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

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from engine.cards import Card
from engine.combos import Counts, counts_of, has_above
from engine.context import TrumpContext
from engine.follow import best_profile, profile_ceiling
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


class TrickView(NamedTuple):
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


class Evidence:
    """Per seat and suit class, the cards the seat played in each trick (0-based), for lower bounds
    of hands."""

    def __init__(self, tricks: Sequence[TrickView], ctx: TrumpContext):
        self.tricks, self.cls_of = tricks, ctx.cls
        cls_of = ctx.cls
        #: ``[seat.index * 5 + cls]``: ``trick * 4 + play`` for each play of the seat with cards of
        #: that suit class, in order (a trick has at most four plays).
        self._where: list[list[int]] = [[] for _ in range(20)]
        where = self._where
        for t, view in enumerate(tricks):
            for p, (who, cards) in enumerate(view.plays):
                if len(cards) == 1:
                    where[who.index * 5 + cls_of[cards[0].code]].append(t * 4 + p)
                elif cards:
                    for cls in {cls_of[c.code] for c in cards}:
                        where[who.index * 5 + cls].append(t * 4 + p)
        #: ``[seat.index * 5 + cls]``: the last trick with such cards (-1 for none).
        self.last = [w[-1] >> 2 if w else -1 for w in where]

    def plays_from(self, seat: Seat, t: int, cls: int) -> list[tuple[int, tuple[Card, ...]]]:
        """The seat's cards of suit class ``cls`` per trick, from trick ``t`` on."""
        cls_of, tricks, where = self.cls_of, self.tricks, self._where[seat.index * 5 + cls]
        out: list[tuple[int, tuple[Card, ...]]] = []
        for at in where[bisect_left(where, t * 4) :]:
            cards = tricks[at >> 2].plays[at & 3][1]
            out.append(
                (at >> 2, cards if len(cards) == 1 else tuple([c for c in cards if cls_of[c.code] == cls]))
            )
        return out

    def steps(self, seat: Seat, t: int, cls: int) -> list[tuple[int, Counts]]:
        """``(k, counts)``: the seat's known cards of suit class ``cls`` at trick ``t`` after each
        trick ``k ≥ t`` in which that knowledge grew (the first entry is trick ``t`` itself)."""
        counts: Counts = {}
        out: list[tuple[int, Counts]] = [(t, counts)]
        for k, cards in self.plays_from(seat, t, cls):
            counts = dict(counts)
            for card in cards:
                counts[card.code] = counts.get(card.code, 0) + 1
            if k == t:
                out[0] = (t, counts)
            else:
                out.append((k, counts))
        return out


def _counts(plays: Sequence[tuple[int, tuple[Card, ...]]]) -> Counts:
    counts: Counts = {}
    for _, cards in plays:
        for card in cards:
            counts[card.code] = counts.get(card.code, 0) + 1
    return counts


def _fmt(cards: Sequence[Card]) -> str:
    return " ".join(str(c) for c in cards)


def find_violations(tricks: Sequence[TrickView], ctx: TrumpContext, follow: FollowPolicy) -> list[Violation]:
    ev = Evidence(tricks, ctx)
    cls_of = ctx.cls
    out: list[Violation] = []
    last = ev.last
    for t, view in enumerate(tricks):
        lead, plays, maybe_all, lead_open, lead_unsure = view
        leader, lead_cards = plays[0]
        size = len(lead_cards) if maybe_all is None else len(lead_cards) + len(maybe_all[0])
        if lead_unsure:
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
        elif len(lead.components) > 1 and not lead_open:  # a throw
            v = _failed_throw(ev, t, leader, lead, ctx)
            if v is not None:
                out.append(v)
        cls = None if lead_unsure else lead.cls
        plain = not (lead_open or lead.structured)  # following suit with every card is enough
        for i in range(1, len(plays)):
            seat, cards = plays[i]
            if (len(cards) if maybe_all is None else len(cards) + len(maybe_all[i])) != size:
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
            elif cls is not None:
                # (maybe: the play's unknown cards that could be of the led class)
                maybe = 0 if maybe_all is None else sum([1 for m in maybe_all[i] if cls in m])
                if plain and not maybe:
                    in_suit = 0
                    for c in cards:
                        if cls_of[c.code] == cls:
                            in_suit += 1
                    if in_suit >= size:
                        continue  # followed suit with every card: nothing to prove (see _revoke)
                if last[seat.index * 5 + cls] <= t:
                    continue  # no card of the class played after trick t: no proof against the seat
                v = _revoke(ev, t, seat, cards, lead, ctx, follow, size, maybe, lead_open)
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
    cls_of = ctx.cls
    in_suit = [c for c in cards if cls_of[c.code] == cls]
    if len(in_suit) + maybe >= size and (maybe or lead_open or not lead.structured):
        return None  # followed suit with every card (as far as can be known): nothing more to prove
    if len(in_suit) + maybe < size:
        plays = ev.plays_from(seat, t, cls)
        held_n = 0
        for i, (k, played) in enumerate(plays):
            held_n += len(played)
            if held_n > len(in_suit):
                return Violation(
                    "revoke",
                    seat,
                    t + 1,
                    k + 1,
                    f"{seat} played {len(in_suit)} of the led suit class to trick {t + 1} "
                    f"but held at least {held_n} (played by trick {k + 1})",
                    _held(_counts(plays[: i + 1])),
                )
        return None
    if not lead.structured:
        return None
    mine = best_profile(counts_of(in_suit), ctx, cls, lead.shapes, follow)
    if mine == profile_ceiling(lead.shapes, follow):
        return None  # no hand follows better
    plays = ev.plays_from(seat, t, cls)
    if not plays or plays[-1][0] == t:
        return None  # nothing played later in the class: the evidence is this follow itself
    if best_profile(_counts(plays), ctx, cls, lead.shapes, follow) <= mine:
        return None  # even all the evidence does not prove it
    for k, known in ev.steps(seat, t, cls):
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
