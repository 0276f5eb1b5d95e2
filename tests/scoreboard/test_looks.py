"""Issue 39: a ``look`` (an unknown card that could change a trick's winner or the outcome, or a
violation resting on a doubtful reading) is settled by a referee naming the cards they saw: a new
version of the look's deal records them. Expected scores are worked out by hand in deals.py."""

from __future__ import annotations

import base64
from typing import Any

from tests.scoreboard.conftest import referee_headers, row_counts
from tests.scoreboard.deals import DEFENDERS_WIN, FILLER, deal, misread_w_kc
from tests.scoreboard.test_referee import swapped

JPEG = base64.b64encode(b"\xff\xd8\xff\xe0" + b"\x00" * 60).decode()


def look(trick: int | None = None, seat: str | None = None, reasoning: str = "look") -> dict[str, Any]:
    body: dict[str, Any] = {"type": "alert", "kind": "look", "reasoning": reasoning}
    body["images"] = [{"content_type": "image/jpeg", "data": JPEG, "caption": f"trick {trick}"}]
    if trick is not None:
        body["trick"] = trick
    if seat is not None:
        body["seat"] = seat
    return body


def two_unread() -> tuple[dict[str, Any], int]:
    """DEFENDERS_WIN with two cards seen but not named: W's 8D on E's AD at the last trick
    (hand-written trick 2) and N's KC in a filler trick (which the dealer side wins, tests/fill.py).
    The inventory says one is 8D and the other KC, not which: the last trick holds 0 or 10 points,
    D = 120 or 130, the defenders take over +1 either way, so the deal counts with D open.
    Returns the log and the number of N's filler trick."""
    log = deal(DEFENDERS_WIN)
    [kc] = [i for i, t in enumerate(log["tricks"][:FILLER]) if ["N", ["KC"]] in t["plays"]]
    assert log["tricks"][FILLER + 1]["plays"][2] == ["W", ["8D"]]
    log["tricks"][kc]["plays"] = [
        ["N", ["??"]] if p == ["N", ["KC"]] else p for p in log["tricks"][kc]["plays"]
    ]
    log["tricks"][FILLER + 1]["plays"][2] = ["W", ["??"]]
    return log, kc + 1


def versions(client: Any, t: Any) -> list[dict[str, Any]]:
    return client.get(f"/api/tables/{t.id}/deals/1").json()["versions"]  # type: ignore[no-any-return]


def alert(client: Any, ref: dict[str, str], alert_id: int) -> dict[str, Any]:
    return client.get(f"/api/alerts/{alert_id}", headers=ref).json()  # type: ignore[no-any-return]


