"""What the table service follows, per game (the table's side of :mod:`games`' seam).

A table's configuration names its game (``game``, Shengji by default); ``tractorcam run`` hands the
frames to that game's service. The shared parts (the camera, the calibration, the reader, the
outbox and the scoreboard client, health) are the same for every game; a game's service brings
what it follows on the table (Shengji: each seat's zone and the centre; a trick ends when the
table is cleared, :mod:`edge_app.pipeline`; bridge: each seat's card, dummy's hand read once,
:mod:`edge_app.bridge`; gomoku: the board's points, :mod:`edge_app.gomoku`) and the log it builds.

>>> table_service("shengji").__name__
'run_service'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from edge_app.bridge import run_bridge_service
from edge_app.gomoku import run_gomoku_service
from edge_app.service import run_service
from games import GAMES, UnknownGameError

#: Each game's table service: Shengji's follows deals (:func:`edge_app.service.run_service`), bridge's
#: one board the operator enters (:func:`edge_app.bridge.run_bridge_service`), gomoku's a game on
#: the board (:func:`edge_app.gomoku.run_gomoku_service`).
SERVICES: Final[Mapping[str, Callable[..., Any]]] = {
    "shengji": run_service,
    "bridge": run_bridge_service,
    "gomoku": run_gomoku_service,
}


def table_service(game: str) -> Callable[..., Any]:
    """The table service of ``game``; :class:`games.UnknownGameError` for a game with none."""
    if game not in GAMES:
        raise UnknownGameError(
            f"game {game[:40]!r} is not one tractorcam knows (known: {', '.join(sorted(GAMES))})"
        )
    try:
        return SERVICES[game]
    except KeyError:
        raise UnknownGameError(f"no table service follows {game} yet") from None
