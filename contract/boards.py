"""A finished bridge board as a table posts it (``POST /api/boards``; the log is ``games.md``'s
bridge log), and a finished gomoku game (``POST /api/gomoku``). Only their shape is checked here;
the scoreboard's rules check their content.

>>> board = BoardLogIn.model_validate(
...     {"game": "bridge", "board": 7, "contract": "3NT", "declarer": "S", "finished": True})
>>> board.board, board.contract, board.tricks
(7, '3NT', [])
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from contract.base import Card, Seat

Vulnerable = Literal["none", "NS", "EW", "both"]


class BridgeTrickIn(BaseModel):
    """One trick: ``[seat, card]`` per play, the lead first."""

    model_config = ConfigDict(extra="allow")
    plays: list[list[Any]] = Field(max_length=4)


class BoardLogIn(BaseModel):
    """A bridge log (``games.md``): the board, the contract and declarer, the tricks, a claim."""

    model_config = ConfigDict(extra="allow")
    game: Literal["bridge"]
    board: int = Field(ge=1, le=999)
    contract: str = Field(max_length=6, description='"PASS", or e.g. "4HX"')
    declarer: Seat | None = None
    vulnerable: Vulnerable | None = None
    dummy: list[Card] | None = Field(default=None, max_length=13)
    tricks: list[BridgeTrickIn] = Field(default_factory=list, max_length=13)
    claim: dict[str, Any] | None = None
    finished: bool = False


class BoardScore(BaseModel):
    """The bridge rules' score of a board (what ``tractorcam score`` prints for it): the dealer and
    vulnerability, each trick's winner, declarer's tricks before and after the revoke transfers,
    the result, each side's duplicate score (law 77) and the revokes proven."""

    model_config = ConfigDict(extra="allow")
    game: Literal["bridge"] = "bridge"
    board: int
    dealer: Seat
    vulnerable: Vulnerable
    tricks: list[dict[str, Any]] = Field(default_factory=list)
    declarer_tricks: int | None = None
    adjusted_tricks: int | None = None
    result: int | None = None
    score: dict[str, int] | None = None
    violations: list[dict[str, Any]] = Field(default_factory=list)


class GomokuLogIn(BaseModel):
    """A gomoku log (``games.md``): the board's size, the moves ``[colour, point, seconds]``, the
    long thinks each player asked for, whether the game is over."""

    model_config = ConfigDict(extra="allow")
    game: Literal["gomoku"]
    size: int = Field(default=15, ge=5, le=26)
    moves: list[list[Any]] = Field(default_factory=list, max_length=676)
    long_thinks: dict[str, list[int]] = Field(default_factory=dict)
    finished: bool = False


class GomokuScore(BaseModel):
    """The gomoku rules' score of a game (what ``tractorcam score`` prints for it)."""

    model_config = ConfigDict(extra="allow")
    game: Literal["gomoku"] = "gomoku"
    winner: Literal["B", "W"] | None = None
    line: list[str] | None = None
    moves: int
    draw: bool
    violations: list[dict[str, Any]] = Field(default_factory=list)
