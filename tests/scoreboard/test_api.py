"""The API of cli.md on SQLite and PostgreSQL: tables, deals, idempotency, table state, re-sync."""

from __future__ import annotations

import json

from tests.scoreboard.conftest import ADMIN_HEADERS, referee_headers, row_counts
from tests.scoreboard.deals import DEALER_SWEEP, DEFENDERS_WIN, FILLER, deal, dealt_by

# Hand-computed (RULES.md): DEFENDERS_WIN has D = 120, defenders +1; DEALER_SWEEP has D = 0, dealer +3.


def test_create_table_returns_id_and_token(client):
    r = client.post("/api/tables", json={"name": "T1"}, headers=ADMIN_HEADERS)
    assert r.status_code == 201
    body = r.json()
    assert set(body) == {"id", "token"}
    assert len(body["token"]) >= 32
    r = client.get(f"/api/tables/{body['id']}")
    assert r.status_code == 200
    got = r.json()
    assert (got["id"], got["name"], got["levels"], got["dealer"], got["deals"]) == (
        body["id"],
        "T1",
        {"NS": "2", "EW": "2"},
        None,
        0,
    )


def test_duplicate_table_name_is_refused(client, make_table):
    client.post("/api/tables", json={"name": "Same"}, headers=ADMIN_HEADERS)
    r = client.post("/api/tables", json={"name": "Same"}, headers=ADMIN_HEADERS)
    assert r.status_code == 409


def test_post_deal_returns_the_score_and_updates_the_table(client, make_table):
    t = make_table()
    r = t.post_deal(DEFENDERS_WIN, "deal-1")
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["defender_total"] == 120
    assert body["outcome"] == {"side": "defenders", "levels": 1, "next_dealer": "E"}
    assert body["bottom"] == {"points": 60, "multiplier": 2, "awarded": 120}
    assert r.headers["location"] == f"/api/tables/{t.id}/deals/1"
    state = t.state()
    assert state["levels"] == {"NS": "2", "EW": "3"}
    assert state["dealer"] == "E"
    assert state["deals"] == 1
    assert state["rules"] == "national-2deck"
    assert state["live"]["defender_total"] == 120


def test_state_folds_over_deals(client, make_table):
    t = make_table()
    assert t.post_deal(DEFENDERS_WIN, "a").status_code == 201  # EW 2 -> 3, E deals
    assert t.post_deal(dealt_by(DEFENDERS_WIN, "E", "3"), "b").status_code == 201  # NS 2 -> 3, N deals
    assert t.post_deal(dealt_by(DEALER_SWEEP, "N", "3"), "c").status_code == 201  # NS 3 -> 6, S deals
    state = t.state()
    assert (state["levels"], state["dealer"], state["deals"]) == ({"NS": "6", "EW": "3"}, "S", 3)
    deals = client.get(f"/api/tables/{t.id}/deals").json()["deals"]
    assert [d["state_after"]["levels"] for d in deals] == [
        {"NS": "2", "EW": "3"},
        {"NS": "3", "EW": "3"},
        {"NS": "6", "EW": "3"},
    ]
    assert [d["idempotency_key"] for d in deals] == ["a", "b", "c"]


def test_game_won_past_ace(client, make_table):
    t = make_table()
    # Each sweep by S then N then S... raises NS by 3: 2 -> 5 -> 8 -> J -> A -> past A (game won).
    # (The logs keep level "2": the table state comes from outcomes, and "8"/"J"/"A" would make
    # the played 8H/JH/AH trump and change the tricks.)
    dealer = "S"
    for i in range(5):
        r = t.post_deal(dealt_by(DEALER_SWEEP, dealer, "2"), f"k{i}")
        assert r.status_code == 201, r.text
        dealer = "N" if dealer == "S" else "S"
    state = t.state()
    assert state["winner"] == "NS"
    assert state["levels"]["NS"] == "A"


def test_same_key_same_body_is_stored_once(client, make_table):
    t = make_table()
    first = t.post_deal(DEFENDERS_WIN, "once")
    again = t.post_deal(DEFENDERS_WIN, "once")
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert again.headers["idempotent-replayed"] == "true"
    assert t.state()["deals"] == 1
    assert row_counts(client)["deals"] == 1


