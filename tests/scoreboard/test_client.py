"""The edge's client: an outage queues posts; afterwards everything is stored exactly once, in order."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from edge_app.client import ScoreboardClient
from engine.deal_log import parse_deal_log
from tests.scoreboard.deals import DEFENDERS_WIN


class Flaky(httpx.BaseTransport):
    """Passes requests to the app, except while ``down``; ``lose_reply`` drops one reply after the
    request was handled (a timeout on the way back)."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.down = False
        self.lose_reply = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.down:
            raise httpx.ConnectError("network down", request=request)
        response = self.inner.handle_request(request)
        if self.lose_reply:
            self.lose_reply = False
            response.read()
            raise httpx.ReadTimeout("reply lost", request=request)
        return response


def test_outage_then_resync(client, make_table):
    t = make_table()
    flaky = Flaky(client._transport)  # the TestClient's transport into the app
    http = httpx.Client(transport=flaky, base_url="http://testserver")
    sb = ScoreboardClient("http://testserver", t.token, http=http)
    assert sb.whoami()["id"] == t.id
    plays = [p for trick in DEFENDERS_WIN["tricks"] for p in trick["plays"]]
    events: list[dict[str, Any]] = [{"type": "deal_start", "level": "2", "trump": "S", "dealer": "S"}]
    events += [{"type": "play", "trick": 1 + i // 4, "seat": s, "cards": c} for i, (s, c) in enumerate(plays)]
    assert sb.event(events[0]) is True
    flaky.down = True
    for ev in events[1:5]:
        assert sb.event(ev) is False
    assert len(sb.queue) == 4
    flaky.down = False
    flaky.lose_reply = True  # the first re-send is stored, but its answer is lost: sent again later
    assert sb.flush() is False
    assert sb.flush() is True
    for ev in events[5:]:
        assert sb.event(ev) is True
    assert sb.deal(parse_deal_log(DEFENDERS_WIN)) is True
    assert sb.refused == []
    stored = client.get("/api/events", params={"table": t.id}).json()["events"]
    plays_stored = [(e["data"]["trick"], e["data"]["seat"]) for e in stored if e["kind"] == "play"]
    assert plays_stored == [(1 + i // 4, s) for i, (s, _) in enumerate(plays)]
    assert t.state()["deals"] == 1


def test_refused_posts_are_reported_not_retried(client, make_table):
    t = make_table()
    sb = ScoreboardClient("http://testserver", t.token, http=client)
    assert sb.event({"type": "play", "trick": 0, "seat": "S", "cards": ["AH"]}) is True
    assert [r.status for r in sb.refused] == [422]
    assert len(sb.queue) == 0


def test_whoami_refuses_a_wrong_token(client, make_table):
    make_table()
    sb = ScoreboardClient("http://testserver", "not-a-table-token", http=client)
    with pytest.raises(httpx.HTTPStatusError) as refused:
        sb.whoami()
    assert refused.value.response.status_code == 401


def test_flush_within_a_time_limit_keeps_what_it_could_not_send(client, make_table):
    t = make_table()
    flaky = Flaky(client._transport)
    sb = ScoreboardClient(
        "http://testserver", t.token, http=httpx.Client(transport=flaky, base_url="http://testserver")
    )
    flaky.down = True
    assert sb.event({"type": "deal_start", "level": "2", "trump": "S", "dealer": "S"}) is False
    flaky.down = False
    assert sb.flush(within=0.0) is False and len(sb.queue) == 1  # no time left: nothing tried
    assert sb.flush(within=30.0) is True and not sb.queue and sb.refused == []
    stored = client.get("/api/events", params={"table": t.id}).json()["events"]
    assert [e["kind"] for e in stored].count("deal_start") == 1


def test_a_rate_limit_is_retried_and_a_given_key_is_queued_once(client, make_table):
    """429 (a proxy's rate limit) means later, not never: the post stays at the head. A post queued
    again under a key this client already has is not queued twice."""
    t = make_table()
    limited = [True]
    inner = client._transport

    def handle(request: httpx.Request) -> httpx.Response:
        if limited[0]:
            return httpx.Response(429, headers={"Retry-After": "1"}, text="slow down")
        return inner.handle_request(request)

    sb = ScoreboardClient(
        "http://testserver",
        t.token,
        http=httpx.Client(transport=httpx.MockTransport(handle), base_url="http://testserver"),
    )
    start = {"type": "deal_start", "level": "2", "trump": "S", "dealer": "S"}
    assert sb.event(start, key="start") is False and len(sb.queue) == 1 and sb.refused == []
    assert sb.event(start, key="start") is False and len(sb.queue) == 1
    limited[0] = False
    assert sb.flush() is True and sb.refused == []
    assert sb.event(start, key="start") is True and not sb.queue  # sent already: not again
    stored = client.get("/api/events", params={"table": t.id}).json()["events"]
    assert [e["kind"] for e in stored].count("deal_start") == 1


def test_health_reports_are_best_effort_and_never_pass_queued_posts(client, make_table):
    t = make_table()
    flaky = Flaky(client._transport)
    sb = ScoreboardClient(
        "http://testserver", t.token, http=httpx.Client(transport=flaky, base_url="http://testserver")
    )
    health = {"type": "health", "status": "ok", "fps": 2.0, "camera": "cam0", "message": "reading"}
    assert sb.beat(health) is True
    assert client.get(f"/api/tables/{t.id}").json()["health"]["fps"] == 2.0
    flaky.down = True
    assert sb.beat({**health, "fps": 1.0}) is False and len(sb.queue) == 0  # lost, never queued
    assert sb.event({"type": "deal_start", "level": "2", "trump": "S", "dealer": "S"}) is False
    flaky.down = False
    assert sb.beat({**health, "fps": 3.0}) is False  # a post is waiting: the report waits too
    assert sb.flush() is True and sb.beat({**health, "fps": 3.0}) is True
    assert client.get(f"/api/tables/{t.id}").json()["health"]["fps"] == 3.0
