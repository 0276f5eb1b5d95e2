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

For speed the order is cut into blocks of :data:`BLOCK` consecutive entries, matched top down, each
on its own (a 512-entry round is 16 small matchings instead of one of 131,000 edges). The pairs of
a block that break a rule are not kept: their entries float down into the next block, as floaters
do in a Swiss system, so an excess of one unit or a knot of earlier opponents is untied lower down.
When the last block still breaks rules, the count is compared with the fewest breaks any pairing of
the whole field needs (a maximum-cardinality matching of the rule-keeping pairs); when it is more,
the whole field is matched at once. So a break is kept only when the whole field needs as many.

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

import networkx as nx

#: Entries matched at once (an even number); the whole field when it is no larger.
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

    def count(self, i: int, j: int) -> int:
        """How many rules pairing ``i`` with ``j`` (or the bye) breaks."""
        if j == self.dummy:
            return len(self.bye_breaks(self.order[i]))
        if i == self.dummy:
            return len(self.bye_breaks(self.order[j]))
        return len(self.breaks(self.order[i], self.order[j]))

    def valid(self, i: int, j: int) -> bool:
        return not self.count(i, j)

    def fewest_breaks(self, nodes: Sequence[int]) -> int:
        """A lower bound on the breaks of any perfect matching of ``nodes``: the pairs a maximum
        matching of the rule-keeping pairs leaves to be paired against a rule (each breaks one or
        more). A matching that breaks this many breaks the fewest there are."""
        graph: nx.Graph[int] = nx.Graph()
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
        graph: nx.Graph[int] = nx.Graph()
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
    found: list[tuple[int, int]] = []
    carried: list[int] = []
    for k, part in enumerate(blocks):
        here, broken = solver.solve(sorted(carried + part))
        if broken and k + 1 < len(blocks):
            # the pairs that break a rule float down into the next block, as Swiss floaters do
            bad = [p for p in here if not solver.valid(*p)]
            carried = [i for p in bad for i in p]
            here = [p for p in here if solver.valid(*p)]
        else:
            carried = []
        found += here
    total = sum(solver.count(*p) for p in found)
    if total and len(blocks) > 1 and total > solver.fewest_breaks(nodes):
        found, _ = solver.solve(nodes)
    pairs: list[tuple[str, str]] = []
    bye: str | None = None
    for i, j in found:
        if j == solver.dummy:
            bye = order[i]
        else:
            pairs.append((order[i], order[j]))
    return pairs, bye