def test_same_key_different_body_is_refused(client, make_table):
    t = make_table()
    assert t.post_deal(DEFENDERS_WIN, "k").status_code == 201
    before = row_counts(client)
    r = t.post_deal(DEALER_SWEEP, "k")
    assert r.status_code == 422
    assert "Idempotency-Key" in r.json()["detail"]
    assert row_counts(client) == before


def test_key_equivalence_ignores_json_key_order(client, make_table):
    t = make_table()
    assert t.post_deal(DEFENDERS_WIN, "k").status_code == 201
    reordered = json.loads(json.dumps(DEFENDERS_WIN, sort_keys=True))
    reordered = dict(reversed(list(reordered.items())))
    r = t.post_deal(reordered, "k")
    assert r.status_code == 201
    assert t.state()["deals"] == 1


def test_keys_are_per_table(client, make_table):
    a, b = make_table(), make_table()
    assert a.post_deal(DEFENDERS_WIN, "shared").status_code == 201
    assert b.post_deal(DEALER_SWEEP, "shared").status_code == 201
    assert (a.state()["deals"], b.state()["deals"]) == (1, 1)


def test_missing_idempotency_key_is_refused(client, make_table):
    t = make_table()
    r = client.post(f"/api/tables/{t.id}/deals", json=DEFENDERS_WIN, headers=t.headers())
    assert r.status_code == 400
    assert t.state()["deals"] == 0


def test_unfinished_deal_is_refused(client, make_table):
    t = make_table()
    r = t.post_deal(deal(DEFENDERS_WIN, finished=False), "k")
    assert r.status_code == 422
    assert t.state()["deals"] == 0


