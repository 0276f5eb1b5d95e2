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
    r = t.post_deal(deal(DEFENDERS_WIN, rules="poker"), "k")
    assert r.status_code == 422
    assert row_counts(client) == before


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


def test_repeated_failed_logins_are_throttled(client):
    referee_headers(client, "carol")
    codes = [
        client.post("/api/login", json={"username": "carol", "password": f"guess {i}"}).status_code
        for i in range(6)
    ]
    assert codes == [401] * 5 + [429]
    # even the right password waits now
    r = client.post("/api/login", json={"username": "carol", "password": "correct horse"})
    assert r.status_code == 429 and "try again" in r.json()["detail"]
