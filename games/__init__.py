"""The games tractorcam referees, each behind one seam (``shared/spec/games.md``).

A log says its game in its top-level ``"game"`` (a log without one is Shengji, as ever). Each game
brings, under the same name, the same parts:

* here, its rules: :class:`Game` (the log scored as ``tractorcam score`` prints it, and the errors
  a log it refuses raises); a pure package of its own (Shengji's is :mod:`engine`);
* at the table, what the table service follows (``edge_app.games``);
* in the lab, its films (``models.synth.films``);
* on the scoreboard, its views and how a result enters the event (``scoreboard.kinds``).

Pure: the standard library and the games' own rules packages.

>>> game_of({"rules": "national-2deck"}).name
'shengji'
>>> game_of({"game": "shengji"}).title
'Shengji / Tractor (升级 / 拖拉机)'
>>> try:
...     game_of({"game": "mahjong"})
... except UnknownGameError as exc:
...     print(exc)
game 'mahjong' is not one tractorcam knows (known: bridge, gomoku, shengji)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import bridge
import engine
import gomoku

#: The name of the game of a log without ``"game"``.
DEFAULT_GAME: Final = "shengji"


class UnknownGameError(ValueError):
    """A log or a table set up for a game tractorcam does not know."""


@dataclass(frozen=True)
class Game:
    """One game's rules as the rest of the product sees them."""

    name: str
    title: str
    #: ``tractorcam score``: a log (parsed JSON) to its result; raises one of :attr:`errors`
    score: Callable[[Any], dict[str, Any]]
    #: what :attr:`score` raises for a log it refuses (its message is one line naming the fault)
    errors: tuple[type[Exception], ...]


SHENGJI: Final = Game(
    name="shengji",
    title="Shengji / Tractor (升级 / 拖拉机)",
    score=engine.score_log,
    errors=(engine.DealLogError,),
)

BRIDGE: Final = Game(
    name="bridge",
    title="Contract bridge (桥牌)",
    score=bridge.score_log,
    errors=(bridge.BridgeLogError,),
)

GOMOKU: Final = Game(
    name="gomoku",
    title="Gomoku (五子棋)",
    score=gomoku.score_log,
    errors=(gomoku.GomokuLogError,),
)

GAMES: Final[Mapping[str, Game]] = {game.name: game for game in (SHENGJI, BRIDGE, GOMOKU)}


def get_game(name: str) -> Game:
    """The game called ``name``; :class:`UnknownGameError` for any other."""
    try:
        return GAMES[name]
    except KeyError:
        known = ", ".join(sorted(GAMES))
        raise UnknownGameError(
            f"game {str(name)[:40]!r} is not one tractorcam knows (known: {known})"
        ) from None


def game_of(log: Any) -> Game:
    """The game a log is of: its ``"game"``, or Shengji's without one."""
    name = log.get("game", DEFAULT_GAME) if isinstance(log, Mapping) else DEFAULT_GAME
    if not isinstance(name, str):
        raise UnknownGameError(f'"game" must be a game\'s name, not {type(name).__name__}')
    return get_game(name)


def score(log: Any) -> dict[str, Any]:
    """``tractorcam score`` on any game's log: its game's result. Raises :class:`UnknownGameError`,
    or the game's own errors (:attr:`Game.errors`) for a log it refuses."""
    return game_of(log).score(log)
