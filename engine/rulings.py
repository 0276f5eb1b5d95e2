"""Standard referee rulings per rule set, for the ``rulings`` list of a deal log.

The engine never punishes on its own: a referee records a ruling (usually the default below) and
the score applies it. ``points`` count against the offending seat's side in the defenders' total;
``levels`` go to the non-offending side; ``deals_next`` hands the next deal to the non-offending
side.

>>> default_ruling("zhku-3deck", "revoke", "E")
{'seat': 'E', 'kind': 'revoke', 'points': 0, 'levels': 1, 'deals_next': True, 'note': 'seed 001 art. 18: non-offending side +1 level and deals next'}
>>> default_ruling("challenge-2deck", "failed_throw", "S", cards_taken_back=2)["points"]
20
"""

from __future__ import annotations

from typing import Any

from engine.rules import get_rule_set
from engine.seats import parse_seat
from engine.text import shown

_NOTES = {
    ("001", "revoke"): "seed 001 art. 18: non-offending side +1 level and deals next",
    ("001", "failed_throw"): "seed 001 art. 16: 20 points",
    ("002", "revoke"): "seed 002 table 4, level 2",
    ("002", "failed_throw"): "seed 002 table 4, level 1",
    ("004", "revoke"): "seed 004 罚则 7 / 判负: 80 points, non-offending side deals next",
    ("004", "failed_throw"): "seed 004 罚则 5: 10 points per card taken back",
}


class UnknownRulingKindError(ValueError):
    """A ruling kind other than ``revoke``, ``failed_throw`` or ``other``."""


def default_ruling(rules: str, kind: str, seat: str, *, cards_taken_back: int = 1) -> dict[str, Any]:
    """The rule set's standard penalty for a violation ``kind`` by ``seat``."""
    rs = get_rule_set(rules)
    parse_seat(seat)
    p = rs.penalties
    if kind == "revoke":
        points, levels, deals_next = p.revoke_points, p.revoke_levels, p.revoke_deals_next
    elif kind == "failed_throw":
        points, levels, deals_next = (
            p.failed_throw_points + p.failed_throw_per_card * cards_taken_back,
            0,
            False,
        )
    elif kind == "other":
        points, levels, deals_next = p.other_points, 0, False
    else:
        raise UnknownRulingKindError(f"unknown ruling kind {shown(kind)}")
    note = _NOTES.get((rs.seed, kind), f"seed {rs.seed} penalty")
    return {
        "seat": seat.upper(),
        "kind": kind,
        "points": points,
        "levels": levels,
        "deals_next": deals_next,
        "note": note,
    }
