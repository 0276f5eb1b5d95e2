"""Small builders for engine tests: logs from compact text."""

from __future__ import annotations

from typing import Any


def plays(*specs: str) -> dict[str, Any]:
    """``plays("S: AH AH", "E: 3H 9H")`` → a trick object."""
    out = []
    for spec in specs:
        seat, cards = spec.split(":")
        out.append([seat.strip(), cards.split()])
    return {"plays": out}


def log(
    rules: str, level: str, trump: str, dealer: str, *tricks: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "rules": rules,
        "level": level,
        "trump": trump,
        "dealer": dealer,
        "tricks": list(tricks),
    }
    data.update(extra)
    return data
