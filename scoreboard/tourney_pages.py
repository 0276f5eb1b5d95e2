"""The event's live pages: pairings, standings and the round clock (filled in below)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(include_in_schema=False)
