"""The table service's client of the scoreboard (`tractorcam run --scoreboard URL --token TOKEN`):
it posts the bodies of :mod:`contract` to the paths of :mod:`contract.paths`.

Every post gets an Idempotency-Key when it is queued (the caller's, or a per-process one), so
re-sending after a timeout or an outage can never store anything twice. Posts go out in order; one
that fails on the network (or with a 5xx, 408, 425 or 429) stays at the head of the queue and is
retried by the next ``flush()``; one the scoreboard refuses (another 4xx) is dropped and reported,
since sending it again would be refused again.

    sb = ScoreboardClient("http://scoreboard:8000", token)
    sb.event({"type": "play", "trick": 1, "seat": "S", "cards": ["AH"]})
    sb.deal(finished_log)
    sb.board(finished_bridge_log)   # a bridge table's board
    sb.flush()   # after an outage: sends what is still queued
    sb.flush(within=5.0)   # at shutdown: gives up after about 5 s, what is left stays queued

Without ``outbox`` the queue lives in this process. With ``outbox=PATH`` it is the durable outbox of
:mod:`edge_app.outbox` (one SQLite file): each post is committed to the file before it is sent and
marked only once the scoreboard answered, so a process killed at any moment and started again
sends what was left (``flush()`` first thing) with the same keys; a key already in the file, sent
or not, is not queued again. ``refused`` lists this process's refusals; the outbox keeps every
refusal with its detail (``outbox.refusals()``).

``whoami()`` is the start-up check of the token (``GET /api/table``): it raises
``httpx.HTTPStatusError`` for a refused token (401/403) and ``httpx.TransportError`` when the
scoreboard cannot be reached. :class:`GameWatch` asks the same between deals whether the scoreboard
has moved the table on to a new game (an event's next round), so the table service starts it from
2–2 instead of carrying the last round's levels.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from contract.paths import BOARDS_PATH, DEALS_PATH, EVENTS_PATH, GOMOKU_PATH, IDEMPOTENCY_KEY, TABLE_PATH
from edge_app.outbox import MemoryQueue, Outbox, Pending, Refused, token_tag
from engine.deal_log import DealLog

__all__ = ["Pending", "Refused", "RETRY_STATUS", "ScoreboardClient"]

#: 4xx answers that mean "later", not "never" (a proxy's timeout or rate limit): kept and retried.
RETRY_STATUS = frozenset({408, 425, 429})


class ScoreboardClient:
    def __init__(
        self,
        url: str,
        token: str,
        *,
        http: httpx.Client | None = None,
        timeout: float = 5.0,
        max_queue: int = 100_000,
        outbox: Path | None = None,
    ) -> None:
        self.http = http or httpx.Client(base_url=url.rstrip("/"), timeout=timeout)
        self.timeout = timeout
        self.headers = {"Authorization": f"Bearer {token}"}
        self.tab = token_tag(token)
        self.queue: MemoryQueue | Outbox = (
            MemoryQueue(max_queue) if outbox is None else Outbox(Path(outbox), self.tab)
        )
        self.refused: list[Refused] = []  # this process's refusals (an outbox keeps them all)
        self.session = uuid.uuid4().hex[:12]
        self._n = 0

    @property
    def outbox(self) -> Outbox | None:
        """The durable outbox, when there is one."""
        return self.queue if isinstance(self.queue, Outbox) else None

    def close(self) -> None:
        self.queue.close()

    def whoami(self, timeout: float | None = None) -> dict[str, Any]:
        r = self.http.get(TABLE_PATH, headers=self.headers, timeout=httpx.Timeout(timeout or self.timeout))
        r.raise_for_status()
        return r.json()  # type: ignore[no-any-return]

    def event(self, event: dict[str, Any], within: float | None = None, key: str | None = None) -> bool:
        """Queue an edge event (under ``key``, or a key of this process) and try to send the queue
        (see :meth:`flush`); True when everything went out."""
        return self._queue(EVENTS_PATH, event, within, key)

    def deal(self, log: DealLog, within: float | None = None, key: str | None = None) -> bool:
        """Queue a finished deal log, as the spec writes it (``log.to_json()``: a log the engine
        refuses travels too, for a referee), under ``key`` or a key of this process, and try to send
        the queue (see :meth:`flush`); True when everything went out."""
        return self._queue(DEALS_PATH, log.to_json(), within, key)

    def board(self, log: dict[str, Any], within: float | None = None, key: str | None = None) -> bool:
        """Queue a finished bridge board's log (``games.md``) as :meth:`deal` does a deal's."""
        return self._queue(BOARDS_PATH, log, within, key)

    def gomoku(self, log: dict[str, Any], within: float | None = None, key: str | None = None) -> bool:
        """Queue a finished gomoku game's log (``games.md``) as :meth:`deal` does a deal's."""
        return self._queue(GOMOKU_PATH, log, within, key)

    def beat(self, health: dict[str, Any], within: float | None = None) -> bool:
        """Send a health report now, best effort and never queued: only when nothing is waiting (a
        report must not pass the posts before it, and a queue means the scoreboard is not
        answering), under a key of this process (``health-<session>-<n>``). True when the
        scoreboard took it; a failure is forgotten (the next report replaces it)."""
        if self.queue.head() is not None:
            return False
        self._n += 1
        timeout = self.timeout if within is None else max(0.1, min(within, self.timeout))
        try:
            r = self.http.post(
                EVENTS_PATH,
                json=health,
                headers={**self.headers, IDEMPOTENCY_KEY: f"health-{self.session}-{self._n}"},
                timeout=httpx.Timeout(timeout),
            )
        except httpx.TransportError:
            return False
        return r.status_code < 300

    def _queue(self, path: str, body: dict[str, Any], within: float | None, key: str | None) -> bool:
        if key is None:
            self._n += 1
            key = f"{self.session}-{self._n}"
        self.queue.add(path, body, key)
        return self.flush(within)

    def flush(self, within: float | None = None) -> bool:
        """Send queued posts in order; stop at the first network failure (retried next time). With
        ``within`` (seconds), give up once that much time has passed, each request's timeout cut to
        what is left: what was not sent stays queued and False is returned."""
        deadline = None if within is None else time.monotonic() + within
        while (item := self.queue.head()) is not None:
            limit: dict[str, Any] = {}
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                limit["timeout"] = httpx.Timeout(min(left, self.timeout))
            try:
                r = self.http.post(
                    item.path, json=item.body, headers={**self.headers, IDEMPOTENCY_KEY: item.key}, **limit
                )
            except httpx.TransportError as exc:
                self.queue.failed(item, f"{type(exc).__name__}: {exc}"[:500])
                return False
            if r.status_code >= 500 or r.status_code in RETRY_STATUS:
                self.queue.failed(item, f"{r.status_code}: {r.text}"[:500])
                return False
            if r.status_code >= 400:
                try:
                    body = r.json()
                except ValueError:
                    body = None
                detail = str(body.get("detail", r.text) if isinstance(body, dict) else r.text)
                self.queue.answered(item, r.status_code, detail, refused=True)
                self.refused.append(Refused(item.path, item.key, r.status_code, detail))
            else:
                self.queue.answered(item, r.status_code, r.text, refused=False)
        return True


class GameWatch:
    """Whether the scoreboard has moved this table on to a new game since the last question: the
    number of the table's current game (``GET /api/table``'s ``game``) changed. Best effort: a
    scoreboard that cannot be reached, or one without games, answers no (the table goes on as
    before). Asked once per deal, with a short time limit.

    >>> class Board:
    ...     def __init__(self): self.games = iter([1, 1, 2, None, 2])
    ...     def whoami(self, timeout=None):
    ...         number = next(self.games)
    ...         if number is None: raise httpx.ConnectError("down")
    ...         return {"game": {"number": number}}
    >>> watch = GameWatch(Board())
    >>> [watch(), watch(), watch(), watch()]
    [False, True, False, False]
    """

    def __init__(self, client: Any, timeout: float = 3.0) -> None:
        self.client = client
        self.timeout = timeout
        self.number = self._number()

    def _number(self) -> int | None:
        try:
            game = self.client.whoami(self.timeout).get("game") or {}
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        number = game.get("number") if isinstance(game, dict) else None
        return number if isinstance(number, int) else None

    def __call__(self) -> bool:
        number = self._number()
        changed = number is not None and self.number is not None and number != self.number
        if number is not None:
            self.number = number
        return changed
