"""A game's match state, folded by the rules engine over its counted deals in order, from the
game's start; the table's state is its current game's, and a match game's result follows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy.orm import Session

from scoreboard import games, scoring
from scoreboard.errors import Invalid
from scoreboard.kinds import kind_of
from scoreboard.logs import fold_input
from scoreboard.models import Deal, ScoreTable, TableGame
from scoreboard.rows import deal_row

if TYPE_CHECKING:
    from scoreboard.tourney_service import Tourneys


class Folds:
    def __init__(self, tourneys: Tourneys | None = None) -> None:
        #: The event around the tables: a match bound to a table follows its finished game.
        self.tourneys = tourneys

    def refold(self, s: Session, table: ScoreTable, deal: Deal) -> None:
        """Fold the game of ``deal`` again, if the deal counts in one."""
        game = s.get(TableGame, deal.game_id) if deal.game_id is not None else None
        if game is not None and deal.status == games.COUNTED:
            self.recompute(s, table, game)

    def recompute(self, s: Session, table: ScoreTable, game: TableGame) -> None:
        """Fold the game's state (its kind's: :mod:`scoreboard.kinds`) over the counted deals of ``game`` (one of ``table``'s), in order,
        from the game's start; the table's state is its current game's. A match game's result
        follows (:meth:`scoreboard.tourney_service.Tourneys.game_changed`)."""
        kind = kind_of(table.game)
        deals = games.counted_deals(s, game)
        for deal in deals:
            if deal.fold is None:  # a deal stored before the fold column existed
                _, current = deal_row(s, table.id, deal.seq)
                deal.fold = fold_input(current.log, current.result)
        try:
            states = kind.fold(table.rules, games.fold_inputs(deals), game.start)
        except scoring.ScoringError as exc:
            raise Invalid(str(exc)) from exc
        if states:
            for deal, state in zip(deals, states, strict=True):
                if deal.state_after != state:
                    deal.state_after = state
        game.state = states[-1] if states else kind.initial(table.rules, game.start)
        game.deals = len(deals)
        if table.game_id == game.id:
            table.state = dict(game.state)
        s.flush()
        if self.tourneys is not None:
            self.tourneys.game_changed(s, table, game)
