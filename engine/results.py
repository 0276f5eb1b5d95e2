"""What scoring a deal gives (:mod:`engine.score` for a deal whose cards are all named,
:mod:`engine.unknowns` for one with cards seen but not named): the result types and the rulings'
effect on the outcome and the defenders' total."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.cards import Card
from engine.deal_log import DealLog
from engine.evidence import Violation
from engine.seats import Seat

Range = tuple[int, int]


def _value(out: dict[str, Any], name: str, value: int | None, bounds: Range | None) -> None:
    """``name: value``, or ``name: null`` with ``name_range: [lo, hi]`` when the unknown cards
    leave it open."""
    out[name] = value
    if value is None and bounds is not None:
        out[f"{name}_range"] = list(bounds)


@dataclass(frozen=True, slots=True)
class TrickResult:
    trick: int
    leader: Seat
    winner: Seat | None
    points: int | None
    #: Bounds of ``points`` when the unknown cards leave them open (``points`` is then None).
    points_range: Range | None = None
    #: Whether the trick has its four plays (a complete trick whose winner is open has winner None).
    complete: bool = True
    #: The seats that may have won it, when the unknown cards leave the winner open.
    winner_possible: tuple[Seat, ...] = ()

    def to_json(self) -> dict[str, Any]:
        # ``_name_``: the seat's name, read without the cost of the enum's ``name`` property.
        out: dict[str, Any] = {"trick": self.trick, "leader": self.leader._name_}
        if self.complete:
            out["winner"] = None if self.winner is None else self.winner._name_
            if self.winner is None and self.winner_possible:
                out["winner_possible"] = [s.name for s in self.winner_possible]
        out["points"] = self.points
        if self.points is None and self.points_range is not None:
            out["points_range"] = list(self.points_range)
        return out


@dataclass(frozen=True, slots=True)
class BottomResult:
    points: int | None
    multiplier: int | None
    awarded: int | None
    points_range: Range | None = None
    multiplier_possible: tuple[int, ...] = ()
    awarded_range: Range | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        _value(out, "points", self.points, self.points_range)
        out["multiplier"] = self.multiplier
        if self.multiplier is None:
            out["multiplier_possible"] = list(self.multiplier_possible)
        _value(out, "awarded", self.awarded, self.awarded_range)
        return out


@dataclass(frozen=True, slots=True)
class Outcome:
    side: str
    levels: int
    next_dealer: Seat
    #: Levels awarded by referee rulings, by side (``NS``/``EW``).
    ruling_levels: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"side": self.side, "levels": self.levels, "next_dealer": self.next_dealer.name}
        if self.ruling_levels:
            out["ruling_levels"] = dict(self.ruling_levels)
        return out


@dataclass(frozen=True, slots=True)
class Resolved:
    """An unknown card that every completion of the log makes the same card (``index`` 0-based in
    its play; ``trick`` and ``seat`` None for a card of the bottom)."""

    trick: int | None
    seat: Seat | None
    index: int
    card: Card

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "trick": self.trick,
            "seat": None if self.seat is None else self.seat.name,
            "index": self.index,
            "card": str(self.card),
        }
        if self.trick is None:
            out["bottom"] = True
        return out


@dataclass(frozen=True, slots=True)
class DealResult:
    """The ``score`` result. With unknown cards, a value they leave open is None and its bounds (or
    the outcomes still possible) are given beside it; ``unknown`` counts the cards still open."""

    tricks: tuple[TrickResult, ...]
    captured: int | None
    defender_total: int | None
    violations: tuple[Violation, ...]
    bottom: BottomResult | None = None
    outcome: Outcome | None = None
    penalty: int = 0
    captured_range: Range | None = None
    defender_total_range: Range | None = None
    outcome_possible: tuple[Outcome, ...] = ()
    resolved: tuple[Resolved, ...] = ()
    unknown: int = 0
    finished: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tricks": [t.to_json() for t in self.tricks]}
        _value(out, "captured", self.captured, self.captured_range)
        if self.bottom is not None:
            out["bottom"] = self.bottom.to_json()
        _value(out, "defender_total", self.defender_total, self.defender_total_range)
        if self.finished:
            out["outcome"] = None if self.outcome is None else self.outcome.to_json()
            if self.outcome is None:
                out["outcome_possible"] = [o.to_json() for o in self.outcome_possible]
        if self.penalty:
            out["penalty"] = self.penalty
        out["violations"] = [v.to_json() for v in self.violations]
        if self.resolved:
            out["resolved"] = [r.to_json() for r in self.resolved]
        out["unknown"] = self.unknown
        return out


def rulings_applied(log: DealLog, side: str, levels: int, next_dealer: Seat) -> Outcome:
    """An outcome with the log's rulings: levels to the non-offending side, the next deal to it."""
    dealer_side = log.dealer.side
    ruling_levels: dict[str, int] = {}
    for ruling in log.rulings:
        other = "EW" if ruling.seat.side == "NS" else "NS"
        if ruling.levels:
            ruling_levels[other] = ruling_levels.get(other, 0) + ruling.levels
        if ruling.deals_next:
            next_dealer = log.dealer.partner if other == dealer_side else log.dealer.next
    return Outcome(side, levels, next_dealer, ruling_levels)


def penalty_of(log: DealLog) -> int:
    """The rulings' points in the defenders' total (against the dealer side adds, else subtracts)."""
    return sum(r.points if r.seat.side == log.dealer.side else -r.points for r in log.rulings)
