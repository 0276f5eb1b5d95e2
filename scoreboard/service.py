"""What the scoreboard does, independent of HTTP, put together: one part per thing it owns, each
given the database and the feed's notifier (and whatever other part it needs) when it is made.

* :class:`scoreboard.tables.Tables`: tables (create, set up, new token) and their summaries;
* :class:`scoreboard.deals.Deals`: finished deals and their versions (post, move, void, count,
  correct, rule, preview), folded into their games by :class:`scoreboard.folding.Folds`;
* :class:`scoreboard.alerts.Alerts`: the referees' queue (acknowledge, dismiss, settle a refused
  log or a look);
* :class:`scoreboard.live_events.LiveEvents`: the edge's event stream and a table's live deal.

The parts raise :mod:`scoreboard.errors` and return typed results; the routers turn both into HTTP
(:mod:`scoreboard.api`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scoreboard import feed
from scoreboard.alerts import Alerts
from scoreboard.db import Database
from scoreboard.deals import Deals
from scoreboard.folding import Folds
from scoreboard.idempotency import Idempotency
from scoreboard.live_events import LiveEvents
from scoreboard.tables import Tables

if TYPE_CHECKING:
    from scoreboard.tourney_service import Tourneys


class Scoreboard:
    """The parts, made once per app (``app.state.board``); the routers take each part through its
    own dependency (:func:`scoreboard.api.get_tables` and the like)."""

    def __init__(self, db: Database, notifier: feed.Notifier, tourneys: Tourneys | None = None) -> None:
        self.db = db
        self.notifier = notifier
        # The event around the tables (``tourneys``): a match bound to a table follows its game.
        folds = Folds(tourneys)
        keys = Idempotency(db)
        self.tables = Tables(db, notifier, folds)
        self.deals = Deals(db, notifier, folds, keys)
        self.alerts = Alerts(db, notifier, self.deals)
        self.events = LiveEvents(db, notifier, keys)
