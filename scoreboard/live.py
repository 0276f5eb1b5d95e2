"""The deal in progress as the edge reports it: a partial deal log scored by the engine."""

from __future__ import annotations

from typing import Any

from contract.events import DealStart, Play, TrickResult
from scoreboard import scoring


def apply_live(
    live: dict[str, Any], table_rules: str | None, event: DealStart | Play | TrickResult
) -> dict[str, Any]:
    """The deal in progress after one edge event; the running score comes from the engine."""
    if isinstance(event, DealStart):
        return {
            "finished": False,
            "rules": event.rules or table_rules,
            "level": event.level,
            "trump": event.trump,
            "dealer": event.dealer,
            "tricks": [],
            "captured": 0,
            "trick_results": {},
        }
    # Copy only what changes (the live log grows to a whole deal; deep copies per play add up).
    live = dict(live) if not live.get("finished") else {"finished": False, "tricks": []}
    if isinstance(event, TrickResult):
        results = dict(live.get("trick_results") or {})
        results[str(event.trick)] = {"winner": event.winner, "points": event.points}
        live["trick_results"] = results
        return live
    tricks: list[dict[str, Any]] = list(live.get("tricks") or [])
    live["tricks"] = tricks
    while len(tricks) < event.trick:
        tricks.append({"plays": []})
    play: list[Any] = [event.seat, list(event.cards)]
    if event.declared:
        play.append({"as": event.declared})
    tricks[event.trick - 1] = {"plays": [*tricks[event.trick - 1]["plays"], play]}
    trick_done = len(tricks[event.trick - 1]["plays"]) >= 4
    if trick_done and all(live.get(k) for k in ("rules", "level", "trump", "dealer")):
        # The defenders' points change only when a trick completes: score then (engine).
        partial = {k: live[k] for k in ("rules", "level", "trump", "dealer")}
        partial.update(tricks=[t for t in tricks if t["plays"]], finished=False)
        try:
            result = scoring.score(partial)
        except scoring.ScoringError as exc:
            live["error"] = str(exc)
        else:
            live.pop("error", None)
            live["captured"] = result.get("captured")
            live["scored_tricks"] = result.get("tricks", [])
    return live


def trick_disagreement(live: dict[str, Any], event: TrickResult) -> str | None:
    """Why the edge's trick result differs from the engine's reading of the same plays, if it does."""
    scored = live.get("scored_tricks") or []
    if live.get("error") or len(scored) < event.trick:
        return None
    mine = scored[event.trick - 1]
    points, bounds = mine.get("points"), mine.get("points_range")
    fits = points == event.points or (
        points is None and bounds is not None and bounds[0] <= event.points <= bounds[1]
    )
    if mine.get("winner") in (None, event.winner) and fits:  # open values (unknown cards) fit too
        return None
    return (
        f"mismatch at trick {event.trick}: the table reported {event.winner} winning {event.points} points, "
        f"the engine reads the recorded plays as {mine.get('winner')} winning {mine.get('points')} points"
    )
