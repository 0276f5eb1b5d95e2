"""Request and response bodies (pydantic). Unknown keys are refused except inside deal logs,
whose contract (deal-log.md) allows added fields."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Seat = Literal["S", "E", "N", "W"]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100)]
Card = Annotated[str, StringConstraints(strip_whitespace=True, min_length=2, max_length=3)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TableCreate(Strict):
    name: Name
    rules: str | None = Field(default=None, max_length=40)


class TableCreated(Strict):
    id: str
    token: str


class UserCreate(Strict):
    username: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,60}$")]
    password: Annotated[str, StringConstraints(min_length=8, max_length=200)]
    role: Literal["referee", "admin"] = "referee"


class Login(Strict):
    username: str = Field(max_length=60)
    password: str = Field(max_length=200)


# --- the edge's event stream -------------------------------------------------------------------


class DealStart(Strict):
    type: Literal["deal_start"]
    rules: str | None = Field(default=None, max_length=40)
    level: str = Field(max_length=2)
    trump: Literal["S", "H", "D", "C", "NT"]
    dealer: Seat


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
    kind: Literal["revoke", "failed_throw", "mismatch"]
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


EdgeEvent = Annotated[DealStart | Play | TrickResult | AlertIn | Health, Field(discriminator="type")]


# --- referee work ------------------------------------------------------------------------------


class RulingIn(Strict):
    """A referee's ruling; omit the numbers to apply the rule set's standard penalty."""

    seat: Seat | None = None
    kind: Literal["revoke", "failed_throw", "other"] | None = None
    points: int | None = Field(default=None, ge=0, le=1000)
    levels: int | None = Field(default=None, ge=0, le=13)
    deals_next: bool | None = None
    trick: int | None = Field(default=None, ge=1, le=60)
    note: str = Field(default="", max_length=1000)


class AlertClose(Strict):
    note: str = Field(default="", max_length=1000)


class PlayFix(Strict):
    trick: int = Field(ge=1, le=60)
    seat: Seat
    cards: list[Card] = Field(min_length=1, max_length=60)


class Correction(Strict):
    """A new version of a deal: either a whole corrected log or one fixed play."""

    base_version: int = Field(ge=1)
    reason: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=1000)]
    log: dict[str, Any] | None = None
    fix: PlayFix | None = None


def one_line(errors: list[Any]) -> str:
    """A short message from pydantic errors: ``field.path: message; ...``."""
    parts = []
    for err in errors[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
        parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    return "; ".join(parts)
