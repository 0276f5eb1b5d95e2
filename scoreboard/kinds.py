"""Each game's part on the scoreboard (the scoreboard's side of :mod:`games`' seam): the templates
its tables and logs are shown with, how a table's game folds over its deals (Shengji's levels;
bridge's boards, which do not depend on one another), when a scored log still cannot count, what
makes a posted log doubtful, and how a game at a table gives a board's result in a Shengji event
(the event file's form).

>>> kind_of("shengji").table
'_table.html'
>>> kind_of("bridge").doubt({"played": [5]}, {"boards": [5, 6], "round": 2}, {"board": 7})
'mismatch: board 7 is not one this table plays in round 2 (boards 5, 6)'
>>> from_levels({"levels": {"NS": "A", "EW": "A"}, "winner": "EW"}, "NS")
{'home_level': 'A', 'away_level': 'A', 'winner': 'away'}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from games import get_game
from scoreboard import scoring
from scoreboard.logs import continuity_doubt

SIDES: Final = ("NS", "EW")

#: A game's state (folded from its start over its counted deals) by (rules, deals, start).
Fold = Callable[
    [str | None, list[tuple[dict[str, Any], dict[str, Any]]], Mapping[str, Any] | None], list[dict[str, Any]]
]


def board_doubt(
    state: Mapping[str, Any], start: Mapping[str, Any] | None, log: Mapping[str, Any]
) -> str | None:
    """Why a bridge board posted at a table does not fit its game: a board the table's round does
    not play there (a bridge event's movement), or one the game already has."""
    board = log.get("board")
    boards = list((start or {}).get("boards") or [])
    if boards and board not in boards:
        listed = ", ".join(str(b) for b in boards)
        return (
            f"mismatch: board {board} is not one this table plays in round {(start or {}).get('round')} "
            f"(boards {listed})"
        )
    if board in (state.get("played") or []):
        return f"mismatch: board {board} was posted in this game before: the event counts the later one"
    return None


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
    #: the game's state before its first deal, from the table's rules and the game's start
    initial: Callable[[str | None, Mapping[str, Any] | None], dict[str, Any]]
    #: the game's state after each of its counted deals
    fold: Fold
    #: why a finished log's score cannot count yet (its unknown cards leave it open), or None
    still_open: Callable[[Mapping[str, Any]], str | None]
    #: why a log posted to a game is doubtful (from the game's state and start), or None
    doubt: Callable[[Mapping[str, Any], Mapping[str, Any] | None, Mapping[str, Any]], str | None]
    #: a board's result in a Shengji event from the game's state at its end, and the home side's
    #: seats (None: the game's events are not Shengji's)
    board_result: Callable[[Mapping[str, Any], str], dict[str, Any]] | None = None
    #: whether a referee rules on its deals with a Shengji ruling (points, levels)
    rulings: bool = False


def from_gomoku(state: Mapping[str, Any], home_side: str) -> dict[str, Any]:
    """A gomoku game's result in a Shengji-shaped event (the event file's form, levels): the winner
    a level ahead ("3" to "2"), a draw level ("2" to "2") for a referee to settle a knockout.

    >>> from_gomoku({"winner": "EW"}, "NS")
    {'home_level': '2', 'away_level': '3'}
    """
    winner = state.get("winner")
    if winner not in SIDES:
        return {"home_level": "2", "away_level": "2"}
    return (
        {"home_level": "3", "away_level": "2"}
        if winner == home_side
        else {"home_level": "2", "away_level": "3"}
    )


def _shengji_fold(
    rules: str | None, deals: list[tuple[dict[str, Any], dict[str, Any]]], start: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    return scoring.fold_states(rules, deals, start) if rules is not None else []


KINDS: Final[Mapping[str, GameKind]] = {
    "shengji": GameKind(
        card="_card.html",
        table="_table.html",
        deal="deal.html",
        initial=scoring.initial_state,
        fold=_shengji_fold,
        still_open=scoring.open_outcome,
        doubt=lambda state, _start, log: continuity_doubt(dict(state), dict(log)),
        board_result=from_levels,
        rulings=True,
    ),
    "bridge": GameKind(
        card="_bridge_card.html",
        table="_bridge_table.html",
        deal="bridge_board.html",
        initial=scoring.bridge_initial,
        fold=scoring.fold_boards,
        still_open=scoring.open_score,
        doubt=board_doubt,
    ),
    "gomoku": GameKind(
        card="_gomoku_card.html",
        table="_gomoku_table.html",
        deal="gomoku_game.html",
        initial=scoring.gomoku_initial,
        fold=scoring.fold_gomoku,
        still_open=lambda result: None,  # a gomoku log has no unknown stones
        doubt=lambda state, start, log: None,
        board_result=from_gomoku,
    ),
}


def event_result(game: str, state: Mapping[str, Any], home_side: str) -> dict[str, Any]:
    """A board's result in a Shengji event (``GameKind.board_result``) of a game that has one."""
    board_result = kind_of(game).board_result
    if board_result is None:
        raise ValueError(f"{game} tables are not played in Shengji events")
    return board_result(state, home_side)


def kind_of(game: str) -> GameKind:
    """The scoreboard's part of ``game`` (:class:`games.UnknownGameError` for one it does not know)."""
    get_game(game)
    return KINDS[game]