def test_engine_refusal_names_the_trick_and_keeps_the_log_for_a_referee(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    bad = deal(DEFENDERS_WIN)
    bad["tricks"][FILLER + 1]["plays"][1][1] = ["XX"]
    before = row_counts(client)
    r = t.post_deal(bad, "k")
    assert r.status_code == 422
    assert f"trick {FILLER + 2}, play 2 (N): unknown card 'XX'" in r.json()["detail"]
    after = row_counts(client)
    assert (after["deals"], after["alerts"], after["idempotency"]) == (0, 1, 1)
    alert = client.get("/api/alerts", headers=ref).json()["alerts"][0]
    assert alert["kind"] == "refused" and r.json()["alert"] == alert["id"]
    assert alert["data"]["log"] == bad and f"trick {FILLER + 2}" in alert["reasoning"]
    # The table sends it again (an outage): the same answer, nothing more stored.
    again = t.post_deal(bad, "k")
    assert (again.status_code, again.json()) == (422, r.json())
    assert row_counts(client) == after
    assert before["deals"] == 0


def test_rules_are_fixed_per_table(client, make_table):
    t = make_table("national-2deck")
    r = t.post_deal(deal(DEFENDERS_WIN, rules="challenge-2deck"), "k")
    assert r.status_code == 422
    assert "national-2deck" in r.json()["detail"]


def test_deals_cursor_pages_through_everything(client, make_table):
    t = make_table()
    for i in range(5):
        log = DEALER_SWEEP if i % 2 else DEFENDERS_WIN
        assert t.post_deal(dealt_by(log, "S", "2"), f"k{i}").status_code == 201
    seen, after = [], 0
    for _ in range(10):
        page = client.get(f"/api/tables/{t.id}/deals", params={"after": after, "limit": 2}).json()
        if not page["deals"]:
            break
        seen += [d["deal"] for d in page["deals"]]
        after = page["next"]
    assert seen == [1, 2, 3, 4, 5]


def test_events_feed_and_stream(client, make_table):
    t = make_table()
    t.post_deal(DEFENDERS_WIN, "k")
    events = client.get("/api/events", params={"after": 0}).json()["events"]
    kinds = [e["kind"] for e in events]
    assert kinds == ["table", "deal", "table"]
    assert [e["id"] for e in events] == sorted({e["id"] for e in events})
    deal_event = events[1]
    assert deal_event["table"] == t.id
    assert deal_event["data"]["defender_total"] == 120
    with client.stream("GET", "/api/stream", params={"after": events[0]["id"], "limit": 2}) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        text = "".join(r.iter_text())
    assert f"id: {events[1]['id']}\nevent: deal\n" in text
    assert f"id: {events[2]['id']}\nevent: table\n" in text
    assert f"id: {events[0]['id']}\n" not in text


def test_stream_resumes_from_last_event_id(client, make_table):
    t = make_table()
    t.post_deal(DEFENDERS_WIN, "k")
    with client.stream("GET", "/api/stream", params={"limit": 1}, headers={"Last-Event-ID": "2"}) as r:
        text = "".join(r.iter_text())
    assert "id: 3\nevent: table\n" in text
    assert "id: 2\n" not in text


def test_edge_events_drive_the_live_state(client, make_table):
    t = make_table("national-2deck")
    assert (
        t.post_event({"type": "deal_start", "level": "2", "trump": "S", "dealer": "S"}, "e0").status_code
        == 201
    )
    hand = DEFENDERS_WIN["tricks"][FILLER:]  # the hand-written tricks, played live as tricks 1 and 2
    plays = hand[0]["plays"] + hand[1]["plays"][:1]
    for i, (seat, cards) in enumerate(plays):
        trick = 1 if i < 4 else 2
        r = t.post_event({"type": "play", "trick": trick, "seat": seat, "cards": cards}, f"p{i}")
        assert r.status_code == 201, r.text
    # replayed play: stored once
    seat, cards = plays[0]
    assert t.post_event({"type": "play", "trick": 1, "seat": seat, "cards": cards}, "p0").status_code == 201
    live = t.state()["live"]
    assert live["trump"] == "S"
    assert live["tricks"][0]["plays"] == [list(p) for p in hand[0]["plays"]]
    assert live["tricks"][1]["plays"] == [["E", ["AD"]]]
    assert live["scored_tricks"][0]["winner"] == "E"
    assert t.post_event({"type": "trick", "trick": 1, "winner": "E", "points": 0}, "t1").status_code == 201
    assert t.post_event({"type": "health", "status": "ok", "fps": 9.5}, "h1").status_code == 201
    state = t.state()
    assert state["health"]["status"] == "ok"
    kinds = [e["kind"] for e in client.get("/api/events", params={"table": t.id}).json()["events"]]
    assert kinds.count("play") == 5
    assert kinds.count("trick") == 1 and kinds.count("health") == 1


def test_pages_render(client, make_table):
    t = make_table()
    t.post_deal(DEFENDERS_WIN, "k")
    index = client.get("/")
    assert index.status_code == 200
    assert t.id in index.text and "EventSource" not in index.text  # the script is a static file
    page = client.get(f"/tables/{t.id}")
    assert page.status_code == 200 and "Deals" in page.text
    assert client.get(f"/tables/{t.id}/deals/1").status_code == 200
    assert client.get("/referee", follow_redirects=False).status_code == 303
    assert client.get("/static/live.js").status_code == 200
    other = make_table()
    cards = client.get("/fragments/cards", params={"ids": f"{t.id},{other.id},nope"})
    assert cards.status_code == 200
    assert cards.text.count('class="card-table') == 2
    assert f'id="table-{t.id}"' in cards.text and f'id="table-{other.id}"' in cards.text


def test_an_edge_that_knows_only_its_token(client, make_table):
    """`tractorcam run --scoreboard URL --token TOKEN`: the table is found from its token."""
    t, other = make_table(), make_table()
    me = client.get("/api/table", headers=t.headers())
    assert me.status_code == 200 and me.json()["id"] == t.id
    r = client.post("/api/deals", json=DEFENDERS_WIN, headers=t.headers("k1"))
    assert r.status_code == 201 and r.json()["defender_total"] == 120
    assert r.headers["location"] == f"/api/tables/{t.id}/deals/1"
    again = client.post(f"/api/tables/{t.id}/deals", json=DEFENDERS_WIN, headers=t.headers("k1"))
    assert again.status_code == 201 and again.headers["idempotent-replayed"] == "true"
    r = client.post("/api/events", json={"type": "health", "status": "degraded"}, headers=t.headers("h1"))
    assert r.status_code == 201
    assert (t.state()["deals"], t.state()["health"]["status"]) == (1, "degraded")
    assert other.state()["deals"] == 0 and other.state()["health"] == {"online": False, "looks": 0}
    for headers in ({"Idempotency-Key": "x"}, {"Authorization": "Bearer wrong", "Idempotency-Key": "x"}):
        assert client.post("/api/deals", json=DEFENDERS_WIN, headers=headers).status_code == 401
        assert client.get("/api/table", headers=headers).status_code == 401
    assert t.state()["deals"] == 1
