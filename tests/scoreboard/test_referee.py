"""Referee work: the alert queue, rulings written into the deal log and rescored, corrections with
history, and every later state following."""

from __future__ import annotations

import base64
import copy

from tests.scoreboard.conftest import referee_headers
from tests.scoreboard.deals import DEALER_SWEEP, DEFENDERS_WIN, FILLER, deal, dealt_by, misread_w_kc

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64).decode()


def test_engine_violation_becomes_an_alert(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    assert t.post_deal(DEALER_SWEEP, "k").status_code == 201
    alerts = client.get("/api/alerts", headers=ref).json()["alerts"]
    assert len(alerts) == 1
    a = alerts[0]
    # E's revoke at hand-written trick 1, proven at trick 2 (tricks FILLER + 1 and + 2 of the deal).
    assert (a["kind"], a["seat"], a["trick"], a["proven_at"], a["source"], a["status"]) == (
        "revoke",
        "E",
        FILLER + 1,
        FILLER + 2,
        "engine",
        "open",
    )
    assert "revoke" in a["reasoning"] and f"trick {FILLER + 1}" in a["reasoning"]
    assert t.state()["open_alerts"] == 1


def test_edge_alert_with_evidence_is_attached_to_the_deal(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    r = t.post_event(
        {
            "type": "alert",
            "kind": "revoke",
            "seat": "E",
            "trick": FILLER + 1,
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


def swapped(log: dict, a: tuple, b: tuple) -> dict:
    """``log`` with two cards swapped; a place is ``(trick, seat, index)`` (hand-written trick
    numbers) or ``("bottom", index)``: a correction that keeps the deal whole."""
    out = copy.deepcopy(log)

    def where(place: tuple) -> tuple[list, int]:
        if place[0] == "bottom":
            return out["bottom"], place[1]
        trick, seat, index = place
        play = next(p for p in out["tricks"][FILLER + trick - 1]["plays"] if p[0] == seat)
        return play[1], index

    (la, ia), (lb, ib) = where(a), where(b)
    la[ia], lb[ib] = lb[ib], la[ia]
    return out


def test_correction_fixes_a_play_and_later_states_follow(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    # The camera read W's KC at trick 2 of deal 1 and the bottom's 8D the wrong way round (as
    # DEFENDERS_WIN has them: W follows with 8D, KC buried): D = 120, EW 2 -> 3, E deals.
    truth, _ = misread_w_kc()
    posted = swapped(truth, (2, "W", 0), ("bottom", truth["bottom"].index("8D")))
    t.post_deal(posted, "a")
    t.post_deal(dealt_by(DEFENDERS_WIN, "E", "3"), "b")  # NS 2 -> 3, N deals
    t.post_deal(dealt_by(DEALER_SWEEP, "N", "3"), "c")  # NS 3 -> 6, S deals
    assert t.state()["levels"] == {"NS": "6", "EW": "3"}
    # The truth (deals.misread_w_kc): D = 10 + (50 x 2) = 110, the defenders take over without
    # going up (110 < 120): EW stays at 2, E still deals deal 2.
    fixed = truth
    r = client.post(
        f"/api/tables/{t.id}/deals/1/versions",
        headers=ref,
        json={"base_version": 1, "reason": "8D was KC", "log": fixed},
    )
    assert r.status_code == 201, r.text
    assert r.json()["version"] == 2 and r.json()["result"]["defender_total"] == 110
    # ... and a stale base version is refused.
    r = client.post(
        f"/api/tables/{t.id}/deals/1/versions",
        headers=ref,
        json={"base_version": 1, "reason": "again", "log": fixed},
    )
    assert r.status_code == 409
    # A correction that breaks the deal (E's AH and N's 7H swapped: N wins trick 1 but E leads
    # trick 2) is refused, naming the trick.
    broken = swapped(fixed, (1, "E", 0), (1, "N", 0))
    r = client.post(
        f"/api/tables/{t.id}/deals/1/versions",
        headers=ref,
        json={"base_version": 2, "reason": "seats", "log": broken},
    )
    assert r.status_code == 422 and f"trick {FILLER + 2}" in r.json()["detail"]
    # E's AD and S's 6D were the other way round: S takes the last trick, the dealer side keeps the
    # bottom, D = 0: NS up 3 (2 -> 5), N deals deal 2; then deal 2: NS 5 -> 6, deal 3: NS 6 -> 9.
    last = swapped(fixed, (2, "E", 0), (2, "S", 0))
    r = client.post(
        f"/api/tables/{t.id}/deals/1/versions",
        headers=ref,
        json={"base_version": 2, "reason": "last trick misread", "log": last},
    )
    assert r.status_code == 201, r.text
    assert r.json()["result"]["defender_total"] == 0
    state = t.state()
    assert (state["levels"], state["dealer"], state["deals"]) == ({"NS": "9", "EW": "2"}, "S", 3)
    deals = client.get(f"/api/tables/{t.id}/deals").json()["deals"]
    assert [d["state_after"]["levels"] for d in deals] == [
        {"NS": "5", "EW": "2"},
        {"NS": "6", "EW": "2"},
        {"NS": "9", "EW": "2"},
    ]
    versions = client.get(f"/api/tables/{t.id}/deals/1").json()["versions"]
    assert [(v["version"], v["reason"]) for v in versions] == [
        (1, "posted by the table"),
        (2, "8D was KC"),
        (3, "last trick misread"),
    ]
    assert versions[0]["log"] == posted
    assert all(v["result"]["violations"] == [] for v in versions)  # each version a legal deal


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
        ({"base_version": 1, "reason": "x", "log": dict(DEFENDERS_WIN, rules="zhku-3deck")}, 422),
        (
            {
                "base_version": 1,
                "reason": "x",
                "log": dict(DEFENDERS_WIN, tricks=DEFENDERS_WIN["tricks"][:-1]),
            },
            422,
        ),
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
    # E's cards of tricks 1 and 2 were read the wrong way round: E followed hearts with 7H at
    # trick 1 and played 7C at trick 2, the last trick: no revoke proven any more.
    r = client.post(
        f"/api/tables/{t.id}/deals/1/versions",
        headers=ref,
        json={
            "base_version": 1,
            "reason": "7C and 7H swapped",
            "log": swapped(DEALER_SWEEP, (1, "E", 0), (2, "E", 0)),
        },
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
    for i, (seat, cards) in enumerate(DEFENDERS_WIN["tricks"][FILLER]["plays"]):
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
