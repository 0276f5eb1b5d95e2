"""What the table service follows, per game (the table's side of :mod:`games`' seam).

A table's configuration names its game (``game``, Shengji by default); ``tractorcam run`` hands the
frames to that game's service. The shared parts (the camera, the calibration, the reader, the
outbox and the scoreboard client, health) are the same for every game; a game's service brings
what it follows on the table (Shengji: each seat's zone and the centre; a trick ends when the
table is cleared, :mod:`edge_app.pipeline`) and the log it builds.

>>> table_service("shengji").__name__
'run_service'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from edge_app.service import ServiceResult, run_service
from games import GAMES, UnknownGameError

#: Each game's table service (:func:`edge_app.service.run_service`'s signature).
SERVICES: Final[Mapping[str, Callable[..., ServiceResult]]] = {"shengji": run_service}


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
