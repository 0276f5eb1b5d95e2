"""Each game's films (the lab's side of :mod:`games`' seam): a game rendered as a camera over the
table sees it, with its truth, for the table service's benchmarks (``tractorcam synth deal
--game G``). Shengji's: :func:`models.synth.deal.render_deal` (deals of one match, declarations,
hands, injected violations); bridge's: :func:`models.synth.bridge_film.render_board` (one board,
dummy laid out, tricks turned face down, an injected revoke); gomoku's:
:func:`models.synth.gomoku_film.render_game` (a board game: ``tractorcam synth game``).

>>> film_renderer("shengji").__name__
'render_deal'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from games import get_game


def film_renderer(game: str) -> Callable[..., Any]:
    """The renderer of ``game``'s films; :class:`games.UnknownGameError` for an unknown game,
    ``LookupError`` for a game whose films are not made yet."""
    get_game(game)
    if game == "shengji":
        from models.synth.deal import render_deal

        return render_deal
    if game == "bridge":
        from models.synth.bridge_film import render_board

        return render_board
    if game == "gomoku":
        from models.synth.gomoku_film import render_game

        return render_game
    raise LookupError(f"films of {game} are not made yet")
