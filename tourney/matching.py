"""Pairing as a maximum-weight perfect matching (networkx): the fewest rule breaks first, then the
preferences.

The entries are given top to bottom (``order``). Every two of them may be paired; a pair that
breaks hard rules (a rematch, two entries of one unit) costs a penalty per rule broken that
outweighs every preference together, so the matching breaks a rule only when no perfect matching
without that break exists, and then as few as it can, as bbpPairings and other Swiss engines do.
An odd count gets a dummy node: whoever it is matched with has the bye; a second bye is a break
too, and otherwise the lowest-placed entry gets it. Below the breaks, in order of weight: the bye
as low as possible, then the sum of the pairs' ``cost`` (for a Swiss round the squared
difference of points), then a seeded pseudo-random jitter (seed 001: "由电脑随机编排": among equal
choices the computer draws).

For speed the order is first cut into blocks of :data:`BLOCK` consecutive entries, each matched on
its own (a 512-entry round is 16 small matchings instead of one of 131,000 edges). When a block
cannot be paired without a break, the breaks are compared with the fewest any pairing of the whole
field needs (a maximum-cardinality matching of the rule-keeping pairs); while they are more, every
block with a break is merged with its neighbour and matched again, up to the whole field at once.
So a break is kept only when the whole field needs as many.

>>> order = ["A", "B", "C", "D", "E"]
>>> units = {"A": "x", "B": "x", "C": "y", "D": "y", "E": "z"}
>>> pairs, bye = pair_up(order, cost=lambda i, j: 0, breaks=lambda a, b: ("same_unit",) * (units[a] == units[b]),
...                      bye_breaks=lambda a: (), salt="doc")
>>> bye, all(units[a] != units[b] for a, b in pairs)
('E', True)
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Final

import networkx as nx  # type: ignore[import-untyped]

#: Entries matched at once before blocks are merged (an even number).
BLOCK: Final = 32
#: Jitter values are drawn below this.
JITTER: Final = 1 << 16

Cost = Callable[[int, int], int]
Breaks = Callable[[str, str], tuple[str, ...]]
ByeBreaks = Callable[[str], tuple[str, ...]]


def jitter(salt: str, a: str, b: str) -> int:
    """A reproducible pseudo-random number in ``[0, JITTER)`` for the pair ``{a, b}``."""
    low, high = sorted((a, b))
    digest = hashlib.blake2b(f"{salt}\x1f{low}\x1f{high}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % JITTER


class _Solver:
    def __init__(
        self, order: Sequence[str], cost: Cost, breaks: Breaks, bye_breaks: ByeBreaks, salt: str
    ) -> None:
        self.order = order
        self.cost = cost
        self.breaks = breaks
        self.bye_breaks = bye_breaks
        self.salt = salt
        self.n = len(order)
        #: the dummy node's index (the bye) when the count is odd
        self.dummy = self.n if self.n % 2 else None

    def valid(self, i: int, j: int) -> bool:
        if j == self.dummy:
            return not self.bye_breaks(self.order[i])
        if i == self.dummy:
            return not self.bye_breaks(self.order[j])
        return not self.breaks(self.order[i], self.order[j])

    def fewest_breaks(self, nodes: Sequence[int]) -> int:
        """A lower bound on the breaks of any perfect matching of ``nodes``: the pairs a maximum
        matching of the rule-keeping pairs leaves to be paired against a rule (each breaks one or
        more). A matching that breaks this many breaks the fewest there are."""
        graph = nx.Graph()
        graph.add_nodes_from(nodes)
        graph.add_edges_from((i, j) for x, i in enumerate(nodes) for j in nodes[x + 1 :] if self.valid(i, j))
        return len(nodes) // 2 - len(nx.max_weight_matching(graph, maxcardinality=True, weight=None))

    def solve(self, nodes: Sequence[int]) -> tuple[list[tuple[int, int]], int]:
        """The best perfect matching of ``nodes`` (indices into ``order``, maybe the dummy) and its
        count of rule breaks."""
        half = len(nodes) // 2
        pairs: list[tuple[int, int, int, int]] = []  # (i, j, breaks, cost)
        max_cost = 0
        for x, i in enumerate(nodes):
            for j in nodes[x + 1 :]:
                if j == self.dummy:
                    broken = len(self.bye_breaks(self.order[i]))
                    pairs.append((i, j, broken, 0))
                    continue
                if i == self.dummy:
                    broken = len(self.bye_breaks(self.order[j]))
                    pairs.append((j, i, broken, 0))
                    continue
                c = self.cost(i, j)
                max_cost = max(max_cost, c)
                pairs.append((i, j, len(self.breaks(self.order[i], self.order[j])), c))
        # lexicographic weights: breaks ≫ bye place ≫ cost ≫ jitter, all integers (exact)
        unit_cost = JITTER * (half + 1)
        all_costs = unit_cost * max_cost * half + JITTER * half
        unit_bye = all_costs + 1
        unit_break = unit_bye * (self.n + 1) + all_costs + 1
        base = unit_break * 3
        graph = nx.Graph()
        graph.add_nodes_from(nodes)
        for i, j, broken, c in pairs:
            if j == self.dummy:
                penalty = unit_break * broken + unit_bye * (self.n - 1 - i)
            else:
                penalty = (
                    unit_break * broken + unit_cost * c + jitter(self.salt, self.order[i], self.order[j])
                )
            graph.add_edge(i, j, weight=base - penalty)
        matched = nx.max_weight_matching(graph, maxcardinality=True)
        found = [(min(a, b), max(a, b)) for a, b in matched]
        if 2 * len(found) != len(nodes):
            raise AssertionError("a complete graph on an even count has a perfect matching")
        count = {(min(i, j), max(i, j)): b for i, j, b, _ in pairs}
        return found, sum(count[pair] for pair in found)


def pair_up(
    order: Sequence[str],
    *,
    cost: Cost,
    breaks: Breaks,
    bye_breaks: ByeBreaks,
    salt: str,
    block: int | None = BLOCK,
) -> tuple[list[tuple[str, str]], str | None]:
    """Pairs of ``order`` (each pair top-placed first, in no set order) and the entry with the bye.

    ``cost(i, j)`` (indices into ``order``, ``i < j``) is the preference cost of a pair, a
    non-negative integer; ``breaks(a, b)`` the hard rules pairing ``a`` with ``b`` breaks;
    ``bye_breaks(a)`` those a bye for ``a`` breaks. ``block=None`` matches the whole field at once.
    """
    n = len(order)
    solver = _Solver(order, cost, breaks, bye_breaks, salt)
    nodes = list(range(n)) + ([n] if n % 2 else [])
    size = len(nodes) if block is None else max(2, block - block % 2)
    blocks = [nodes[k : k + size] for k in range(0, len(nodes), size)]
    if len(blocks) > 1 and len(blocks[-1]) < size // 2:  # a short tail joins the block above it
        blocks[-2:] = [blocks[-2] + blocks[-1]]
    solved = [solver.solve(b) for b in blocks]
    fewest: int | None = None
    while len(blocks) > 1 and any(broken for _, broken in solved):
        if fewest is None:
            fewest = solver.fewest_breaks(nodes)
        if sum(broken for _, broken in solved) == fewest:
            break
        # every block with a break joins a neighbour: one without breaks (where its slack may
        # be) when there is one, else the one below; when that gains nothing, the whole field
        before = sum(broken for _, broken in solved)
        joined: list[list[int]] = []
        taken = [False] * len(blocks)
        for k in range(len(blocks)):
            if taken[k] or not solved[k][1]:
                continue
            free = [x for x in (k + 1, k - 1) if 0 <= x < len(blocks) and not taken[x] and not solved[x][1]]
            below = [x for x in (k + 1, k - 1) if 0 <= x < len(blocks) and not taken[x]]
            if not free and not below:
                continue
            other = (free or below)[0]
            taken[k] = taken[other] = True
            joined.append(sorted([k, other]))
        merged_blocks: list[list[int]] = []
        merged_solved: list[tuple[list[tuple[int, int]], int]] = []
        k = 0
        while k < len(blocks):
            if joined and joined[0][0] == k:
                low, high = joined.pop(0)
                merged_blocks.append(blocks[low] + blocks[high])
                merged_solved.append(solver.solve(merged_blocks[-1]))
                k = high + 1
            else:
                merged_blocks.append(blocks[k])
                merged_solved.append(solved[k])
                k += 1
        if sum(broken for _, broken in merged_solved) >= before:
            merged_blocks = [list(nodes)]
            merged_solved = [solver.solve(nodes)]
        blocks, solved = merged_blocks, merged_solved
    pairs: list[tuple[str, str]] = []
    bye: str | None = None
    for found, _ in solved:
        for i, j in found:
            if j == solver.dummy:
                bye = order[i]
            else:
                pairs.append((order[i], order[j]))
    return pairs, bye
