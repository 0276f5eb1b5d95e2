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


def _match(slots: Sequence[frozenset[int]], capacity: Mapping[int, int]) -> list[int] | None:
    """One assignment of a code to every slot within capacities (augmenting paths), or None."""
    holders: dict[int, list[int]] = {}
    assigned: list[int] = [-1] * len(slots)

    def augment(slot: int, seen: set[int]) -> bool:
        for code in sorted(slots[slot]):
            if code in seen or capacity.get(code, 0) <= 0:
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

    for slot in range(len(slots)):
        if not augment(slot, set()):
            return None
    return assigned


def options(
    slots: Sequence[frozenset[int]], capacity: Mapping[int, int], *, exact: bool
) -> list[frozenset[int]] | None:
    """Per slot, the codes it takes in some completion; None when there is no completion (more
    unknown cards than copies left for them, or, with ``exact``, not exactly as many)."""
    if exact and sum(max(0, n) for n in capacity.values()) != len(slots):
        return None
    assigned = _match(slots, capacity)
    if assigned is None:
        return None
    used: dict[int, int] = {}
    for code in assigned:
        used[code] = used.get(code, 0) + 1
    spare = {code for code, n in capacity.items() if n > used.get(code, 0)}
    # Edge a -> b: a slot holding a may move to b. Reverse edges for the search from the targets.
    into: dict[int, set[int]] = {}
    for slot, code in enumerate(assigned):
        for other in slots[slot]:
            if other != code and capacity.get(other, 0) > 0:
                into.setdefault(other, set()).add(code)
    reach_cache: dict[int, set[int]] = {}

    def room(target: int) -> set[int]:
        """Codes from which a chain of moves ends at a spare copy or at ``target``."""
        got = reach_cache.get(target)
        if got is None:
            got = set(spare) | {target}
            stack = list(got)
            while stack:
                node = stack.pop()
                for prev in into.get(node, ()):
                    if prev not in got:
                        got.add(prev)
                        stack.append(prev)
            reach_cache[target] = got
        return got

    out = []
    for slot, code in enumerate(assigned):
        ok = room(code)
        out.append(frozenset(c for c in slots[slot] if c == code or (capacity.get(c, 0) > 0 and c in ok)))
    return out
