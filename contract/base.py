"""Field types and the base model the contract's bodies share."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints

from engine.seats import SeatName

Seat = SeatName  # the engine's seat names (engine.seats)
Trump = Literal["S", "H", "D", "C", "NT"]
Card = Annotated[str, StringConstraints(strip_whitespace=True, min_length=2, max_length=3)]


class Strict(BaseModel):
    """A body that refuses unknown keys."""

    model_config = ConfigDict(extra="forbid")
