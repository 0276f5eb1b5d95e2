"""Hand-written deal logs for the scoreboard tests, with their outcomes worked out by hand from
RULES.md (not by the engine) in the comments and constants below."""

from __future__ import annotations

import copy
from typing import Any

# Plays use ranks 6..A of hearts, diamonds and clubs only, so a deal can be replayed at levels 2..5
# and rotated to any dealer without changing who wins what.

# national-2deck, spades trump, dealer S. N wins trick 1 (AH), S wins trick 2 (QH): the defenders
# capture 0 and the dealer side wins the last trick, so D = 0: the dealer side goes up 3 and the
# dealer's partner deals next. E discarded 7C on a heart lead at trick 1 and played 7H at trick 2:
# a revoke by E at trick 1, proven at trick 2.
DEALER_SWEEP: dict[str, Any] = {
    "rules": "national-2deck",
    "level": "2",
    "trump": "S",
    "dealer": "S",
    "bottom": ["6D", "7D", "8D", "9D", "JD", "QD", "6C", "8C"],
    "tricks": [
        {"plays": [["S", ["6H"]], ["E", ["7C"]], ["N", ["AH"]], ["W", ["8H"]]]},
        {"plays": [["N", ["9H"]], ["W", ["JH"]], ["S", ["QH"]], ["E", ["7H"]]]},
    ],
    "finished": True,
}

# national-2deck, spades trump, dealer S. E wins trick 1 (AH) and trick 2 (leads AD), so the last
# trick: the bottom's 60 points (K K 10 10 K K) count double for a single lead = 120. D = 120 >= 80:
# the defenders take over, up by floor((120 - 80) / 40) = 1; the dealer's next seat (E) deals.
DEFENDERS_WIN: dict[str, Any] = {
    "rules": "national-2deck",
    "level": "2",
    "trump": "S",
    "dealer": "S",
    "bottom": ["KD", "KD", "10C", "10C", "KC", "KH", "9C", "9C"],
    "tricks": [
        {"plays": [["S", ["6H"]], ["E", ["AH"]], ["N", ["7H"]], ["W", ["8H"]]]},
        {"plays": [["E", ["AD"]], ["N", ["7D"]], ["W", ["8D"]], ["S", ["6D"]]]},
    ],
    "finished": True,
}


def deal(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(base)
    out.update(changes)
    return out


def dealt_by(base: dict[str, Any], dealer: str, level: str) -> dict[str, Any]:
    """The same cards with every seat rotated so that ``dealer`` deals at ``level``."""
    order = "SENW"
    shift = order.index(dealer)

    def rot(seat: str) -> str:
        return order[(order.index(seat) + shift) % 4]

    out = copy.deepcopy(base)
    out["dealer"] = rot(base["dealer"])
    out["level"] = level
    for trick in out["tricks"]:
        for play in trick["plays"]:
            play[0] = rot(play[0])
    return out
