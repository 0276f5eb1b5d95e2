"""The alerts the rules engine proves: one per violation in a deal's score, kept in step with the
deal's current version (a corrected log that no longer proves one resolves it)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from scoreboard.logs import violation_reasoning
from scoreboard.models import Alert, Deal, ScoreTable
from scoreboard.rows import OPEN_ALERT, now

VIOLATION_ALERT_KIND = {
    "revoke": "revoke",
    "failed_throw": "failed_throw",
    "card_count": "mismatch",
    "overtime": "overtime",  # gomoku: a move over its time, for the referee to rule on (seed 004)
}
#: The ruling kind an alert suggests; a look or a refused log names none (the referee says which).
RULING_KIND = {"revoke": "revoke", "failed_throw": "failed_throw", "mismatch": "other"}


def sync_engine_alerts(s: Session, table: ScoreTable, deal: Deal, result: dict[str, Any]) -> list[Alert]:
    """One alert per violation the engine proves; engine alerts no longer proven are resolved.
    A violation the table itself raised as a ``look`` (the camera read the cards it rests on
    with doubt: :mod:`edge_app.events`) is held back while that look is open: the engine's
    reasoning joins the look, and the alert comes when a referee settles the look (the cards
    corrected or confirmed as read) and the violation is still proven. Returns the alerts changed."""
    existing = s.scalars(select(Alert).where(Alert.deal_id == deal.id)).all()
    seen = {(a.kind, a.seat, a.trick): a for a in existing}
    held = {
        (a.seat, a.trick): a
        for a in existing
        if a.kind == "look" and a.source == "edge" and a.seat is not None and a.status in OPEN_ALERT
    }
    proven: set[tuple[str, str | None, int | None]] = set()
    changed: list[Alert] = []
    for violation in result.get("violations", []) or []:
        kind = VIOLATION_ALERT_KIND.get(str(violation.get("kind")), "mismatch")
        # a gomoku overtime names its colour and move where a card game's violation names its seat and trick
        key = (kind, violation.get("seat"), violation.get("trick", violation.get("move")))
        proven.add(key)
        reasoning = violation_reasoning(violation, deal.seq)
        alert = seen.get(key)
        look = held.get((key[1], key[2]))
        if alert is None and look is not None:
            if reasoning not in look.reasoning:
                look.reasoning = f"{look.reasoning}\n{reasoning}".strip()
                changed.append(look)
            continue
        if alert is None:
            alert = Alert(
                table_id=table.id,
                deal_id=deal.id,
                kind=kind,
                seat=key[1],
                trick=key[2],
                proven_at=violation.get("proven_at"),
                reasoning=reasoning,
                source="engine",
                status="open",
                note="",
            )
            s.add(alert)
            seen[key] = alert
            changed.append(alert)
        elif alert.source == "edge" and "engine:" not in alert.reasoning:
            alert.reasoning = f"{alert.reasoning}\n{reasoning}".strip()
            alert.proven_at = alert.proven_at or violation.get("proven_at")
            changed.append(alert)
    for key, alert in seen.items():
        if alert.source == "engine" and key not in proven and alert.status in OPEN_ALERT:
            alert.status, alert.note, alert.resolved_at = (
                "resolved",
                "no longer proven by the corrected log",
                now(),
            )
            changed.append(alert)
    s.flush()
    return changed
