"""Hand-written deal logs for the scoreboard tests, with their outcomes worked out by hand from
RULES.md (not by the engine) in the comments and constants below.

A finished log must account for the whole deal, so each hand-written deal is the last tricks of a
whole one: :func:`tests.fill.complete` puts ``FILLER`` tricks before them that the dealer wins (the
defenders capture nothing there). A hand-written trick ``k`` is trick ``FILLER + k`` of the deal."""

from __future__ import annotations

import copy
from typing import Any

from tests.fill import complete, offset

# Plays use ranks 6..A of hearts, diamonds and clubs only, so a deal can be replayed at levels 2..5
# and rotated to any dealer without changing who wins what.

# national-2deck, spades trump, dealer S. N wins trick 1 (AH), S wins trick 2 (QH): the defenders
# capture 0 and the dealer side wins the last trick, so D = 0: the dealer side goes up 3 and the
# dealer's partner deals next. E discarded 7C on a heart lead at trick 1 and played 7H at trick 2:
# a revoke by E at trick 1, proven at trick 2.
_SWEEP: dict[str, Any] = {
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
_DEFENDERS: dict[str, Any] = {
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


DEALER_SWEEP = complete(_SWEEP)
DEFENDERS_WIN = complete(_DEFENDERS)
FILLER = offset(_SWEEP)
assert offset(_DEFENDERS) == FILLER
_SHORT = {id(DEALER_SWEEP): _SWEEP, id(DEFENDERS_WIN): _DEFENDERS}


def deal(base: dict[str, Any], *, holds: dict[str, str] | None = None, **changes: Any) -> dict[str, Any]:
    """A copy of ``base`` with ``changes``; for the hand-written deals above, the changes apply to
    the hand-written tricks and the deal is completed again (a finished log stays whole; ``holds``
    as in :func:`tests.fill.complete`)."""
    short = _SHORT.get(id(base))
    out = copy.deepcopy(short if short is not None else base)
    out.update(changes)
    if short is not None and out.get("finished", True):
        return complete(out, holds)
    return out


def misread_w_kc() -> tuple[dict[str, Any], dict[str, Any]]:
    """(truth, misread): DEFENDERS_WIN where W really discarded KC on E's AD at trick 2 and 8D lay
    in the bottom, and the camera read W's KC as 8D (8D three times in two decks). In the truth,
    E's trick 2 holds 10 points and the bottom 50: D = 10 + 50 x 2 = 110, so the defenders take
    over without going up (110 < 120). The filler keeps W holding clubs and diamonds, so both
    versions are legal deals with the same filler."""
    tricks = copy.deepcopy(_DEFENDERS["tricks"])
    tricks[1]["plays"][2][1] = ["KC"]  # W's play at hand-written trick 2
    bottom = list(_DEFENDERS["bottom"])
    bottom[bottom.index("KC")] = "8D"
    truth = deal(DEFENDERS_WIN, tricks=tricks, bottom=bottom, holds={"W": "CD"})
    misread = copy.deepcopy(truth)
    misread["tricks"][FILLER + 1]["plays"][2][1] = ["8D"]
    return truth, misread


def dealt_by(base: dict[str, Any], dealer: str, level: str) -> dict[str, Any]:
    """The same hand-written cards with every seat rotated so that ``dealer`` deals at ``level``,
    completed to a whole deal."""
    order = "SENW"
    shift = order.index(dealer)

    def rot(seat: str) -> str:
        return order[(order.index(seat) + shift) % 4]

    out = copy.deepcopy(_SHORT[id(base)])
    out["dealer"] = rot(out["dealer"])
    out["level"] = level
    for trick in out["tricks"]:
        for play in trick["plays"]:
            play[0] = rot(play[0])
    return complete(out)
