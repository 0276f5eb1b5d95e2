"""Referee work: the alert queue, rulings written into the deal log and rescored, corrections with
history, and every later state following."""

from __future__ import annotations

import base64

from tests.scoreboard.conftest import referee_headers
from tests.scoreboard.deals import DEALER_SWEEP, DEFENDERS_WIN, deal, dealt_by

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64).decode()


def test_engine_violation_becomes_an_alert(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    assert t.post_deal(DEALER_SWEEP, "k").status_code == 201
    alerts = client.get("/api/alerts", headers=ref).json()["alerts"]
    assert len(alerts) == 1
    a = alerts[0]
    assert (a["kind"], a["seat"], a["trick"], a["proven_at"], a["source"], a["status"]) == (
        "revoke",
        "E",
        1,
        2,
        "engine",
        "open",
    )
    assert "revoke" in a["reasoning"] and "trick 1" in a["reasoning"]
    assert t.state()["open_alerts"] == 1


def test_edge_alert_with_evidence_is_attached_to_the_deal(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    r = t.post_event(
        {
            "type": "alert",
            "kind": "revoke",
            "seat": "E",
            "trick": 1,
            "reasoning": "E showed out of hearts at trick 1",
            "images": [{"content_type": "image/png", "data": PNG, "caption": "trick 1"}],
        },
        "a1",
    )
    assert r.status_code == 201
    alert_id = r.json()["alert"]
    a = client.get(f"/api/alerts/{alert_id}", headers=ref).json()
    assert a["deal"] is None and a["source"] == "edge"
    img = client.get(a["images"][0], headers=ref)
    assert img.status_code == 200 and img.headers["content-type"] == "image/png"
    assert img.content == base64.b64decode(PNG)
    assert client.get(a["images"][0]).status_code == 401  # evidence is for referees only
    # ruling before the deal is posted: refused, nothing changes
    assert client.post(f"/api/alerts/{alert_id}/ruling", json={}, headers=ref).status_code == 409
    assert t.post_deal(DEALER_SWEEP, "k").status_code == 201
    alerts = client.get("/api/alerts", headers=ref).json()["alerts"]
    assert len(alerts) == 1  # the engine's proof of the same revoke joins the edge alert
    a = alerts[0]
    assert a["id"] == alert_id and a["deal_id"] is not None
    assert "E showed out of hearts" in a["reasoning"] and "engine:" in a["reasoning"]


def test_acknowledge_then_dismiss(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    t.post_deal(DEALER_SWEEP, "k")
    alert_id = client.get("/api/alerts", headers=ref).json()["alerts"][0]["id"]
    r = client.post(f"/api/alerts/{alert_id}/ack", headers=ref)
    assert r.status_code == 200 and r.json()["status"] == "acknowledged"
    assert client.post(f"/api/alerts/{alert_id}/ack", headers=ref).status_code == 409
    r = client.post(f"/api/alerts/{alert_id}/dismiss", json={"note": "played a heart after all"}, headers=ref)
    assert r.status_code == 200 and r.json()["status"] == "dismissed"
    assert r.json()["resolved_by"] == "ref"
    assert client.get("/api/alerts", headers=ref).json()["alerts"] == []
    assert t.state()["open_alerts"] == 0
    assert t.state()["levels"] == {"NS": "5", "EW": "2"}  # dismissing changes no score


def test_ruling_with_points_is_written_into_the_log_and_rescored(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    t.post_deal(DEALER_SWEEP, "k")  # D = 0: NS 2 -> 5
    assert t.state()["levels"] == {"NS": "5", "EW": "2"}
    alert_id = client.get("/api/alerts", headers=ref).json()["alerts"][0]["id"]
    r = client.post(
        f"/api/alerts/{alert_id}/ruling",
        json={"points": 40, "levels": 0, "deals_next": False, "note": "table 4, 2 decks"},
        headers=ref,
    )
    assert r.status_code == 201, r.text
    out = r.json()
    # 40 points against defender E: D = 0 - 40 = -40 < 0, so the dealer side goes up
    # 3 + ceil(40 / 40) = 4 levels: NS 2 -> 6.
    assert out["version"] == 2
    assert out["result"]["defender_total"] == -40
    assert out["result"]["outcome"]["levels"] == 4
    assert t.state()["levels"] == {"NS": "6", "EW": "2"}
    d = client.get(f"/api/tables/{t.id}/deals/1").json()
    assert [v["version"] for v in d["versions"]] == [1, 2]
    assert "rulings" not in d["versions"][0]["log"]  # history kept as it was
    ruling = d["versions"][1]["log"]["rulings"][0]
    assert (ruling["seat"], ruling["kind"], ruling["points"], ruling["levels"]) == ("E", "revoke", 40, 0)
    assert d["versions"][1]["author"] == "ref"
    assert client.get(f"/api/alerts/{alert_id}", headers=ref).json()["status"] == "ruled"
    assert client.post(f"/api/alerts/{alert_id}/ruling", json={}, headers=ref).status_code == 409


def test_standard_ruling_seed_001_article_18(client, make_table):
    """zhku-3deck: an established revoke gives the non-offending side +1 level and the next deal."""
    ref = referee_headers(client)
    t = make_table("zhku-3deck")
    log = deal(DEALER_SWEEP, rules="zhku-3deck", bottom=["6D", "7D", "8D", "9D", "JD", "QD"])
    r = t.post_deal(log, "k")
    assert r.status_code == 201, r.text
    # zhku-3deck, D = 0 <= 115: dealer side up 1 + floor(115 / 30) = 4 (NS 2 -> 6), N deals next.
    assert t.state()["levels"] == {"NS": "6", "EW": "2"}
    alert_id = client.get("/api/alerts", headers=ref).json()["alerts"][0]["id"]
    r = client.post(f"/api/alerts/{alert_id}/ruling", json={}, headers=ref)
    assert r.status_code == 201, r.text
    ruling = r.json()["ruling"]
    assert (ruling["seat"], ruling["kind"], ruling["levels"], ruling["deals_next"]) == (
        "E",
        "revoke",
        1,
        True,
    )
    state = t.state()
    assert state["levels"]["NS"] == "7"  # +1 level to the non-offending side (N/S)


def test_ruling_on_a_deal_without_alert(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    t.post_deal(DEFENDERS_WIN, "k")  # D = 120
    r = client.post(
        f"/api/tables/{t.id}/deals/1/rulings",
        json={
            "seat": "N",
            "kind": "other",
            "points": 20,
            "levels": 0,
            "deals_next": False,
            "note": "exposed card",
        },
        headers=ref,
    )
    assert r.status_code == 201, r.text
    # 20 points against the dealer side (N): D = 120 + 20 = 140, defenders up floor(60 / 40) = 1.
    assert r.json()["result"]["defender_total"] == 140


def test_correction_fixes_a_play_and_later_states_follow(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    t.post_deal(DEFENDERS_WIN, "a")  # EW 2 -> 3, E deals
    t.post_deal(dealt_by(DEFENDERS_WIN, "E", "3"), "b")  # NS 2 -> 3, N deals
    t.post_deal(dealt_by(DEALER_SWEEP, "N", "3"), "c")  # NS 3 -> 6, S deals
    assert t.state()["levels"] == {"NS": "6", "EW": "3"}
    # The camera misread W's 8D at trick 2 of deal 1: it was KC (a discard: 10 points, won by E).
    # D = 10 + 120 = 130: still +1 for EW ...
    r = client.post(
        f"/api/tables/{t.id}/deals/1/versions",
        headers=ref,
        json={"base_version": 1, "reason": "8D was KC", "fix": {"trick": 2, "seat": "W", "cards": ["KC"]}},
    )
    assert r.status_code == 201, r.text
    assert r.json()["version"] == 2 and r.json()["result"]["defender_total"] == 130
    # ... and a stale base version is refused.
    r = client.post(
        f"/api/tables/{t.id}/deals/1/versions",
        headers=ref,
        json={"base_version": 1, "reason": "again", "fix": {"trick": 2, "seat": "N", "cards": ["10D"]}},
    )
    assert r.status_code == 409
    # A bottom misread: 9C 9C were 10D 10D. Bottom 80 points x 2 = 160, D = 10 + 160 = 170:
    # the defenders go up floor((170 - 80) / 40) = 2, EW 2 -> 4; E still deals deal 2.
    current = client.get(f"/api/tables/{t.id}/deals/1").json()["versions"][-1]["log"]
    fixed = deal(current, bottom=["KD", "KD", "10C", "10C", "KC", "KH", "10D", "10D"])
    r = client.post(
        f"/api/tables/{t.id}/deals/1/versions",
        headers=ref,
        json={"base_version": 2, "reason": "bottom misread", "log": fixed},
    )
    assert r.status_code == 201, r.text
    assert r.json()["result"]["defender_total"] == 170
    state = t.state()
    assert (state["levels"], state["dealer"], state["deals"]) == ({"NS": "6", "EW": "4"}, "S", 3)
    deals = client.get(f"/api/tables/{t.id}/deals").json()["deals"]
    assert [d["state_after"]["levels"] for d in deals] == [
        {"NS": "2", "EW": "4"},
        {"NS": "3", "EW": "4"},
        {"NS": "6", "EW": "4"},
    ]
    versions = client.get(f"/api/tables/{t.id}/deals/1").json()["versions"]
    assert [(v["version"], v["reason"]) for v in versions] == [
        (1, "posted by the table"),
        (2, "8D was KC"),
        (3, "bottom misread"),
    ]
    assert versions[0]["log"] == DEFENDERS_WIN


def test_bad_corrections_store_nothing(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    t.post_deal(DEFENDERS_WIN, "a")
    url = f"/api/tables/{t.id}/deals/1/versions"
    bad = deal(DEFENDERS_WIN)
    bad["tricks"][0]["plays"][0][1] = ["ZZ"]
    for body, status in [
        ({"base_version": 1, "reason": "x", "log": bad}, 422),
        ({"base_version": 1, "reason": "x", "log": deal(DEFENDERS_WIN, finished=False)}, 422),
        ({"base_version": 1, "reason": "x", "log": deal(DEFENDERS_WIN, rules="zhku-3deck")}, 422),
        ({"base_version": 1, "reason": "", "fix": {"trick": 1, "seat": "S", "cards": ["AH"]}}, 422),
        ({"base_version": 1, "reason": "x", "fix": {"trick": 9, "seat": "S", "cards": ["AH"]}}, 422),
        ({"base_version": 1, "reason": "x"}, 422),
        (
            {"base_version": 1, "reason": "x", "fix": {"trick": 1, "seat": "S", "cards": ["AH"]}, "hack": 1},
            422,
        ),
    ]:
        r = client.post(url, json=body, headers=ref)
        assert r.status_code == status, (body, r.text)
    assert [v["version"] for v in client.get(f"/api/tables/{t.id}/deals/1").json()["versions"]] == [1]
    assert (
        client.post(
            f"/api/tables/{t.id}/deals/7/versions",
            headers=ref,
            json={"base_version": 1, "reason": "x", "log": DEFENDERS_WIN},
        ).status_code
        == 404
    )


def test_correction_that_removes_the_revoke_resolves_the_engine_alert(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    t.post_deal(DEALER_SWEEP, "k")
    assert len(client.get("/api/alerts", headers=ref).json()["alerts"]) == 1
    # E's trick-1 card was really a heart (6H), not 7C: no revoke any more.
    r = client.post(
        f"/api/tables/{t.id}/deals/1/versions",
        headers=ref,
        json={"base_version": 1, "reason": "7C was 6H", "fix": {"trick": 1, "seat": "E", "cards": ["6H"]}},
    )
    assert r.status_code == 201, r.text
    assert client.get("/api/alerts", headers=ref).json()["alerts"] == []
    resolved = client.get("/api/alerts", params={"status": "resolved"}, headers=ref).json()["alerts"]
    assert len(resolved) == 1 and "no longer proven" in resolved[0]["note"]


def test_referee_queue_page(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    t.post_deal(DEALER_SWEEP, "k")
    page = client.get("/fragments/alerts", headers=ref)
    assert page.status_code == 200
    assert "revoke" in page.text and "Record ruling" in page.text


def test_edge_trick_result_that_disagrees_with_the_engine_raises_a_mismatch(client, make_table):
    ref = referee_headers(client)
    t = make_table("national-2deck")
    assert (
        t.post_event({"type": "deal_start", "level": "2", "trump": "S", "dealer": "S"}, "s").status_code
        == 201
    )
    for i, (seat, cards) in enumerate(DEFENDERS_WIN["tricks"][0]["plays"]):
        assert (
            t.post_event({"type": "play", "trick": 1, "seat": seat, "cards": cards}, f"p{i}").status_code
            == 201
        )
    # E's AH takes trick 1 (no points): a matching report raises nothing ...
    r = t.post_event({"type": "trick", "trick": 1, "winner": "E", "points": 0}, "t1")
    assert r.status_code == 201 and "alert" not in r.json()
    # ... a report of N winning 10 does.
    r = t.post_event({"type": "trick", "trick": 1, "winner": "N", "points": 10}, "t1b")
    assert r.status_code == 201 and "alert" in r.json()
    alerts = client.get("/api/alerts", headers=ref).json()["alerts"]
    assert [(a["kind"], a["trick"], a["source"]) for a in alerts] == [("mismatch", 1, "engine")]
    assert "N winning 10" in alerts[0]["reasoning"] and "E winning 0" in alerts[0]["reasoning"]


def test_a_deal_that_does_not_follow_the_match_raises_a_mismatch(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    assert t.post_deal(DEFENDERS_WIN, "a").status_code == 201  # EW 2 -> 3, E deals next
    assert t.post_deal(dealt_by(DEFENDERS_WIN, "E", "3"), "b").status_code == 201  # as expected: no alert
    assert client.get("/api/alerts", headers=ref).json()["alerts"] == []
    # The match says N deals next at NS's level 3; the camera reports W dealing at level 2.
    assert t.post_deal(dealt_by(DEFENDERS_WIN, "W", "2"), "c").status_code == 201
    alerts = client.get("/api/alerts", headers=ref).json()["alerts"]
    assert [(a["kind"], a["source"]) for a in alerts] == [("mismatch", "engine")]
    assert "dealer W" in alerts[0]["reasoning"] and "N deals" in alerts[0]["reasoning"]
    assert "level 2" in alerts[0]["reasoning"]
