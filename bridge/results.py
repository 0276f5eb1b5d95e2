"""A board's results in an event: IMPs of a score difference (law 78's scale) for teams, match
points of a traveller for pairs.

>>> imps(0), imps(20), imps(-50), imps(620), imps(4500)
(0, 1, -2, 12, 24)
>>> matchpoints([420, 420, 170, -50])
([5, 5, 2, 0], [1, 1, 4, 6])
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Final

#: The smallest difference worth each number of IMPs from 1 on (law 78B).
IMP_STEPS: Final = (
    20, 50, 90, 130, 170, 220, 270, 320, 370, 430, 500, 600,
    750, 900, 1100, 1300, 1500, 1750, 2000, 2250, 2500, 3000, 3500, 4000,
)  # fmt: skip


def imps(difference: int) -> int:
    """The IMPs of a score difference: 0–10 points 0, 20–40 1, … 4,000 and more 24; negative for a
    negative difference (scores are multiples of 10; one between two steps counts for the lower)."""
    if isinstance(difference, bool) or not isinstance(difference, int):
        raise TypeError(f"a score difference is a whole number, not {difference!r}")
    value = bisect_right(IMP_STEPS, abs(difference))
    return value if difference >= 0 else -value


def matchpoints(scores: Sequence[int]) -> tuple[list[int], list[int]]:
    """Match points of one board's N-S scores (a traveller): each line gets 2 for every other score
    it beats and 1 for every other it ties; E-W's is the top (2 × (lines − 1)) less N-S's. In the
    list's order."""
    for s in scores:
        if isinstance(s, bool) or not isinstance(s, int):
            raise TypeError(f"a score is a whole number, not {s!r}")
    ns = [sum(2 if s > t else 1 if s == t else 0 for t in scores) - 1 for s in scores]
    top = 2 * (len(scores) - 1)
    return ns, [top - m for m in ns]
