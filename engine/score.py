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
from typing import Any, cast

from engine.cards import CARD_POINTS, Card
from engine.context import TrumpContext, trump_context
from engine.deal_log import DealLog, DealLogError, LeaderError, parse_deal_log
from engine.evidence import TrickView, find_violations
from engine.results import (
    BottomResult,
    DealResult,
    Outcome,
    Range,
    Resolved,
    TrickResult,
    penalty_of,
    rulings_applied,
)
from engine.scoring import bottom_multiplier, outcome, points
from engine.seats import Seat
from engine.trick import InvalidSplitError, Lead, read_lead, winning_play
from engine.unknowns import evaluate_open

__all__ = [
    "BottomResult",
    "DealResult",
    "Outcome",
    "Range",
    "Resolved",
    "TrickResult",
    "evaluate",
    "penalty_of",
    "rulings_applied",
    "score_log",
]


def _lead(log: DealLog, t: int, ctx: TrumpContext) -> Lead:
    play = log.tricks[t].plays[0]
    try:
        return read_lead(
            cast(_Cards, play.cards), None if play.split is None else cast(_Split, play.split), ctx
        )
    except InvalidSplitError as exc:
        raise DealLogError(f"trick {t + 1}, play 1 ({play.seat}): {exc}") from None


_Cards = tuple[Card, ...]
_Split = tuple[_Cards, ...]
_Seen = tuple[tuple[Seat, _Cards], ...]


def evaluate(log: DealLog) -> DealResult:
    """Score a parsed log; raises :class:`DealLogError` for a leader who did not win the previous
    trick or an impossible declared split. A log with unknown cards is scored by
    :func:`engine.unknowns.evaluate_open`."""
    if log.unknown:
        return evaluate_open(log)
    ctx = trump_context(log.level, log.trump)
    dealer_side = log.dealer.side
    views: list[TrickView] = []
    results: list[TrickResult] = []
    captured = 0
    prev_winner: Seat | None = None
    for t, trick in enumerate(log.tricks):
        plays = trick.plays
        leader = plays[0].seat
        if prev_winner is not None and leader is not prev_winner:
            raise LeaderError(
                f"trick {t + 1}, play 1 ({leader}): {leader} led but {prev_winner} won trick {t}", t + 1
            )
        cards = cast("list[_Cards]", [p.cards for p in plays])  # every card named (see above)
        lead = read_lead(cards[0], None, ctx) if plays[0].split is None else _lead(log, t, ctx)
        pts = sum([CARD_POINTS[c.code] for p in cards for c in p])
        winner = None
        complete = len(plays) == 4
        if complete:
            winner = plays[winning_play(cards, lead, ctx)].seat
            if winner.side != dealer_side:
                captured += pts
        prev_winner = winner
        results.append(TrickResult(t + 1, leader, winner, pts, None, complete))
        views.append(TrickView(lead, cast(_Seen, tuple([(p.seat, p.cards) for p in plays]))))
    violations = find_violations(views, ctx, log.rules.follow)
    penalty = penalty_of(log)
    bottom = None
    result_outcome = None
    total = captured + penalty
    if log.finished:
        bottom_cards = cast(tuple[Card, ...], log.bottom or ())
        bpts = points(bottom_cards)
        mult = 0
        last = results[-1] if results else None
        if last is not None and last.winner is not None and last.winner.side != dealer_side:
            mult = bottom_multiplier(log.rules.bottom, views[-1].lead.components)
        bottom = BottomResult(bpts, mult, bpts * mult)
        total += bpts * mult
        side, levels, next_dealer = outcome(log.rules, log.dealer, total)
        result_outcome = rulings_applied(log, side, levels, next_dealer)
    return DealResult(
        tuple(results),
        captured,
        total,
        tuple(violations),
        bottom,
        result_outcome,
        penalty,
        finished=log.finished,
    )


def score_log(data: Mapping[str, Any]) -> dict[str, Any]:
    """Score a decoded JSON deal log and return the JSON-ready result; raises
    :class:`~engine.deal_log.DealLogError` for logs that cannot be read."""
    return evaluate(parse_deal_log(data)).to_json()
