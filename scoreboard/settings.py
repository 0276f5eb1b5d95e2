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
    max_event_file_bytes: int = 1024 * 1024  # an imported event file (512 entries, rounds and results)
    session_hours: int = 12
    clock_tick_s: float = 5.0  # how often the round clocks are checked for their last-deal call
    migrate: bool = True
