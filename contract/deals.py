"""A finished deal log as a table posts it (``POST /api/deals``; the format is ``deal-log.md``).
Only its shape is checked here; the scoreboard's rules engine checks its content."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from contract.base import Card


class TrickIn(BaseModel):
    """One trick: ``[seat, cards]`` or ``[seat, cards, {"as": [[cards], ...]}]`` per play, lead first."""

    model_config = ConfigDict(extra="allow")
    plays: list[list[Any]] = Field(max_length=4)


class DealLogIn(BaseModel):
    """A deal log (``deal-log.md``); the rules engine checks its content. Posted by a table it may
    not carry ``rulings``: only a referee rules."""

    model_config = ConfigDict(extra="allow")
    rules: str = Field(max_length=40)
    level: str | int
    trump: str = Field(max_length=2)
    dealer: str = Field(max_length=1)
    bottom: list[Card] | None = Field(default=None, max_length=8)
    tricks: list[TrickIn] = Field(default_factory=list, max_length=60)
    finished: bool = False
    rulings: list[dict[str, Any]] | None = Field(default=None, max_length=20)


class TrickScore(BaseModel):
    """One trick of a score: ``winner`` null and ``points`` null with ``points_range`` when unknown
    cards leave them open (``deal-log.md``, "Unknown cards")."""

    model_config = ConfigDict(extra="allow")
    trick: int
    leader: str
    winner: str | None = None
    points: int | None = None


class DealScore(BaseModel):
    """The rules engine's score of a deal log (``deal-log.md``, "Output"): what ``tractorcam score``
    prints and what ``POST /api/deals`` answers (201). ``outcome`` is present for a finished deal
    (null with ``outcome_possible`` while unknown cards leave it open); the unknown-card fields
    (``unknown``, ``captured_range``, ``resolved``, ...) as that contract says."""

    model_config = ConfigDict(extra="allow")
    tricks: list[TrickScore]
    captured: int | None = None
    defender_total: int | None = None
    bottom: dict[str, Any] | None = None
    outcome: dict[str, Any] | None = None
    violations: list[dict[str, Any]] = Field(default_factory=list)
