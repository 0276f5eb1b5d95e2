"""A small client for the edge (`tractorcam run --scoreboard URL --token TOKEN`).

Every post gets an Idempotency-Key when it is queued, so re-sending after a timeout or an outage
can never store anything twice. Posts go out in order; one that fails on the network (or with a 5xx)
stays at the head of the queue and is retried by the next ``flush()``; one the scoreboard refuses
(4xx) is dropped and reported, since sending it again would be refused again.

    sb = ScoreboardClient("http://scoreboard:8000", token)
    sb.event({"type": "play", "trick": 1, "seat": "S", "cards": ["AH"]})
    sb.deal(finished_log)
    sb.flush()   # after an outage: sends what is still queued
    sb.flush(within=5.0)   # at shutdown: gives up after about 5 s, what is left stays queued

``whoami()`` is the start-up check of the token (``GET /api/table``): it raises
``httpx.HTTPStatusError`` for a refused token (401/403) and ``httpx.TransportError`` when the
scoreboard cannot be reached.
"""

from __future__ import annotations

import time
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass
class Pending:
    path: str
    body: dict[str, Any]
    key: str


@dataclass
class Refused:
    path: str
    key: str
    status: int
    detail: str


class ScoreboardClient:
    def __init__(
        self,
        url: str,
        token: str,
        *,
        http: httpx.Client | None = None,
        timeout: float = 5.0,
        max_queue: int = 100_000,
    ) -> None:
        self.http = http or httpx.Client(base_url=url.rstrip("/"), timeout=timeout)
        self.timeout = timeout
        self.headers = {"Authorization": f"Bearer {token}"}
        self.queue: deque[Pending] = deque(maxlen=max_queue)
        self.refused: list[Refused] = []
        self.session = uuid.uuid4().hex[:12]
        self._n = 0

    def whoami(self) -> dict[str, Any]:
        r = self.http.get("/api/table", headers=self.headers)
        r.raise_for_status()
        return r.json()  # type: ignore[no-any-return]

    def event(self, event: dict[str, Any], within: float | None = None) -> bool:
        """Queue an edge event and try to send the queue (see :meth:`flush`); True when everything
        went out."""
        return self._queue("/api/events", event, within)

    def deal(self, log: dict[str, Any], within: float | None = None) -> bool:
        """Queue a finished deal log and try to send the queue (see :meth:`flush`); True when
        everything went out."""
        return self._queue("/api/deals", log, within)

    def _queue(self, path: str, body: dict[str, Any], within: float | None) -> bool:
        self._n += 1
        self.queue.append(Pending(path, body, f"{self.session}-{self._n}"))
        return self.flush(within)

    def flush(self, within: float | None = None) -> bool:
        """Send queued posts in order; stop at the first network failure (retried next time). With
        ``within`` (seconds), give up once that much time has passed, each request's timeout cut to
        what is left: what was not sent stays queued and False is returned."""
        deadline = None if within is None else time.monotonic() + within
        while self.queue:
            item = self.queue[0]
            limit: dict[str, Any] = {}
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                limit["timeout"] = httpx.Timeout(min(left, self.timeout))
            try:
                r = self.http.post(
                    item.path, json=item.body, headers={**self.headers, "Idempotency-Key": item.key}, **limit
                )
            except httpx.TransportError:
                return False
            if r.status_code >= 500:
                return False
            self.queue.popleft()
            if r.status_code >= 400:
                try:
                    body = r.json()
                except ValueError:
                    body = None
                detail = str(body.get("detail", r.text) if isinstance(body, dict) else r.text)
                self.refused.append(Refused(item.path, item.key, r.status_code, detail))
        return True
