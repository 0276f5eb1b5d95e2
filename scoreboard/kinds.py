"""Each game's part on the scoreboard (the scoreboard's side of :mod:`games`' seam): the templates
its tables and logs are shown with, and how a game at a table gives a board's result in the
event (the event file's form).

>>> kind_of("shengji").table
'_table.html'
>>> from_levels({"levels": {"NS": "A", "EW": "A"}, "winner": "EW"}, "NS")
{'home_level': 'A', 'away_level': 'A', 'winner': 'away'}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from games import get_game

SIDES: Final = ("NS", "EW")


def from_levels(state: Mapping[str, Any], home_side: str) -> dict[str, Any]:
    """A Shengji board's result from its game's match state: each side's level (higher wins, equal
    draws); a side that passed A (``winner``) with the levels equal goes through as ``winner``."""
    levels = state.get("levels") or {"NS": "2", "EW": "2"}
    away_side = "EW" if home_side == "NS" else "NS"
    out: dict[str, Any] = {"home_level": str(levels[home_side]), "away_level": str(levels[away_side])}
    winner = state.get("winner")
    if winner in SIDES and out["home_level"] == out["away_level"]:
        out["winner"] = "home" if winner == home_side else "away"
    return out


@dataclass(frozen=True)
class GameKind:
    """How one game's tables live on the scoreboard."""

    #: the table's card on the all-tables page (a fragment; ``t`` is the table)
    card: str
    #: the table page's body (a fragment; ``t``, ``history``, ``call``)
    table: str
    #: a log's page with its versions
    deal: str
    #: a board's result in the event from the game's state at its end, and the home side's seats
    board_result: Callable[[Mapping[str, Any], str], dict[str, Any]]


KINDS: Final[Mapping[str, GameKind]] = {
    "shengji": GameKind(card="_card.html", table="_table.html", deal="deal.html", board_result=from_levels),
}


def kind_of(game: str) -> GameKind:
    """The scoreboard's part of ``game`` (:class:`games.UnknownGameError` for one it does not know)."""
    get_game(game)
    return KINDS[game]
