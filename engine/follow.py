"""Follow obligations (跟牌): how closely a follow must match the lead's shape.

For the lead's components (biggest first) the rule set's :class:`~engine.rules.FollowPolicy` lists
fallback steps (seed 002 art. 13: pair → pair (split from a triple too) → any; triple → triple →
pair + single → any; pair tractor → tractor → as many pairs as possible → any; triple tractor →
triple tractor → two triples → triple + pair + single → triple + singles → pair tractor + 2 → two
pairs + 2 → pair + 4 → any). A cards multiset gets a *profile*: the lexicographically best vector
of step results it can achieve. A follow that plays ``n`` cards of the led suit class is legal iff
its own profile equals the best profile of the player's cards of that suit class.

The search is exact (all choices that matter for later steps are tried), so the profile is
monotone in the hand: more known cards can only raise it. That is what lets the evidence model
prove a revoke from a *lower bound* of the hand and never accuse on a guess.

>>> from engine.context import trump_context
>>> from engine.cards import parse_cards
>>> from engine.combos import counts_of
>>> from engine.rules import NATIONAL_FOLLOW
>>> ctx = trump_context(2, "S")
>>> hand = counts_of(parse_cards("9H 9H 5H 3H".split()))
>>> best_profile(hand, ctx, 1, [(2, 1)], NATIONAL_FOLLOW)
(1,)
>>> best_profile(counts_of(parse_cards(["5H", "3H"])), ctx, 1, [(2, 1)], NATIONAL_FOLLOW)
(0,)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from engine.combos import Component, Counts, Shape, runs, take, windows
from engine.context import TrumpContext
from engine.rules import FollowPolicy

#: Give up enumerating choices beyond this many per step (keeps the search bounded on big hands;
#: the result is then a lower bound, which can only make the engine accuse *less*).
MAX_CHOICES = 400


@dataclass(frozen=True, slots=True)
class _Slot:
    comp: int
    kind: str  # "full" | "tractor" | "ptep" | "triples" | "pairs"
    width: int
    length: int


def _slots(shapes: Sequence[Shape], policy: FollowPolicy) -> list[_Slot]:
    out: list[_Slot] = []
    for i, (width, length) in enumerate(shapes):
        size = width * length
        for step in policy.steps(width, length):
            if step == "tractor_full":
                out.append(_Slot(i, "full", width, length))
            elif step == "pair_tractor_else_pairs":
                out.append(_Slot(i, "ptep", 2, length))
            elif step in ("tractors", "pair_tractors"):
                w = width if step == "tractors" else 2
                out.extend(_Slot(i, "tractor", w, 0) for _ in range(size // (2 * w)))
            else:
                out.append(_Slot(i, step, 0, 0))
    return out


@dataclass(frozen=True, slots=True)
class FollowPlan:
    """The best achievable profile and one set of combinations that achieves it."""

    profile: tuple[int, ...]
    taken: tuple[Component, ...]


@lru_cache(maxsize=1024)
def _plan_of(shapes: tuple[Shape, ...], policy: FollowPolicy) -> tuple[tuple[_Slot, ...], tuple[bool, ...]]:
    """The slots of a lead's shapes, and for each whether a later slot's result depends on *which*
    cards earlier slots took."""
    slots = tuple(_slots(shapes, policy))
    later = tuple(
        any(s.kind in ("full", "tractor", "ptep", "triples") for s in slots[i + 1 :])
        for i in range(len(slots))
    )
    return slots, later


class _Search:
    def __init__(self, ctx: TrumpContext, cls: int, shapes: Sequence[Shape], policy: FollowPolicy):
        self.ctx, self.cls = ctx, cls
        self.slots, self.later_structured = _plan_of(tuple(shapes), policy)
        self.sizes = [w * n for w, n in shapes]
        self.memo: dict[tuple[int, tuple[tuple[int, int], ...], int], FollowPlan] = {}

    def run(self, counts: Counts) -> FollowPlan:
        if not self.slots:
            return FollowPlan((), ())
        return self._best(0, counts, self.sizes[self.slots[0].comp])

    def _best(self, i: int, counts: Counts, cap: int) -> FollowPlan:
        if i == len(self.slots):
            return FollowPlan((), ())
        key = (i, tuple(sorted(counts.items())), cap)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        slot = self.slots[i]
        best: FollowPlan | None = None
        for value, taken, rest in self._options(i, slot, counts, cap):
            left = cap - sum(c.size for c in taken)
            nxt = i + 1
            if nxt < len(self.slots) and self.slots[nxt].comp != slot.comp:
                left = self.sizes[self.slots[nxt].comp]
            sub = self._best(nxt, rest, left)
            cand = FollowPlan((value, *sub.profile), (*taken, *sub.taken))
            if best is None or cand.profile > best.profile:
                best = cand
        assert best is not None
        self.memo[key] = best
        return best

    def _options(
        self, i: int, slot: _Slot, counts: Counts, cap: int
    ) -> list[tuple[int, tuple[Component, ...], Counts]]:
        ctx, cls = self.ctx, self.cls
        none: list[tuple[int, tuple[Component, ...], Counts]] = [(0, (), counts)]
        if slot.kind == "ptep":
            longest = max((h - lo + 1 for lo, h in runs(counts, ctx, cls, 2)), default=0)
            if min(longest, cap // 2) >= 2:
                return [
                    (100 * value, comps, rest)
                    for value, comps, rest in self._options(i, _Slot(slot.comp, "tractor", 2, 0), counts, cap)
                ]
            return self._options(i, _Slot(slot.comp, "pairs", 0, slot.length), counts, cap)
        if slot.kind in ("full", "tractor"):
            width = slot.width
            if slot.kind == "full":
                length = slot.length
                if cap < width * length:
                    return none
            else:
                longest = max((h - lo + 1 for lo, h in runs(counts, ctx, cls, width)), default=0)
                length = min(longest, cap // width)
                if length < 2:
                    return none
            out: list[tuple[int, tuple[Component, ...], Counts]] = []
            seen: set[tuple[tuple[int, int], ...]] = set()
            for comp in windows(counts, ctx, cls, width, length):
                rest = take(counts, comp)
                sig = tuple(sorted(rest.items()))
                if sig in seen:
                    continue
                seen.add(sig)
                out.append((1 if slot.kind == "full" else length, (comp,), rest))
                if len(out) >= MAX_CHOICES or not self.later_structured[i]:
                    break
            return out or none
        width = 3 if slot.kind == "triples" else 2
        able = sorted(
            (code for code, v in counts.items() if v >= width),
            key=lambda c: (counts[c] != width, ctx.keys[c]),
        )
        k = min(len(able), cap // width, slot.length or cap)
        if k == 0:
            return none
        picks = combinations(able, k) if self.later_structured[i] else iter([tuple(able[:k])])
        out = []
        for n, pick in enumerate(picks):
            if n >= MAX_CHOICES:
                break
            comps = tuple(Component(width, (code,), ctx.keys[code]) for code in pick)
            rest = counts
            for comp in comps:
                rest = take(rest, comp)
            out.append((k, comps, rest))
        return out


def best_plan(
    counts: Counts, ctx: TrumpContext, cls: int, shapes: Sequence[Shape], policy: FollowPolicy
) -> FollowPlan:
    """Best follow profile of ``counts`` (cards of the led suit class) against the lead's shapes
    (biggest first), with combinations achieving it."""
    return _Search(ctx, cls, shapes, policy).run(counts)


def best_profile(
    counts: Counts, ctx: TrumpContext, cls: int, shapes: Sequence[Shape], policy: FollowPolicy
) -> tuple[int, ...]:
    if _one_pair(shapes, policy):
        return (1,) if any(n >= 2 for n in counts.values()) else (0,)
    return best_plan(counts, ctx, cls, shapes, policy).profile


def profile_ceiling(shapes: Sequence[Shape], policy: FollowPolicy) -> tuple[int, ...] | None:
    """The best profile any cards can reach against ``shapes``, where it is simply known (one pair
    led, to be followed by any pair: ``(1,)``); None elsewhere."""
    return (1,) if _one_pair(shapes, policy) else None


def _one_pair(shapes: Sequence[Shape], policy: FollowPolicy) -> bool:
    """One pair led, to be followed by any pair: the profile is whether the cards hold one."""
    return len(shapes) == 1 and shapes[0] == (2, 1) and policy.pair == ("pairs",)