def test_a_referee_names_the_unread_cards_and_the_deal_gets_a_version(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    log, kc_trick = two_unread()
    w_look = t.post_event(look(FILLER + 2, reasoning="trick 25: who won?"), "l1").json()["alert"]
    n_look = t.post_event(look(kc_trick, reasoning="an unread card"), "l2").json()["alert"]
    assert t.state()["health"]["looks"] == 2
    r = t.post_deal(log, "d")
    assert r.status_code == 201, r.text
    assert (r.json()["defender_total"], r.json()["defender_total_range"]) == (None, [120, 130])
    assert t.state()["levels"] == {"NS": "2", "EW": "3"}
    url = f"/api/alerts/{w_look}/resolve"
    fixes = [
        {"trick": FILLER + 2, "seat": "W", "cards": ["8D"]},
        {"trick": kc_trick, "seat": "N", "cards": ["KC"]},
    ]
    # A table's token cannot settle it.
    assert (
        client.post(
            url, json={"reason": "x", "fixes": fixes, "base_version": 1}, headers=t.headers()
        ).status_code
        == 401
    )
    # Naming cards needs the version they are named on.
    r = client.post(url, json={"reason": "x", "fixes": fixes}, headers=ref)
    assert r.status_code == 422 and "base_version" in r.json()["detail"]
    # Cards that make the deal impossible (a third QC in two decks): the engine's reason, nothing changes.
    before = row_counts(client)
    bad = [dict(fixes[0], cards=["QC"]), fixes[1]]
    r = client.post(url, json={"reason": "x", "fixes": bad, "base_version": 1}, headers=ref)
    assert r.status_code == 422 and "QC appears more than 2" in r.json()["detail"]
    assert row_counts(client) == before and alert(client, ref, w_look)["status"] == "open"
    # The cards the referee saw: W's 8D (no points), N's KC in the dealer's trick: D = 120.
    r = client.post(url, json={"reason": "8D on the picture", "fixes": fixes, "base_version": 1}, headers=ref)
    assert r.status_code == 201, r.text
    assert (r.json()["deal"], r.json()["version"]) == (1, 2)
    result = r.json()["result"]
    assert (result["defender_total"], result["captured"], result["unknown"]) == (120, 0, 0)
    assert result["outcome"] == {"side": "defenders", "levels": 1, "next_dealer": "E"}
    v2 = versions(client, t)[-1]
    assert (v2["version"], v2["author"], v2["reason"]) == (2, "ref", f"look #{w_look}: 8D on the picture")
    assert v2["log"]["tricks"][FILLER + 1]["plays"][2] == ["W", ["8D"]]
    assert ["N", ["KC"]] in v2["log"]["tricks"][kc_trick - 1]["plays"]
    settled = alert(client, ref, w_look)
    assert (settled["status"], settled["resolved_by"], settled["deal"]) == ("resolved", "ref", 1)
    assert settled["note"] == "settled by version 2 of deal 1"
    assert t.state()["health"]["looks"] == 1 and t.state()["levels"] == {"NS": "2", "EW": "3"}
    # The other look, on the version it saw: stale.
    url = f"/api/alerts/{n_look}/resolve"
    stale = client.post(url, json={"reason": "x", "fix": fixes[1], "base_version": 1}, headers=ref)
    assert stale.status_code == 409 and "version 2, not 1" in stale.json()["detail"]
    # Already named: closed with no new version.
    r = client.post(url, json={"reason": f"named with look #{w_look}"}, headers=ref)
    assert r.status_code == 200, r.text
    assert (r.json()["status"], r.json()["note"]) == (
        "resolved",
        f"looked, no change: named with look #{w_look}",
    )
    assert [v["version"] for v in versions(client, t)] == [1, 2]
    assert t.state()["health"]["looks"] == 0
    assert client.post(url, json={"reason": "again"}, headers=ref).status_code == 409
    feed = [e["kind"] for e in client.get("/api/events", params={"table": t.id}).json()["events"]]
    assert feed.count("correction") == 1


def test_a_doubtful_reading_named_right_changes_the_outcome(client, make_table):
    """The camera read W's KC at the last trick as 8D and the bottom's 8D as KC, with doubt: D = 120
    (EW +1, deals.py). The referee names W's KC and the bottom: D = 10 + 50 x 2 = 110, EW take
    over without going up (deals.misread_w_kc)."""
    ref = referee_headers(client)
    t = make_table()
    truth, _ = misread_w_kc()
    posted = swapped(truth, (2, "W", 0), ("bottom", truth["bottom"].index("8D")))
    look_id = t.post_event(look(FILLER + 2, "W", "W's card read with doubt"), "l").json()["alert"]
    assert t.post_deal(posted, "d").json()["defender_total"] == 120
    assert t.state()["levels"] == {"NS": "2", "EW": "3"}
    body = {
        "reason": "KC on the picture, 8D in the bottom",
        "base_version": 1,
        "fix": {"trick": FILLER + 2, "seat": "W", "cards": ["KC"]},
        "bottom": truth["bottom"],
    }
    r = client.post(f"/api/alerts/{look_id}/resolve", json=body, headers=ref)
    assert r.status_code == 201, r.text
    assert r.json()["result"]["defender_total"] == 110
    assert versions(client, t)[-1]["log"] == truth
    state = t.state()
    assert (state["levels"], state["dealer"], state["health"]["looks"]) == ({"NS": "2", "EW": "2"}, "E", 0)


def test_a_look_before_its_deal_takes_no_cards(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    look_id = t.post_event(look(3), "l").json()["alert"]
    url = f"/api/alerts/{look_id}/resolve"
    fix = {"trick": 3, "seat": "W", "cards": ["8D"]}
    r = client.post(url, json={"reason": "x", "fix": fix, "base_version": 1}, headers=ref)
    assert r.status_code == 409 and "once the deal is posted" in r.json()["detail"]
    assert alert(client, ref, look_id)["status"] == "open"
    r = client.post(url, json={"reason": "the card is clear on the picture"}, headers=ref)
    assert r.status_code == 200 and r.json()["status"] == "resolved"
    assert t.state()["health"]["looks"] == 0


def test_only_refused_logs_and_looks_are_resolved(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    revoke = t.post_event({"type": "alert", "kind": "revoke", "seat": "E", "trick": 2}, "a").json()["alert"]
    r = client.post(f"/api/alerts/{revoke}/resolve", json={"reason": "x"}, headers=ref)
    assert r.status_code == 409 and "record a ruling or dismiss it" in r.json()["detail"]
    assert client.post("/api/alerts/999/resolve", json={"reason": "x"}, headers=ref).status_code == 404


def test_a_refused_log_with_two_unread_plays_is_settled_with_fixes(client, make_table):
    """S's lead of trick 1 (AD), W's 8D at the last trick and a bottom KD unread: the three are
    AD, 8D and KD in some order, S's lead beating the QD that follows it (AD or KD). Refused: the
    outcome hangs on them. Naming S's AD alone leaves W's card and the bottom open: W's 8D and a
    bottom KD give D = 60 x 2 = 120 (EW +1), W's KD and a bottom 8D give D = 10 + 50 x 2 = 110
    (EW +0). Naming W's 8D too forces the bottom's KD: D = 120, EW take over +1."""
    ref = referee_headers(client)
    t = make_table()
    log = deal(DEFENDERS_WIN)
    assert (log["tricks"][0]["plays"][0], log["bottom"][0]) == (["S", ["AD"]], "KD")
    log["tricks"][0]["plays"][0][1] = ["??"]
    log["tricks"][FILLER + 1]["plays"][2][1] = ["??"]
    log["bottom"][0] = "??"
    r = t.post_deal(log, "k")
    assert r.status_code == 422 and "outcome depends on 3 unknown card(s)" in r.json()["detail"]
    url = f"/api/alerts/{r.json()['alert']}/resolve"
    s_ad = {"trick": 1, "seat": "S", "cards": ["AD"]}
    w_8d = {"trick": FILLER + 2, "seat": "W", "cards": ["8D"]}
    r = client.post(url, json={"reason": "one", "fix": s_ad}, headers=ref)
    assert r.status_code == 422 and "outcome depends on 2 unknown card(s)" in r.json()["detail"]
    r = client.post(url, json={"reason": "read", "fix": s_ad, "base_version": 1}, headers=ref)
    assert r.status_code == 422 and "base_version" in r.json()["detail"]
    r = client.post(url, json={"reason": "both read by hand", "fixes": [s_ad, w_8d]}, headers=ref)
    assert r.status_code == 201, r.text
    assert (r.json()["result"]["defender_total"], r.json()["result"]["unknown"]) == (120, 0)
    stored = versions(client, t)[0]["log"]
    assert stored["tricks"][0]["plays"][0] == ["S", ["AD"]]
    assert stored["tricks"][FILLER + 1]["plays"][2] == ["W", ["8D"]]
    assert t.state()["levels"] == {"NS": "2", "EW": "3"}


def test_a_refused_log_settled_with_a_play_and_the_bottom(client, make_table):
    """deals.misread_w_kc, and the bottom's 8D read as 8C too (8D and 8C three times each in two
    decks): W's play and the bottom are named together; D = 10 + 50 x 2 = 110."""
    ref = referee_headers(client)
    t = make_table()
    truth, misread = misread_w_kc()
    misread["bottom"] = ["8C" if c == "8D" else c for c in misread["bottom"]]
    r = t.post_deal(misread, "k")
    assert r.status_code == 422, r.text
    url = f"/api/alerts/{r.json()['alert']}/resolve"
    w_kc = {"trick": FILLER + 2, "seat": "W", "cards": ["KC"]}
    r = client.post(url, json={"reason": "KC", "fix": w_kc}, headers=ref)
    assert r.status_code == 422 and "8C appears more than 2" in r.json()["detail"]
    r = client.post(
        url, json={"reason": "KC, 8D in the bottom", "fix": w_kc, "bottom": truth["bottom"]}, headers=ref
    )
    assert r.status_code == 201, r.text
    assert r.json()["result"]["defender_total"] == 110
    assert versions(client, t)[0]["log"] == truth


def test_the_queue_offers_the_look_with_its_crop_and_the_plays_to_name(client, make_table):
    ref = referee_headers(client)
    t = make_table()
    log, _ = two_unread()
    look_id = t.post_event(look(FILLER + 2), "l").json()["alert"]
    t.post_deal(log, "d")
    page = client.get("/fragments/alerts", headers=ref).text
    assert f'id="alert-{look_id}"' in page and 'class="look" data-base="1"' in page
    assert f"/api/alerts/{look_id}/images/" in page  # the crop, beside the form
    assert f'data-orig="{FILLER + 2} W ??"' in page and "Settle the look" in page
    assert (
        f"The camera could not name every card of W’s ?? at trick {FILLER + 2}: "
        "the trick holds 0 to 10 points depending on it." in page
    )


def test_the_referee_enters_the_trump_the_camera_did_not_see(client, make_table):
    """deals.DEFENDERS_WIN was played with spades trump; the camera, not seeing the declaration,
    posted it with hearts: then W wins trick 2 but S leads trick 3, and the log is refused. The
    referee enters the trump alone: stored, D = 120, EW +1. A trump that breaks a stored deal is
    refused with the engine's reason and changes nothing."""
    ref = referee_headers(client)
    t = make_table()
    log = deal(DEFENDERS_WIN)
    assert log["trump"] == "S"
    r = t.post_deal({**log, "trump": "H"}, "k")
    assert r.status_code == 422 and "S led but W won trick 2" in r.json()["detail"], r.text
    url = f"/api/alerts/{r.json()['alert']}/resolve"
    r = client.post(url, json={"reason": "spades were declared", "trump": "S"}, headers=ref)
    assert r.status_code == 201, r.text
    assert r.json()["result"]["defender_total"] == 120
    assert versions(client, t)[0]["log"]["trump"] == "S"
    assert t.state()["levels"] == {"NS": "2", "EW": "3"}
    r = client.post(
        f"/api/tables/{t.id}/deals/1/versions",
        json={"base_version": 1, "reason": "diamonds?", "trump": "D"},
        headers=ref,
    )
    assert r.status_code == 422 and "S led but W won trick 3" in r.json()["detail"], r.text
    assert len(versions(client, t)) == 1


def test_a_revoke_the_table_asked_a_look_about_waits_for_the_referee(client, make_table):
    """The table raised E's revoke as a look (the cards it rests on read with doubt): the engine's
    proof of it in the posted log joins the look instead of standing as a revoke alert of its own.
    Once the referee closes the look with the cards as read, the revoke is alerted."""
    from tests.scoreboard.deals import DEALER_SWEEP

    ref = referee_headers(client)
    t = make_table()
    look_id = t.post_event(look(FILLER + 1, "E", "a revoke would follow from doubtful cards"), "l").json()[
        "alert"
    ]
    assert t.post_deal(DEALER_SWEEP, "d").status_code == 201
    [only] = client.get("/api/alerts", headers=ref).json()["alerts"]
    assert (only["id"], only["kind"], only["status"]) == (look_id, "look", "open")
    assert "revoke" in alert(client, ref, look_id)["reasoning"].split("\n", 1)[1]  # the engine's, joined
    r = client.post(
        f"/api/alerts/{look_id}/resolve", json={"reason": "E's 7C is on the picture"}, headers=ref
    )
    assert r.status_code == 200, r.text
    assert alert(client, ref, look_id)["status"] == "resolved"
    [revoke] = client.get("/api/alerts", headers=ref).json()["alerts"]
    assert (revoke["seat"], revoke["trick"], revoke["source"], revoke["status"]) == (
        "E",
        FILLER + 1,
        "engine",
        "open",
    )


def test_a_look_on_another_play_holds_back_no_revoke(client, make_table):
    """A look about another seat's play of the trick does not hold back E's revoke."""
    from tests.scoreboard.deals import DEALER_SWEEP

    ref = referee_headers(client)
    t = make_table()
    t.post_event(look(FILLER + 1, "W", "W's card: who won?"), "l")
    assert t.post_deal(DEALER_SWEEP, "d").status_code == 201
    kinds = sorted(a["kind"] for a in client.get("/api/alerts", headers=ref).json()["alerts"])
    assert kinds == ["look", "revoke"]
