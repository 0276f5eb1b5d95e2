"""The deck inventory settles unknown cards: each card exists ``decks`` times, so the cards a log
does not name are what its unknown cards can be.

:func:`options` gives, for each unknown card (a *slot*: the codes its written form allows), the
codes it takes in at least one consistent completion: an assignment of distinct card copies to all
slots within each code's remaining copies (and, for a finished deal, using every remaining copy).
A slot with one option is settled. Computed from one maximum matching and, per slot, reachability
in the graph of exchanges between slots (a card a slot may take has room if a chain of other slots
can each move on to a card with a copy to spare, or to the card this slot gives up).

>>> options([frozenset({1, 2}), frozenset({2})], {1: 1, 2: 1}, exact=True)
[frozenset({1}), frozenset({2})]
>>> options([frozenset({1, 2}), frozenset({1, 2})], {1: 1, 2: 2}, exact=False)
[frozenset({1, 2}), frozenset({1, 2})]
>>> options([frozenset({1})], {1: 0}, exact=False) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def _match(slots: Sequence[Sequence[int]], capacity: Mapping[int, int]) -> list[int] | None:
    """One assignment of a code to every slot within capacities (augmenting paths), or None;
    ``slots`` list each slot's codes in order, those with a copy left only."""
    holders: dict[int, list[int]] = {}
    assigned: list[int] = [-1] * len(slots)

    def augment(slot: int, seen: set[int]) -> bool:
        for code in slots[slot]:
            if code in seen:
                continue
            seen.add(code)
            held = holders.setdefault(code, [])
            if len(held) < capacity[code]:
                held.append(slot)
                assigned[slot] = code
                return True
            for i, other in enumerate(held):
                if augment(other, seen):
                    held[i] = slot
                    assigned[slot] = code
                    return True
        return False

    for slot, codes in enumerate(slots):
        for code in codes:  # a code with a copy free, else a path of moves that frees one
            held = holders.setdefault(code, [])
            if len(held) < capacity[code]:
                held.append(slot)
                assigned[slot] = code
                break
        else:
            if not augment(slot, set()):
                return None
    return assigned


def options(
    slots: Sequence[frozenset[int]], capacity: Mapping[int, int], *, exact: bool
) -> list[frozenset[int]] | None:
    """Per slot, the codes it takes in some completion; None when there is no completion (more
    unknown cards than copies left for them, or, with ``exact``, not exactly as many)."""
    have = sorted([code for code, n in capacity.items() if n > 0])
    if exact and sum([capacity[code] for code in have]) != len(slots):
        return None
    # A code without a copy left is no slot's option: each slot keeps the codes with one, in order.
    left = [[c for c in have if c in slot] for slot in slots]
    assigned = _match(left, capacity)
    if assigned is None:
        return None
    used: dict[int, int] = {}
    for code in assigned:
        used[code] = used.get(code, 0) + 1
    spare = {code for code in have if capacity[code] > used.get(code, 0)}
    # Edge a -> b: a slot holding a may move to b. Reverse edges for the search from the targets.
    into: dict[int, set[int]] = {code: set() for code in have}
    for codes, code in zip(left, assigned, strict=True):
        for other in codes:
            if other != code:
                into[other].add(code)
    reach_cache: dict[int, set[int]] = {}

    def room(target: int) -> set[int]:
        """Codes from which a chain of moves ends at a spare copy or at ``target``."""
        got = reach_cache.get(target)
        if got is None:
            got = spare | {target}
            stack = list(got)
            while stack:
                for prev in into[stack.pop()]:
                    if prev not in got:
                        got.add(prev)
                        stack.append(prev)
            reach_cache[target] = got
        return got

    out = []
    for codes, code in zip(left, assigned, strict=True):
        if len(codes) == 1:
            out.append(frozenset(codes))  # its one code, the one it holds
        else:
            ok = room(code)
            out.append(frozenset([c for c in codes if c in ok]))
    return out
