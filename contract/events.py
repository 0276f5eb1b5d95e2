"""The live events a table posts while a deal goes on (``POST /api/events``, one JSON object per
post, told apart by ``type``). :mod:`edge_app.events` makes them from the recognised deal; the
scoreboard shows them live and raises the alerts for a referee.

>>> from pydantic import TypeAdapter
>>> event = TypeAdapter(EdgeEvent).validate_python({"type": "play", "trick": 3, "seat": "E", "cards": ["AS", "AS"]})
>>> type(event).__name__, event.seat, event.cards
('Play', 'E', ['AS', 'AS'])
>>> from pydantic import ValidationError
>>> try:
...     TypeAdapter(EdgeEvent).validate_python({"type": "play", "trick": 0, "seat": "E", "cards": ["AS"]})
... except ValidationError as exc:
...     print(exc.errors()[0]["loc"], exc.errors()[0]["type"])
('play', 'trick') greater_than_equal
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from contract.base import Card, Seat, Strict, Trump


class DealStart(Strict):
    type: Literal["deal_start"]
    rules: str | None = Field(default=None, max_length=40)
    level: str = Field(max_length=2)
    trump: Trump
    dealer: Seat


class BoardStart(Strict):
    """A bridge board starting at the table (after the auction): its number, contract, declarer."""

    type: Literal["board_start"]
    board: int = Field(ge=1, le=999)
    contract: str = Field(max_length=6, description='"PASS", or e.g. "4HX"')
    declarer: Seat | None = None


class GameStart(Strict):
    """A gomoku game starting at the table (the clock starts)."""

    type: Literal["game_start"]
    size: int = Field(default=15, ge=5, le=26)


class Stone(Strict):
    """A gomoku move: the ``move``-th stone, its colour and point (``h8``), and the seconds since
    the move before (the first: since the clock started)."""

    type: Literal["stone"]
    move: int = Field(ge=1, le=676)
    colour: Literal["B", "W"]
    point: str = Field(min_length=2, max_length=3)
    seconds: float | None = Field(default=None, ge=0, le=86_400)


class LongThink(Strict):
    """A gomoku player asked for a long think (长考) for their next move."""

    type: Literal["long_think"]
    colour: Literal["B", "W"]


class Play(Strict):
    type: Literal["play"]
    trick: int = Field(ge=1, le=60)
    seat: Seat
    cards: list[Card] = Field(min_length=1, max_length=60)
    declared: list[list[Card]] | None = Field(default=None, max_length=20)  # a throw's split ("as")


class TrickResult(Strict):
    type: Literal["trick"]
    trick: int = Field(ge=1, le=60)
    winner: Seat
    points: int = Field(ge=0, le=600)


class EvidenceImage(Strict):
    content_type: Literal["image/jpeg", "image/png", "image/webp"]
    data: str = Field(max_length=3_000_000, description="base64")
    caption: str = Field(default="", max_length=200)


class AlertIn(Strict):
    type: Literal["alert"]
    kind: Literal["revoke", "failed_throw", "mismatch", "look"]
    seat: Seat | None = None
    trick: int | None = Field(default=None, ge=1, le=60)
    proven_at: int | None = Field(default=None, ge=1, le=60)
    reasoning: str = Field(default="", max_length=4000)
    images: list[EvidenceImage] = Field(default_factory=list, max_length=6)


class Health(Strict):
    type: Literal["health"]
    status: Literal["ok", "degraded", "down"]
    fps: float | None = Field(default=None, ge=0, le=1000)
    camera: str | None = Field(default=None, max_length=100)
    message: str | None = Field(default=None, max_length=500)


EdgeEvent = Annotated[
    DealStart | BoardStart | GameStart | Stone | LongThink | Play | TrickResult | AlertIn | Health,
    Field(discriminator="type"),
]


class EventPosted(Strict):
    """The scoreboard's answer to an event (201): the event's place in the feed, and the alert it
    raised, if any (an alert event, or a trick result that disagrees with the plays)."""

    event: int
    alert: int | None = None
