"""Where the edge posts (``tractorcam run --scoreboard URL --token TOKEN``): every request carries
``Authorization: Bearer <table token>``; every post carries an :data:`IDEMPOTENCY_KEY` header, so a
retry with the same key is stored once."""

from __future__ import annotations

#: ``GET``: the table the token belongs to (the edge's start-up check of its token).
TABLE_PATH = "/api/table"
#: ``POST`` an edge event (:data:`contract.events.EdgeEvent`).
EVENTS_PATH = "/api/events"
#: ``POST`` a finished deal log (:class:`contract.deals.DealLogIn`).
DEALS_PATH = "/api/deals"
#: ``POST`` a finished bridge board (:class:`contract.boards.BoardLogIn`).
BOARDS_PATH = "/api/boards"
#: ``POST`` a finished gomoku game (:class:`contract.boards.GomokuLogIn`).
GOMOKU_PATH = "/api/gomoku"
#: The header naming a post; one per post, a retry reuses it.
IDEMPOTENCY_KEY = "Idempotency-Key"
