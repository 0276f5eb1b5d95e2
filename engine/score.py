"""Scoring a deal log: the ``tractorcam score`` result (``shared/spec/deal-log.md``).

>>> log = {"rules": "national-2deck", "level": "5", "trump": "H", "dealer": "S",
...        "tricks": [{"plays": [["S", ["AH", "AH"]], ["E", ["3H", "9H"]], ["N", ["2H", "2H"]],
...                              ["W", ["QH", "QH"]]]}], "finished": False}
>>> result = score_log(log)
>>> result["tricks"], result["captured"], result["violations"]
([{'trick': 1, 'leader': 'S', 'winner': 'S', 'points': 0}], 0, [])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.cards import Card
from engine.context import TrumpContext, trump_context
from engine.deal_log import DealLog, DealLogError, parse_deal_log
from engine.evidence import TrickView, Violation, find_violations
from engine.scoring import bottom_multiplier, outcome, points
from engine.seats import Seat
from engine.trick import InvalidSplitError, Lead, read_lead, winning_play


@dataclass(frozen=True, slots=True)
class TrickResult:
    trick: int
    leader: Seat
    winner: Seat | None
    points: int

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"trick": self.trick, "leader": self.leader.name}
        if self.winner is not None:
            out["winner"] = self.winner.name
        out["points"] = self.points
        return out


@dataclass(frozen=True, slots=True)
class BottomResult:
    points: int
    multiplier: int
    awarded: int


@dataclass(frozen=True, slots=True)
class Outcome:
    side: str
    levels: int
    next_dealer: Seat
    #: Levels awarded by referee rulings, by side (``NS``/``EW``).
    ruling_levels: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DealResult:
    tricks: tuple[TrickResult, ...]
    captured: int
    defender_total: int
    violations: tuple[Violation, ...]
    bottom: BottomResult | None = None
    outcome: Outcome | None = None
    penalty: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tricks": [t.to_json() for t in self.tricks], "captured": self.captured}
        if self.bottom is not None:
            out["bottom"] = {
                "points": self.bottom.points,
                "multiplier": self.bottom.multiplier,
                "awarded": self.bottom.awarded,
            }
        out["defender_total"] = self.defender_total
        if self.outcome is not None:
            out["outcome"] = {
                "side": self.outcome.side,
                "levels": self.outcome.levels,
                "next_dealer": self.outcome.next_dealer.name,
            }
            if self.outcome.ruling_levels:
                out["outcome"]["ruling_levels"] = dict(self.outcome.ruling_levels)
        if self.penalty:
            out["penalty"] = self.penalty
        out["violations"] = [v.to_json() for v in self.violations]
        return out


def _lead(log: DealLog, t: int, ctx: TrumpContext) -> Lead:
    play = log.tricks[t].plays[0]
    try:
        return read_lead(play.cards, play.split, ctx)
    except InvalidSplitError as exc:
        raise DealLogError(f"trick {t + 1}, play 1 ({play.seat}): {exc}") from None


def evaluate(log: DealLog) -> DealResult:
    """Score a parsed log; raises :class:`DealLogError` for a leader who did not win the previous
    trick or an impossible declared split."""
    ctx = trump_context(log.level, log.trump)
    dealer_side = log.dealer.side
    views: list[TrickView] = []
    results: list[TrickResult] = []
    captured = 0
    prev_winner: Seat | None = None
    for t, trick in enumerate(log.tricks):
        leader = trick.leader
        if prev_winner is not None and leader is not prev_winner:
            raise DealLogError(
                f"trick {t + 1}, play 1 ({leader}): {leader} led but {prev_winner} won trick {t}"
            )
        lead = _lead(log, t, ctx)
        cards = [p.cards for p in trick.plays]
        pts = points([c for p in cards for c in p])
        winner = None
        if trick.complete:
            winner = trick.plays[winning_play(cards, lead, ctx)].seat
            if winner.side != dealer_side:
                captured += pts
        prev_winner = winner
        results.append(TrickResult(t + 1, leader, winner, pts))
        views.append(TrickView(lead, tuple((p.seat, p.cards) for p in trick.plays)))
    violations = find_violations(views, ctx, log.rules.follow)
    penalty = 0
    for ruling in log.rulings:
        penalty += ruling.points if ruling.seat.side == dealer_side else -ruling.points
    bottom = None
    result_outcome = None
    total = captured + penalty
    if log.finished:
        bottom_cards: tuple[Card, ...] = log.bottom or ()
        bpts = points(bottom_cards)
        mult = 0
        last = results[-1] if results else None
        if last is not None and last.winner is not None and last.winner.side != dealer_side:
            mult = bottom_multiplier(log.rules.bottom, views[-1].lead.components)
        bottom = BottomResult(bpts, mult, bpts * mult)
        total += bottom.awarded
        side, levels, next_dealer = outcome(log.rules, log.dealer, total)
        ruling_levels: dict[str, int] = {}
        for ruling in log.rulings:
            other = "EW" if ruling.seat.side == "NS" else "NS"
            if ruling.levels:
                ruling_levels[other] = ruling_levels.get(other, 0) + ruling.levels
            if ruling.deals_next:
                next_dealer = log.dealer.partner if other == dealer_side else log.dealer.next
        result_outcome = Outcome(side, levels, next_dealer, ruling_levels)
    return DealResult(tuple(results), captured, total, tuple(violations), bottom, result_outcome, penalty)


def score_log(data: Mapping[str, Any]) -> dict[str, Any]:
    """Score a decoded JSON deal log and return the JSON-ready result; raises
    :class:`~engine.deal_log.DealLogError` for logs that cannot be read."""
    return evaluate(parse_deal_log(data)).to_json()
