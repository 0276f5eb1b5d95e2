"""The scoreboard's only door to the games' rules (the single source of truth for scoring).

Nothing here scores a log: it asks the log's game (:mod:`games`; Shengji's rules are
``engine.score_log``) and folds ``engine.match.MatchState`` over a Shengji table's deals. The rules
are imported lazily so the CLI starts fast.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class ScoringError(ValueError):
    """The engine refused a deal log (its one-line message names trick and play)."""


INITIAL_LEVELS = {"NS": "2", "EW": "2"}  # RULES.md: each side starts at 2, before any rule set is known


def score(log: Mapping[str, Any]) -> dict[str, Any]:
    """The log scored by its game's rules; :class:`ScoringError` with their one line if they refuse it
    (or the game is not one tractorcam knows)."""
    from games import UnknownGameError, game_of

    try:
        game = game_of(log)
        return game.score(log)
    except (UnknownGameError, ValueError) as exc:  # the games' errors are ValueError subclasses
        raise ScoringError(str(exc)) from exc


def game_of(log: Mapping[str, Any]) -> str:
    """The name of a log's game (Shengji's for a log that names none)."""
    from games import DEFAULT_GAME

    name = log.get("game", DEFAULT_GAME)
    return name if isinstance(name, str) else DEFAULT_GAME


def open_outcome(result: Mapping[str, Any]) -> str | None:
    """Why a finished deal cannot move the levels yet: its unknown cards leave the outcome open (a
    referee settles them); None when the outcome is known."""
    if result.get("outcome") is not None:
        return None
    possible = "; ".join(f"{o.get('side')} +{o.get('levels')}" for o in result.get("outcome_possible") or [])
    return (
        f"the outcome depends on {result.get('unknown', 0)} unknown card(s): a referee settles them "
        f"(possible: {possible})"
    )


def open_score(result: Mapping[str, Any]) -> str | None:
    """Why a finished bridge board cannot be scored yet: its unknown cards leave declarer's tricks
    open (a referee settles them); None when the score is known."""
    if result.get("score") is not None:
        return None
    tricks = result.get("adjusted_tricks_range") or result.get("declarer_tricks_range") or ["?", "?"]
    return (
        f"the score depends on {result.get('unknown', 0)} unknown card(s): a referee settles them "
        f"(declarer's tricks {tricks[0]} to {tricks[1]})"
    )


def board_line(log: Mapping[str, Any], result: Mapping[str, Any]) -> dict[str, Any]:
    """A bridge board as its traveller line shows it: board, contract, declarer, result, score."""
    return {
        "board": log.get("board"),
        "contract": log.get("contract"),
        "declarer": log.get("declarer"),
        "result": result.get("result"),
        "score": result.get("score"),
    }


def bridge_initial(rules: str | None = None, start: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A bridge table's game before its first board: no boards played."""
    return {"boards": 0, "played": [], "last": None}


def fold_boards(
    rules: str | None,
    deals: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
    start: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """A bridge table's game after each board: how many boards, which, and the last one's line.
    Bridge boards do not depend on one another (no levels carry over), so nothing else folds."""
    after: list[dict[str, Any]] = []
    played: list[int] = []
    for index, (log, result) in enumerate(deals, start=1):
        played = [*played, int(log.get("board") or 0)]
        after.append({"boards": index, "played": played, "last": board_line(log, result)})
    return after


#: The side whose player holds black at a gomoku table (black sits at S, the board's row 1).
BLACK_SIDE = "NS"


def gomoku_initial(rules: str | None = None, start: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A gomoku table's game before its first game is posted."""
    return {"games": 0, "last": None, "winner": None, "draw": False}


def fold_gomoku(
    rules: str | None,
    deals: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
    start: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """A gomoku table's game after each game posted: how many, and the last one's result; its
    ``winner`` the side of the last game's winner (black is N-S), which ends an event's match."""
    after: list[dict[str, Any]] = []
    for index, (_, result) in enumerate(deals, start=1):
        colour = result.get("winner")
        side = None if colour is None else BLACK_SIDE if colour == "B" else "EW"
        after.append(
            {
                "games": index,
                "last": {k: result.get(k) for k in ("winner", "line", "moves", "draw")},
                "winner": side,
                "draw": bool(result.get("draw")),
            }
        )
    return after


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


def start_of(levels: Mapping[str, str] | None, dealer: str | None) -> dict[str, Any] | None:
    """A table's start as the organiser sets it (``{"levels": ..., "dealer": ...}``), in the
    engine's spelling, or None for the default (both sides at 2, dealer unknown)."""
    if levels is None and dealer is None:
        return None
    from engine.match import MatchState

    try:
        state = MatchState.new("national-2deck", levels, dealer)  # any rule set: starts are alike
    except ValueError as exc:
        raise ScoringError(str(exc)) from exc
    return {"levels": dict(state.levels), "dealer": state.dealer}


def initial_state(rules: str | None, start: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The match state before the first deal."""
    start = start or {}
    levels = dict(start.get("levels") or INITIAL_LEVELS)
    return {"levels": levels, "dealer": start.get("dealer"), "winner": None, "rules": rules}


def fold_states(
    rules: str,
    deals: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]],
    start: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The match state after each deal, folding ``MatchState.after_deal`` over (log, result) pairs
    from the table's start."""
    from engine.match import MatchState

    start = start or {}
    state = MatchState.new(rules, start.get("levels"), start.get("dealer"))
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
