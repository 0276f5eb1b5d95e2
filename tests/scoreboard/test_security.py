"""Refusals: wrong or missing tokens, another table's token, oversized and malformed bodies, unknown
rule sets. Each is refused with a clear status and stores nothing."""

from __future__ import annotations

import base64
import json

from tests.scoreboard.conftest import ADMIN_HEADERS, referee_headers, row_counts
from tests.scoreboard.deals import DEFENDERS_WIN, deal


def post_raw(client, table, body: bytes, headers: dict[str, str]):
    return client.post(
        f"/api/tables/{table.id}/deals", content=body, headers={"Content-Type": "application/json", **headers}
    )


BAD_AUTH = [(None, 401), ("Bearer", 401), ("Basic dXNlcjpwYXNz", 401), ("Bearer not-the-token", 403)]


def test_bad_tokens_are_refused(client, make_table):
    t = make_table()
    before = row_counts(client)
    for auth, status in BAD_AUTH:
        headers = {"Idempotency-Key": "k"}
        if auth is not None:
            headers["Authorization"] = auth
        r = client.post(f"/api/tables/{t.id}/deals", json=DEFENDERS_WIN, headers=headers)
        assert r.status_code == status, auth
        assert r.json()["detail"]
    assert row_counts(client) == before


def test_other_tables_token_is_refused(client, make_table):
    mine, other = make_table(), make_table()
    before = row_counts(client)
    headers = {"Authorization": f"Bearer {other.token}", "Idempotency-Key": "k"}
    for path in ("deals", "events"):
        body = DEFENDERS_WIN if path == "deals" else {"type": "health", "status": "ok"}
        r = client.post(f"/api/tables/{mine.id}/{path}", json=body, headers=headers)
        assert r.status_code == 403
    assert row_counts(client) == before


def test_admin_token_is_not_a_table_token(client, make_table):
    t = make_table()
    r = client.post(
        f"/api/tables/{t.id}/deals", json=DEFENDERS_WIN, headers={**ADMIN_HEADERS, "Idempotency-Key": "k"}
    )
    assert r.status_code == 403
    assert t.state()["deals"] == 0


def test_creating_tables_needs_the_admin(client):
    assert client.post("/api/tables", json={"name": "X"}).status_code == 401
    r = client.post("/api/tables", json={"name": "X"}, headers={"Authorization": "Bearer nope"})
    assert r.status_code == 401
    referee = referee_headers(client)
    assert client.post("/api/tables", json={"name": "X"}, headers=referee).status_code == 403
    assert client.get("/api/tables").json()["tables"] == []


def test_table_token_cannot_do_referee_work(client, make_table):
    t = make_table()
    assert t.post_deal(DEFENDERS_WIN, "k").status_code == 201
    r = client.post(
        f"/api/tables/{t.id}/deals/1/versions",
        headers=t.headers(),
        json={"base_version": 1, "reason": "x", "log": DEFENDERS_WIN},
    )
    assert r.status_code == 401
    assert client.get("/api/alerts", headers=t.headers()).status_code == 401


def test_oversized_body_is_refused(client, make_table):
    t = make_table()
    before = row_counts(client)
    big = deal(DEFENDERS_WIN, padding="x" * 300_000)
    r = t.post_deal(big, "k")
    assert r.status_code == 413
    assert row_counts(client) == before


def test_oversized_chunked_body_is_refused(client, make_table):
    t = make_table()
    before = row_counts(client)

    def chunks():
        yield b'{"rules": "national-2deck", "padding": "'
        for _ in range(40):
            yield b"x" * 10_000
        yield b'"}'

    r = client.post(
        f"/api/tables/{t.id}/deals",
        content=chunks(),
        headers={**t.headers("k"), "Content-Type": "application/json"},
    )
    assert r.status_code == 413
    assert row_counts(client) == before


MALFORMED = [b"", b"{", b"not json", b'{"rules": NaN}', b"\xff\xfe", b"[1, 2"]
WRONG_SHAPES = [[], "a string", 42, {"tricks": "nope", "finished": True}]


def test_malformed_json_is_refused(client, make_table):
    t = make_table()
    before = row_counts(client)
    for body in MALFORMED:
        assert post_raw(client, t, body, t.headers("k")).status_code == 400, body
    assert row_counts(client) == before


def test_wrong_shapes_are_refused(client, make_table):
    t = make_table()
    before = row_counts(client)
    for body in WRONG_SHAPES:
        assert post_raw(client, t, json.dumps(body).encode(), t.headers("k")).status_code == 422, body
    assert row_counts(client) == before


def test_unknown_rule_set_is_refused(client, make_table):
    before = row_counts(client)
    r = client.post("/api/tables", json={"name": "X", "rules": "poker"}, headers=ADMIN_HEADERS)
    assert r.status_code == 422 and "poker" in r.json()["detail"]
    assert row_counts(client) == before
    t = make_table()
    before = row_counts(client)
    r = t.post_deal(dict(DEFENDERS_WIN, rules="poker"), "k")
    assert r.status_code == 422 and "poker" in r.json()["detail"]
    after = row_counts(client)
    assert after["deals"] == before["deals"]  # kept only as a refused log for a referee
    assert after["alerts"] == before["alerts"] + 1


def test_unknown_table_is_404(client, make_table):
    t = make_table()
    r = client.post("/api/tables/nope/deals", json=DEFENDERS_WIN, headers=t.headers("k"))
    assert r.status_code == 404
    assert client.get("/api/tables/nope").status_code == 404


