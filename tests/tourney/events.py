"""Building event files for the tests: boards written as W (home wins), D (draw), L (home loses)."""

from __future__ import annotations

from typing import Any

#: The levels a board ends at, by its outcome for the home side.
BOARD = {
    "W": {"home_level": "9", "away_level": "6"},
    "D": {"home_level": "8", "away_level": "8"},
    "L": {"home_level": "5", "away_level": "7"},
}


def board(outcome: str) -> dict[str, str]:
    return dict(BOARD[outcome])


def match(table: int, home: str, away: str, *boards: str | dict[str, Any]) -> dict[str, Any]:
    """A match; one board gives a single result, several a team's list (one per pair)."""
    results = [board(b) if isinstance(b, str) else b for b in boards]
    out: dict[str, Any] = {"table": table, "home": home, "away": away}
    if results:
        out["result"] = results[0] if len(results) == 1 else results
    return out


def event(
    entries: list[dict[str, Any]],
    rounds: list[list[dict[str, Any]]] = (),  # type: ignore[assignment]
    *,
    format: str = "swiss",  # noqa: A002 (the file's field)
    scoring: str = "zhku",
    seed: int = 42,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "format": format,
        "scoring": scoring,
        "seed": seed,
        "entries": entries,
        "rounds": [{"round": k + 1, "matches": items} for k, items in enumerate(rounds)],
        **extra,
    }


def teams(*ids: str, **fields: Any) -> list[dict[str, Any]]:
    """Team entries of two pairs each, each of its own unit."""
    return [
        {"id": i, "name": f"Team {i}", "unit": f"unit {i}", "pairs": [f"{i}1", f"{i}2"], **fields}
        for i in ids
    ]


def pairs(*ids: str, **fields: Any) -> list[dict[str, Any]]:
    """Pair entries, each of its own unit."""
    return [{"id": i, "name": f"Pair {i}", "unit": f"unit {i}", **fields} for i in ids]
