"""Match state across deals: each side's level, the dealer, and the game's winner.

Levels run 2 … A; a side whose level would pass A wins the game (seed 001 art. 2, seed 002
art. 6). The deal's outcome moves the winning side up, referee rulings may award levels to a
side, and the next dealer comes from the outcome.

>>> m = MatchState.new("national-2deck")
>>> m.levels, m.dealer, m.winner
({'NS': '2', 'EW': '2'}, None, None)
>>> log = {"dealer": "S"}
>>> m = m.after_deal(log, {"outcome": {"side": "dealer", "levels": 3, "next_dealer": "N"}})
>>> m.levels, m.dealer
({'NS': '5', 'EW': '2'}, 'N')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from engine.cards import RANK_NAME, parse_rank
from engine.rules import get_rule_set
from engine.seats import parse_seat
from engine.text import shown


class MatchStateError(ValueError):
    """A deal result that cannot be applied (unfinished deal, unknown seat or side)."""


@dataclass(frozen=True, slots=True)
class MatchState:
    rules: str
    levels: dict[str, str] = field(default_factory=lambda: {"NS": "2", "EW": "2"})
    dealer: str | None = None
    winner: str | None = None
    deals: int = 0

    @classmethod
    def new(
        cls, rules: str, levels: Mapping[str, str] | None = None, dealer: str | None = None
    ) -> MatchState:
        """A match before its first deal: both sides at 2 unless ``levels`` says otherwise (an
        event may start a match at other levels), and the first dealer if it is known.

        >>> MatchState.new("national-2deck", {"NS": "5", "EW": "t"}, "e").levels
        {'NS': '5', 'EW': '10'}
        """
        get_rule_set(rules)
        start = {"NS": "2", "EW": "2"}
        for side, rank in (levels or {}).items():
            if side not in start:
                raise MatchStateError(f"unknown side {shown(side)} (NS or EW)")
            try:
                start[side] = RANK_NAME[parse_rank(rank)]
            except ValueError as exc:
                raise MatchStateError(f"{side}: {exc}") from None
        try:
            first = None if dealer is None else parse_seat(dealer).name
        except ValueError as exc:
            raise MatchStateError(str(exc)) from None
        return cls(rules=rules, levels=start, dealer=first)

    def level_of(self, side: str) -> int:
        return parse_rank(self.levels[side])

    def after_deal(self, log: Mapping[str, Any], result: Mapping[str, Any]) -> MatchState:
        """The state after a finished deal whose ``score`` result is ``result``."""
        out = result.get("outcome")
        if not isinstance(out, Mapping):
            raise MatchStateError("the deal is not finished (no outcome)")
        try:
            dealer = parse_seat(log.get("dealer"))
            next_dealer = parse_seat(out.get("next_dealer"))
        except ValueError as exc:
            raise MatchStateError(str(exc)) from None
        dealer_side = dealer.side
        other = "EW" if dealer_side == "NS" else "NS"
        gains = {"NS": 0, "EW": 0}
        gains[dealer_side if out.get("side") == "dealer" else other] += int(out.get("levels", 0))
        for side, n in dict(out.get("ruling_levels", {})).items():
            if side not in gains:
                raise MatchStateError(f"unknown side {shown(side)}")
            gains[side] += int(n)
        levels = dict(self.levels)
        winner = self.winner
        for side in ("NS", "EW") if dealer_side == "NS" else ("EW", "NS"):
            value = parse_rank(levels[side]) + gains[side]
            if value > 14:
                winner = winner or side
                value = 14
            levels[side] = RANK_NAME[value]
        return replace(self, levels=levels, dealer=next_dealer.name, winner=winner, deals=self.deals + 1)
