"""Service settings (the admin token comes from ``TRACTORCAM_ADMIN_TOKEN``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field


def _admin_token_from_env() -> str | None:
    return os.environ.get("TRACTORCAM_ADMIN_TOKEN") or None


@dataclass(frozen=True)
class Settings:
    db_url: str = "sqlite:///scoreboard.db"
    admin_token: str | None = field(default_factory=_admin_token_from_env)
    max_deal_bytes: int = 256 * 1024  # a 3-deck deal log is ~10 kB
    max_event_bytes: int = 8 * 1024 * 1024  # an alert may carry a few evidence images
    max_body_bytes: int = 64 * 1024  # everything else (tables, users, rulings, corrections)
    session_hours: int = 12
    migrate: bool = True