BAD_EVENTS = [
    {"type": "play", "trick": 1, "seat": "X", "cards": ["AH"]},
    {"type": "play", "trick": 0, "seat": "S", "cards": ["AH"]},
    {"type": "play", "trick": 1, "seat": "S", "cards": []},
    {"type": "play", "trick": 1, "seat": "S", "cards": ["AH"], "extra": 1},
    {"type": "teleport"},
    {"type": "health", "status": "fine"},
    {"type": "alert", "kind": "revoke", "images": [{"content_type": "image/gif", "data": ""}]},
    {"type": "alert", "kind": "revoke", "images": [{"content_type": "image/png", "data": "!!!"}]},
    {
        "type": "alert",
        "kind": "revoke",
        "images": [{"content_type": "image/png", "data": base64.b64encode(b"GIF89a...").decode()}],
    },
]


def test_bad_edge_events_are_refused(client, make_table):
    t = make_table()
    before = row_counts(client)
    for event in BAD_EVENTS:
        r = t.post_event(event, "k")
        assert r.status_code == 422, (event, r.text)
    assert row_counts(client) == before


def test_login_with_wrong_password(client):
    referee_headers(client, "ann")
    r = client.post("/api/login", json={"username": "ann", "password": "wrong password"})
    assert r.status_code == 401
    r = client.post("/api/login", json={"username": "nobody", "password": "correct horse"})
    assert r.status_code == 401


def test_cookie_session_needs_csrf_header_for_api_writes(client, make_table):
    t = make_table()
    referee_headers(client, "bob")
    r = client.post(
        "/login",
        content=b"username=bob&password=correct+horse&next=/referee",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert r.status_code == 303
    client.cookies.set("tc_session", r.cookies["tc_session"])
    assert t.post_event({"type": "alert", "kind": "mismatch", "reasoning": "x"}, "a").status_code == 201
    alert_id = client.get("/api/alerts").json()["alerts"][0]["id"]
    headers = {"Authorization": ""}
    r = client.post(f"/api/alerts/{alert_id}/ack", headers=headers)
    assert r.status_code == 403
    r = client.post(f"/api/alerts/{alert_id}/ack", headers={**headers, "X-Requested-With": "fetch"})
    assert r.status_code == 200 and r.json()["status"] == "acknowledged"
    assert client.get("/referee").status_code == 200


def test_rotated_token_replaces_the_old_one(client, make_table):
    t = make_table()
    assert t.post_event({"type": "health", "status": "ok"}, "h1").status_code == 201  # token now cached
    r = client.post(f"/api/tables/{t.id}/token", headers=ADMIN_HEADERS)
    assert r.status_code == 200
    old, t.token = t.token, r.json()["token"]
    assert old != t.token
    r = client.post(
        f"/api/tables/{t.id}/events",
        json={"type": "health", "status": "ok"},
        headers={"Authorization": f"Bearer {old}", "Idempotency-Key": "h2"},
    )
    assert r.status_code == 403
    assert t.post_event({"type": "health", "status": "ok"}, "h3").status_code == 201


def test_failed_logins_slow_the_guesser_without_locking_out_the_referee(client):
    """Issue 38: five wrong passwords used to lock the name out for 300 s, right password or not."""
    from fastapi.testclient import TestClient

    referee_headers(client, "carol")  # logs in once from the test client: that browser is known
    device = client.cookies.get("tc_device")
    assert device
    guesser = TestClient(client.app, client=("203.0.113.9", 40000))
    codes = [
        guesser.post("/api/login", json={"username": "carol", "password": f"guess {i}"}).status_code
        for i in range(6)
    ]
    assert codes[:3] == [401] * 3 and 429 in codes[3:]  # after three, each try waits longer
    r = guesser.post("/api/login", json={"username": "carol", "password": "correct horse"})
    assert r.status_code == 429 and "try again" in r.json()["detail"] and int(r.headers["retry-after"]) >= 1
    # The referee, from another address or from the same one with a browser that logged in
    # before, is not held up by someone else's guessing.
    elsewhere = TestClient(client.app, client=("198.51.100.7", 40000))
    assert (
        elsewhere.post("/api/login", json={"username": "carol", "password": "correct horse"}).status_code
        == 200
    )
    same_hall = TestClient(client.app, client=("203.0.113.9", 40001), cookies={"tc_device": device})
    assert (
        same_hall.post("/api/login", json={"username": "carol", "password": "correct horse"}).status_code
        == 200
    )


def test_login_throttle_backs_off_and_forgets():
    """The wait doubles after the free failures and ends after its time: no permanent lock."""
    from scoreboard.auth import LoginThrottle
    from scoreboard.errors import TooManyAttempts

    throttle = LoginThrottle(free=2, cap=8.0)
    clock = [1000.0]
    import scoreboard.auth as auth_module

    real = auth_module.time.monotonic
    auth_module.time.monotonic = lambda: clock[0]  # type: ignore[assignment]
    try:
        waits = []
        for _ in range(6):
            try:
                throttle.check("dan", "address:x", "x")
                waits.append(0)
            except TooManyAttempts as exc:
                waits.append(exc.retry_after)
                clock[0] += exc.retry_after
                throttle.check("dan", "address:x", "x")  # after the wait, allowed
            throttle.failed("dan", "address:x", "x")
        assert waits == [0, 0, 2, 3, 5, 9]  # 1, 2, 4, 8 s (+1 s rounding), capped at 8
        throttle.check("dan", "address:y", "y")  # another source: no wait
        throttle.succeeded("dan", "address:x")
        throttle.check("dan", "address:x", "x")
    finally:
        auth_module.time.monotonic = real  # type: ignore[assignment]
