"""Property tests: idempotency (any interleaving of keys and bodies stores each key once and
replays its first answer) and re-sync (paging the feed from any cursors sees every event once)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.scoreboard.conftest import row_counts
from tests.scoreboard.deals import DEALER_SWEEP, DEFENDERS_WIN

BODIES = [DEFENDERS_WIN, DEALER_SWEEP]
FAST = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FAST
@given(ops=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1)), min_size=1, max_size=10))
def test_idempotency(client, make_table, ops):
    t = make_table()
    first: dict[int, tuple[int, dict]] = {}  # key -> (body index, first response)
    for key, body in ops:
        r = t.post_deal(BODIES[body], f"key-{key}")
        if key not in first:
            assert r.status_code == 201, r.text
            first[key] = (body, r.json())
        elif first[key][0] == body:
            assert r.status_code == 201
            assert r.json() == first[key][1]
        else:
            assert r.status_code == 422
    deals = t.client.get(f"/api/tables/{t.id}/deals").json()["deals"]
    assert sorted(d["idempotency_key"] for d in deals) == sorted(f"key-{k}" for k in first)
    assert t.state()["deals"] == len(first)


@FAST
@given(
    n_events=st.integers(1, 12),
    resend=st.lists(st.integers(0, 11), max_size=8),
    pages=st.lists(st.integers(1, 5), min_size=1, max_size=6),
)
@pytest.mark.slow
def test_resync_sees_every_event_once(client, make_table, n_events, resend, pages):
    t = make_table()
    start = client.get("/api/events", params={"after": 0, "limit": 1000}).json()["cursor"]
    before = row_counts(client)["events"]
    for i in range(n_events):
        assert t.post_event({"type": "health", "status": "ok", "fps": float(i)}, f"h{i}").status_code == 201
    # After an outage the edge re-sends events it is unsure about: each is stored once.
    for i in resend:
        if i < n_events:
            assert (
                t.post_event({"type": "health", "status": "ok", "fps": float(i)}, f"h{i}").status_code == 201
            )
    # Each health event adds itself and the table's new state to the feed.
    assert row_counts(client)["events"] - before == 2 * n_events
    # A screen that pages with changing page sizes from its last cursor sees each event once.
    seen: list[int] = []
    cursor = start
    for step in range(100):
        page = client.get(
            "/api/events", params={"after": cursor, "limit": pages[step % len(pages)], "table": t.id}
        ).json()
        if not page["events"]:
            break
        seen += [e["id"] for e in page["events"]]
        cursor = page["cursor"]
    assert len(seen) == len(set(seen)) == 2 * n_events
    assert seen == sorted(seen)
    fps = [
        e["data"]["fps"]
        for e in client.get("/api/events", params={"after": start, "table": t.id}).json()["events"]
        if e["kind"] == "health"
    ]
    assert fps == [float(i) for i in range(n_events)]
