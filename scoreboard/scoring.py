"""The scoreboard's only door to the rules engine (the single source of truth for scoring).

Nothing here scores a deal: it calls ``engine.score_log`` and folds ``engine.match.MatchState``
over a table's deals. The engine is imported lazily so the CLI starts fast.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class ScoringError(ValueError):
    """The engine refused a deal log (its one-line message names trick and play)."""


INITIAL_LEVELS = {"NS": "2", "EW": "2"}  # RULES.md: each side starts at 2, before any rule set is known


def score(log: Mapping[str, Any]) -> dict[str, Any]:
    from engine import DealLogError, score_log

    try:
        return score_log(log)
    except (DealLogError, ValueError) as exc:  # the engine refuses with ValueError subclasses
        raise ScoringError(str(exc)) from exc


def rules_known(rules: str) -> bool:
    """Whether the engine knows this rule set id."""
    from engine import RULE_SETS

    return rules in RULE_SETS


def state_dict(state: Any) -> dict[str, Any]:
    return {
        "levels": dict(state.levels),
        "dealer": state.dealer,
        "winner": state.winner,
        "rules": state.rules,
    }


def initial_state(rules: str | None) -> dict[str, Any]:
    if rules is None:
        return {"levels": dict(INITIAL_LEVELS), "dealer": None, "winner": None, "rules": None}
    from engine.match import MatchState

    return state_dict(MatchState.new(rules))


def fold_states(
    rules: str, deals: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]
) -> list[dict[str, Any]]:
    """The match state after each deal, folding ``MatchState.after_deal`` over (log, result) pairs."""
    from engine.match import MatchState

    state = MatchState.new(rules)
    after: list[dict[str, Any]] = []
    for index, (log, result) in enumerate(deals, start=1):
        try:
            state = state.after_deal(log, result)
        except (ValueError, KeyError, TypeError) as exc:
            raise ScoringError(f"deal {index}: cannot apply its outcome to the match: {exc}") from exc
        after.append(state_dict(state))
    return after


def default_ruling(rules: str, kind: str, seat: str) -> dict[str, Any]:
    from engine.rulings import default_ruling as engine_default

    return dict(engine_default(rules, kind, seat))
