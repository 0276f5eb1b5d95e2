"""Issue 75: a table plays one game per round, and mistakes are fixed where they happened.

Each expected level is worked out by hand from the deals in ``deals.py`` (RULES.md): on
national-2deck, DEFENDERS_WIN (S deals at 2) moves E/W up one level and E deals next; DEALER_SWEEP
(S deals at 2) moves N/S up three and N deals next, and E's revoke there is proven."""

from __future__ import annotations

import base64
import copy
import datetime as dt
import json
import re
from typing import Any

from fastapi.testclient import TestClient

from tests.scoreboard.conftest import ADMIN_HEADERS, Table, referee_headers
from tests.scoreboard.deals import DEALER_SWEEP, DEFENDERS_WIN

ENTRIES = [
    {"id": "A", "name": "红队", "unit": "数学系"},
    {"id": "B", "name": "蓝队", "unit": "物理系"},
    {"id": "C", "name": "金队", "unit": "化学系"},
    {"id": "D", "name": "银队", "unit": "图书馆"},
]
EVENT: dict[str, Any] = {
    "name": "春季赛",
    "format": "swiss",
    "scoring": "national",
    "seed": 3,
    "entries": ENTRIES,
}


def tables(client: TestClient, n: int, prefix: str = "T") -> list[Table]:
    return [Table(client, f"{prefix}{k}", "national-2deck") for k in range(1, n + 1)]


def create(client: TestClient, tables_: list[Table], event: dict[str, Any] | None = None, **more: Any) -> str:
    body = {"event": copy.deepcopy(event or EVENT), "tables": [t.id for t in tables_], **more}
    r = client.post("/api/tourneys", json=body, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    return r.json()["id"]  # type: ignore[no-any-return]


def play_round(client: TestClient, tid: str) -> dict[str, Any]:
    """The next round paired and published; its round body."""
    r = client.post(f"/api/tourneys/{tid}/rounds", headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    r = client.post(f"/api/tourneys/{tid}/rounds/{r.json()['round']}/publish", headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def close(
    client: TestClient, tid: str, number: int, table_no: int, headers: dict[str, str], **body: Any
) -> Any:
    return client.post(
        f"/api/tourneys/{tid}/rounds/{number}/matches/{table_no}/close", json=body or None, headers=headers
    )


def result(client: TestClient, tid: str, number: int, table_no: int) -> Any:
    r = client.get(f"/api/tourneys/{tid}/rounds/{number}")
    return next(m for m in r.json()["matches"] if m.get("table") == table_no)


def test_each_round_starts_each_table_at_two_and_later_rounds_leave_closed_results_alone(client):
    """Round 1: T1 plays DEFENDERS_WIN (E/W 2 -> 3); closed at time, home (N/S) 2, away 3. Round 2
    starts T1 again at 2-2 (not round 1's 2-3); DEALER_SWEEP there (N/S 2 -> 5) leaves round 1's
    2-3 as it was. Round 3 at T1 with no deal played closes only with a reason, at 2-2."""
    t1, t2 = tables(client, 2)
    tid = create(client, [t1, t2])
    ref = referee_headers(client)
    play_round(client, tid)
    game = t1.state()["game"]
    assert (game["round"], game["table_no"], game["status"], game["event_name"]) == (1, 1, "open", "春季赛")
    assert t1.post_deal(DEFENDERS_WIN, "r1").status_code == 201
    assert t1.state()["levels"] == {"NS": "2", "EW": "3"}
    assert close(client, tid, 1, 1, ref).status_code == 200
    assert close(client, tid, 1, 2, ref, reason="a draw agreed").status_code == 200
    assert result(client, tid, 1, 1)["result"] == {"home_level": "2", "away_level": "3"}

    play_round(client, tid)
    assert t1.state()["game"]["round"] == 2
    assert t1.state()["levels"] == {"NS": "2", "EW": "2"}  # a new round starts at 2-2
    assert t1.post_deal(DEALER_SWEEP, "r2").status_code == 201
    assert t1.state()["levels"] == {"NS": "5", "EW": "2"}
    assert result(client, tid, 1, 1)["result"] == {"home_level": "2", "away_level": "3"}  # unchanged
    assert result(client, tid, 1, 1)["history"] == []
    assert close(client, tid, 2, 1, ref).status_code == 200
    assert close(client, tid, 2, 2, ref, reason="no time left").status_code == 200
    assert result(client, tid, 2, 1)["result"] == {"home_level": "5", "away_level": "2"}

    play_round(client, tid)
    r = close(client, tid, 3, 1, ref)
    assert r.status_code == 409
    assert r.json()["detail"] == (
        "table 1: no deal has been played at T1 in this round (its levels are the start's, 2–2). "
        "Give a reason to close the match as it stands, or enter its result"
    )
    r = close(client, tid, 3, 1, ref, reason="the pairs did not turn up on time")
    assert result(client, tid, 3, 1)["result"] == {"home_level": "2", "away_level": "2"}
    assert "the pairs did not turn up on time" in result(client, tid, 3, 1)["note"]
    # every deal belongs to the round it was played in
    deals = client.get(f"/api/tables/{t1.id}/deals").json()["deals"]
    games = (
        client.get(f"/api/tables/{t1.id}/deals/1").json()["game"],
        client.get(f"/api/tables/{t1.id}/deals/2").json()["game"],
    )
    assert [d["status"] for d in deals] == ["counted", "counted"]
    assert [(g["round"], g["table_no"]) for g in games] == [(1, 1), (2, 1)]


def test_a_table_in_two_events_plays_their_games_in_turn(client):
    """T1 is table 1 of two events: each says so. Event A's round 1 is published first, so T1 plays
    it; event B's round 1 waits (``next``) and starts, at 2-2, once A's match at T1 is closed."""
    (t1,) = tables(client, 1)
    a = create(client, [t1], {**EVENT, "name": "甲", "entries": ENTRIES[:2]})
    b = create(client, [t1], {**EVENT, "name": "乙", "entries": ENTRIES[2:]})
    for x, other in ((a, "乙"), (b, "甲")):
        warnings = client.get(f"/api/tourneys/{x}").json()["warnings"]
        assert warnings == [
            f"table(s) T1 also play for event '{other}': a table plays one event's games at a time, "
            "in the order they are published"
        ]
    ref = referee_headers(client)
    play_round(client, a)
    play_round(client, b)
    state = t1.state()
    assert (state["game"]["event_name"], state["next"]["event_name"], state["next"]["status"]) == (
        "甲",
        "乙",
        "ready",
    )
    assert t1.post_deal(DEFENDERS_WIN, "a1").status_code == 201
    assert t1.state()["levels"] == {"NS": "2", "EW": "3"}
    # B's match cannot be closed before its game has started
    r = close(client, b, 1, 1, ref)
    assert r.status_code == 409 and "T1 has not started this round's game" in r.json()["detail"]
    assert close(client, a, 1, 1, ref).status_code == 200
    state = t1.state()
    assert (state["game"]["event_name"], state["game"]["status"], state["next"]) == ("乙", "open", None)
    assert state["levels"] == {"NS": "2", "EW": "2"}


def test_a_deal_posted_under_the_wrong_token_is_moved_and_both_tables_follow(client):
    """T1's deal (DEFENDERS_WIN) posted with T2's token moves T2 to E/W 3. A referee moves it to T1:
    T1 E/W 3, T2 back at 2-2, the deal is deal 1 at T1 with the move in its history; round 1 closes
    at T1 2-3. Moves into a game not started, or into the deal's own game, are refused."""
    t1, t2 = tables(client, 2)
    tid = create(client, [t1, t2])
    ref = referee_headers(client)
    play_round(client, tid)
    assert t2.post_deal(DEFENDERS_WIN, "wrong").status_code == 201
    assert (t1.state()["levels"], t2.state()["levels"]) == ({"NS": "2", "EW": "2"}, {"NS": "2", "EW": "3"})
    move = {"to_table": t1.id, "reason": "T1's device had T2's token"}
    assert client.post(f"/api/tables/{t2.id}/deals/1/move", json=move).status_code == 401
    r = client.post(f"/api/tables/{t2.id}/deals/1/move", json={**move, "to_table": t2.id}, headers=ref)
    assert r.status_code == 409 and "in that game already" in r.json()["detail"]
    r = client.post(f"/api/tables/{t2.id}/deals/1/move", json=move, headers=ref)
    assert r.status_code == 200, r.text
    assert (r.json()["table"], r.json()["deal"], r.json()["status"]) == (t1.id, 1, "counted")
    assert r.json()["game"]["round"] == 1
    (entry,) = r.json()["history"]
    assert (entry["what"], entry["from"]["table_name"], entry["to"]["table_name"], entry["by"]) == (
        "moved",
        "T2",
        "T1",
        "ref",
    )
    assert (t1.state()["levels"], t2.state()["levels"]) == ({"NS": "2", "EW": "3"}, {"NS": "2", "EW": "2"})
    assert client.get(f"/api/tables/{t2.id}/deals/1").status_code == 404
    assert (
        client.get(f"/api/tables/{t1.id}/deals/1").json()["history"][0]["reason"]
        == "T1's device had T2's token"
    )
    assert close(client, tid, 1, 1, ref).status_code == 200
    assert result(client, tid, 1, 1)["result"] == {"home_level": "2", "away_level": "3"}
    # T2's own deal after its match closed is held; moving it to game 9 (none) or a waiting game fails
    assert close(client, tid, 1, 2, ref, reason="level").status_code == 200
    assert t2.post_deal(DEFENDERS_WIN, "late").status_code == 201
    r = client.post(f"/api/tables/{t2.id}/deals/2/move", json={**move, "game": 9}, headers=ref)
    assert r.status_code == 404 and r.json()["detail"] == "no game 9 at table T1"


def test_a_deal_held_after_its_match_closed_is_counted_or_voided(client):
    """T1's match closes at 2-2 (with a reason); then DEALER_SWEEP arrives: held, a ``held`` alert,
    the result stands. Counted: N/S 5, the result 5-2 (the old one in its history), the held alert
    resolved, E's revoke alerted. Voided: back to 2-2, its alerts resolved."""
    t1, _ = tables(client, 2)
    tid = create(client, [t1])
    ref = referee_headers(client)
    play_round(client, tid)
    assert close(client, tid, 1, 1, ref, reason="time").status_code == 200
    r = t1.post_deal(DEALER_SWEEP, "late")
    assert r.status_code == 201  # the engine's score, as ever
    deal = client.get(f"/api/tables/{t1.id}/deals/1").json()
    assert deal["status"] == "held" and t1.state()["levels"] == {"NS": "2", "EW": "2"}
    alerts = client.get(f"/api/alerts?table={t1.id}", headers=ref).json()["alerts"]
    held = next(a for a in alerts if a["kind"] == "held")
    assert held["deal"] == 1 and "held: deal 1 arrived after round 1's match (table 1)" in held["reasoning"]
    r = client.post(f"/api/alerts/{held['id']}/resolve", json={"reason": "?"}, headers=ref)
    assert (r.status_code, r.json()["detail"]) == (
        409,
        f"alert #{held['id']} is a held deal: count it, move it or void it",
    )
    assert result(client, tid, 1, 1)["result"] == {"home_level": "2", "away_level": "2"}
    r = client.post(
        f"/api/tables/{t1.id}/deals/1/count", json={"reason": "the round's last deal"}, headers=ref
    )
    assert r.status_code == 200 and r.json()["status"] == "counted"
    assert t1.state()["levels"] == {"NS": "5", "EW": "2"}
    m = result(client, tid, 1, 1)
    assert m["result"] == {"home_level": "5", "away_level": "2"}
    assert [h["result"] for h in m["history"]] == [[{"home_level": "2", "away_level": "2"}]]
    assert client.get(f"/api/alerts/{held['id']}", headers=ref).json()["status"] == "resolved"
    revoke = next(
        a
        for a in client.get(f"/api/alerts?table={t1.id}", headers=ref).json()["alerts"]
        if a["kind"] == "revoke"
    )
    assert (revoke["seat"], revoke["deal"]) == ("E", 1)
    r = client.post(f"/api/tables/{t1.id}/deals/1/void", json={"reason": "a practice deal"}, headers=ref)
    assert r.status_code == 200 and r.json()["history"][-1]["what"] == "voided"
    assert t1.state()["levels"] == {"NS": "2", "EW": "2"}
    assert result(client, tid, 1, 1)["result"] == {"home_level": "2", "away_level": "2"}
    assert (
        client.get(f"/api/alerts/{revoke['id']}", headers=ref).json()["note"]
        == "deal voided: a practice deal"
    )
    r = client.post(f"/api/tables/{t1.id}/deals/1/void", json={"reason": "again"}, headers=ref)
    assert (r.status_code, r.json()["detail"]) == (409, "deal 1 is voided already")


def test_closing_with_a_deal_in_play_asks_to_finish_it_first(client):
    """T1 has begun a deal (its start and a play): closing the match, or entering its result, is
    refused with seed 001's rule; with a reason it closes, the reason kept. The deal's log, posted
    afterwards, is held: it began in the closed game."""
    t1, _ = tables(client, 2)
    tid = create(client, [t1])
    ref = referee_headers(client)
    play_round(client, tid)
    assert t1.post_deal(DEFENDERS_WIN, "d1").status_code == 201
    start = {"type": "deal_start", "rules": "national-2deck", "level": "2", "trump": "S", "dealer": "E"}
    assert t1.post_event(start, "s").status_code == 201
    assert t1.post_event({"type": "play", "trick": 1, "seat": "E", "cards": ["AH"]}, "p").status_code == 201
    r = close(client, tid, 1, 1, ref)
    assert r.status_code == 409
    assert r.json()["detail"] == (
        "table 1: a deal is in play at T1 (trick 1). Finish the deal in play first (seed 001 notice 4.3), "
        "or give a reason to close the match now"
    )
    url = f"/api/tourneys/{tid}/rounds/1/matches/1/result"
    r = client.put(url, json={"result": {"home_level": "2", "away_level": "3"}}, headers=ref)
    assert r.status_code == 409 and "a deal is in play at T1" in r.json()["detail"]
    r = client.put(
        url,
        json={"result": {"home_level": "2", "away_level": "3"}, "reason": "the players stopped"},
        headers=ref,
    )
    assert r.status_code == 200
    m = result(client, tid, 1, 1)
    assert m["note"] == "closed over: a deal is in play at T1 (trick 1) (the players stopped)"
    assert t1.post_deal(DEALER_SWEEP, "d2").status_code == 201  # (its own cards: any log will do)
    assert client.get(f"/api/tables/{t1.id}/deals/2").json()["status"] == "held"


def test_archiving_an_event_frees_its_tables_and_importing_twice_is_refused(client):
    """The same file again: 409 naming the first. Archived: off the list, its tables back to a free
    game (its waiting games gone), changes refused; the file may then be imported again."""
    t1, t2 = tables(client, 2)
    tid = create(client, [t1, t2])
    r = client.post("/api/tourneys", json={"event": EVENT, "tables": [t1.id, t2.id]}, headers=ADMIN_HEADERS)
    assert r.status_code == 409
    assert r.json()["detail"] == (
        f"this event file was imported already (event 春季赛, id {tid}): archive that one first, or import again on purpose"
    )
    play_round(client, tid)
    assert t1.state()["game"]["round"] == 1
    assert (
        client.patch(
            f"/api/tourneys/{tid}", json={"archived": True}, headers=referee_headers(client)
        ).status_code
        == 403
    )
    r = client.patch(f"/api/tourneys/{tid}", json={"archived": True}, headers=ADMIN_HEADERS)
    assert r.status_code == 200 and r.json()["archived"] is True
    assert [e["id"] for e in client.get("/api/tourneys").json()["events"]] == []
    assert [e["id"] for e in client.get("/api/tourneys?archived=true").json()["events"]] == [tid]
    game = t1.state()["game"]
    assert (game["round"], game["status"], game["match"]) == (None, "open", False)
    r = client.post(f"/api/tourneys/{tid}/rounds", headers=ADMIN_HEADERS)
    assert (r.status_code, r.json()["detail"]) == (
        409,
        "this event is archived: restore it before changing it",
    )
    again = create(client, [t1])
    assert again != tid
    assert (
        client.patch(f"/api/tourneys/{tid}", json={"archived": False}, headers=ADMIN_HEADERS).json()[
            "archived"
        ]
        is False
    )


def test_entries_added_changed_withdrawn_and_a_draft_discarded(client):
    """A late entry gets the next free id; one named like another is accepted with a warning; a
    withdrawn entry is not paired; entries do not change while a draft waits; a draft discarded is
    gone."""
    tid = create(client, [], {**EVENT, "entries": ENTRIES[:3]})
    url = f"/api/tourneys/{tid}/entries"
    r = client.post(url, json={"name": "红队", "unit": "外语系"}, headers=ADMIN_HEADERS)
    assert r.status_code == 201 and r.json()["entries"] == 4
    assert r.json()["warnings"] == ["two entries are named '红队': A and E04"]
    r = client.patch(f"{url}/E04", json={"name": "紫队"}, headers=ADMIN_HEADERS)
    assert r.json()["warnings"] == []
    assert client.patch(f"{url}/Z", json={"withdrawn": True}, headers=ADMIN_HEADERS).status_code == 404
    r = client.patch(f"{url}/C", json={"withdrawn": True}, headers=ADMIN_HEADERS)
    assert r.status_code == 200
    draft = client.post(f"/api/tourneys/{tid}/rounds", headers=ADMIN_HEADERS).json()
    paired = {x for m in draft["matches"] for x in (m.get("home"), m.get("away"), m.get("bye")) if x}
    assert paired == {"A", "B", "E04"}
    r = client.post(url, json={"name": "晚到"}, headers=ADMIN_HEADERS)
    assert (r.status_code, r.json()["detail"]) == (
        409,
        "round 1 is a draft: publish or discard it before adding an entry",
    )
    assert client.delete(f"/api/tourneys/{tid}/rounds/1", headers=ADMIN_HEADERS).json()["rounds"] == []
    exported = client.get(f"/api/tourneys/{tid}/event.json").json()["entries"]
    assert [(e["id"], e["name"], e.get("withdrawn", False)) for e in exported] == [
        ("A", "红队", False),
        ("B", "蓝队", False),
        ("C", "金队", True),
        ("E04", "紫队", False),
    ]


def test_a_published_round_paired_again_remakes_its_games_until_a_deal_is_played(client):
    """Round 1 published at T1, T2; an override swapping the away entries gives T1's game the new
    teams; once T1 has played a deal the round cannot be paired again."""
    t1, t2 = tables(client, 2)
    tid = create(client, [t1, t2])
    rnd = play_round(client, tid)
    (m1, m2) = rnd["matches"]
    names = {e["id"]: e["name"] for e in ENTRIES}
    swapped = [
        {"table": 1, "home": m1["home"], "away": m2["away"]},
        {"table": 2, "home": m2["home"], "away": m1["away"]},
    ]
    r = client.put(f"/api/tourneys/{tid}/rounds/1/matches", json={"matches": swapped}, headers=ADMIN_HEADERS)
    assert r.status_code == 200, r.text
    assert t1.state()["game"]["teams"] == {"NS": names[m1["home"]], "EW": names[m2["away"]]}
    assert t1.post_deal(DEFENDERS_WIN, "d").status_code == 201
    r = client.put(
        f"/api/tourneys/{tid}/rounds/1/matches",
        json={
            "matches": rnd["matches"][:0]
            + [
                {"table": 1, "home": m1["home"], "away": m1["away"]},
                {"table": 2, "home": m2["home"], "away": m2["away"]},
            ]
        },
        headers=ADMIN_HEADERS,
    )
    assert (r.status_code, r.json()["detail"]) == (
        409,
        "deals were played in round 1 at T1: move or void them before pairing the round again",
    )


def test_the_clock_pauses_resumes_and_calls(client):
    """Seed 002 (national): 120 minutes, the call at 90. Started at 08:00; paused at 08:10 for 5
    minutes: at 08:15 still 110 minutes left; the call then comes at 09:35, not 09:30. A call sent
    by hand is sent once."""
    (t1,) = tables(client, 1)
    tid = create(client, [t1])
    clock = Clock()
    client.app.state.tourneys.clock = clock
    ref = referee_headers(client)
    play_round(client, tid)
    url = f"/api/tourneys/{tid}/rounds/1/clock"
    assert client.post(url, json={"action": "pause"}, headers=ref).status_code == 409  # not started
    assert client.post(url, json={}, headers=ref).json()["state"] == "running"
    clock.move(10)
    assert client.post(url, json={"action": "pause"}, headers=ref).json()["state"] == "paused"
    clock.move(5)
    got = client.get(f"/api/tourneys/{tid}/clock").json()
    assert (got["state"], got["remaining_s"]) == ("paused", 110 * 60)
    got = client.post(url, json={"action": "resume"}, headers=ref).json()
    assert (got["state"], got["paused_s"], got["call_at_time"]) == (
        "running",
        300,
        "2026-12-26T09:35:00+00:00",
    )
    clock.move(79)  # 09:34: not yet
    assert client.app.state.tourneys.tick(tid) == 0
    clock.move(1)
    assert client.app.state.tourneys.tick(tid) == 1
    assert client.post(url, json={"action": "call"}, headers=ref).status_code == 409  # sent already


def test_the_call_can_be_sent_by_hand(client):
    (t1,) = tables(client, 1)
    tid = create(client, [t1])
    ref = referee_headers(client)
    play_round(client, tid)
    url = f"/api/tourneys/{tid}/rounds/1/clock"
    client.post(url, json={}, headers=ref)
    cursor = client.get("/api/events?limit=1000").json()["cursor"]
    got = client.post(url, json={"action": "call"}, headers=ref).json()
    assert (got["state"], got["called"]) == ("called", True)
    calls = [
        e["table"] for e in client.get(f"/api/events?after={cursor}").json()["events"] if e["kind"] == "clock"
    ]
    assert sorted(x or "" for x in calls) == sorted(["", t1.id])


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2026, 12, 26, 8, 0, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now

    def move(self, minutes: float) -> None:
        self.now += dt.timedelta(minutes=minutes)


def test_a_ruling_is_previewed_before_it_is_recorded(client):
    """DEALER_SWEEP: N/S 2 -> 5, E's revoke alerted. A 40-point ruling against E (a defender):
    D = -40, the dealer side up 3 + ceil(40 / 40) = 4 (test_browser's worked case): the preview
    says N/S 5 -> 6 and stores nothing."""
    (t1,) = tables(client, 1)
    ref = referee_headers(client)
    assert t1.post_deal(DEALER_SWEEP, "d").status_code == 201
    (alert,) = client.get("/api/alerts?kind=revoke", headers=ref).json()["alerts"]
    body = {"points": 40, "levels": 0, "deals_next": False}
    r = client.post(f"/api/alerts/{alert['id']}/ruling/preview", json=body, headers=ref)
    assert r.status_code == 200, r.text
    p = r.json()
    assert (p["levels"], p["defender_total"], p["counts"]) == (
        {"before": {"NS": "5", "EW": "2"}, "after": {"NS": "6", "EW": "2"}},
        {"before": 0, "after": -40},
        True,
    )
    assert p["ruling"]["seat"] == "E" and p["ruling"]["kind"] == "revoke"
    assert t1.state()["levels"] == {"NS": "5", "EW": "2"}
    assert client.get(f"/api/tables/{t1.id}/deals/1").json()["current_version"] == 1
    assert client.get(f"/api/alerts/{alert['id']}", headers=ref).json()["status"] == "open"
    assert alert["deal"] == 1  # the queue names each alert's deal


def _login(client: TestClient, name: str, role: str, page: str) -> str:
    """A cookie login through the login page; the form token that ``page``'s forms carry."""
    body = {"username": name, "password": "correct horse", "role": role}
    assert client.post("/api/users", json=body, headers=ADMIN_HEADERS).status_code == 201
    r = client.post("/login", data={**body, "next": "/tourneys"}, follow_redirects=False)
    assert r.status_code == 303
    found = re.search(r'name="csrf" value="([0-9a-f]{64})"', client.get(page).text)
    assert found is not None, page
    return found.group(1)


def test_the_forms_need_a_login_their_token_and_the_right_role(client):
    """Not logged in: the login page, then back. A referee's token on an organiser's form: refused.
    A stale token: refused, nothing done. The organiser with the page's token: the round is paired."""
    tid = create(client, [], {**EVENT, "entries": ENTRIES[:2]})
    form = f"/tourneys/{tid}/manage"
    r = client.post(form, data={"action": "pair"}, follow_redirects=False)
    assert (r.status_code, r.headers["location"]) == (303, f"/login?next={form}")
    (t9,) = tables(client, 1, "X")
    assert t9.post_deal(DEFENDERS_WIN, "d").status_code == 201
    csrf = _login(client, "ref", "referee", f"/tables/{t9.id}/deals/1")  # a deal's page has its forms
    assert "organisers (admin role) only" in client.post(form, data={"action": "pair", "csrf": csrf}).text
    publish = {"action": "publish", "csrf": csrf}
    r = client.post(f"/tourneys/{tid}/rounds/1/manage", data=publish, follow_redirects=False)
    message = json.loads(base64.urlsafe_b64decode(r.cookies["tc_flash"]))  # the next page's message
    assert message == {"kind": "error", "text": "organisers (admin role) only"}
    assert "This page is for an organiser (admin role)" in client.get("/tables/manage").text
    client.post("/logout")
    csrf = _login(client, "org", "admin", "/tables/manage")
    r = client.post(form, data={"action": "pair", "csrf": "0" * 64})
    assert "this form is out of date: reload the page and try again" in r.text
    assert client.get(f"/api/tourneys/{tid}").json()["rounds"] == []
    r = client.post(form, data={"action": "pair", "csrf": csrf}, follow_redirects=False)
    assert (r.status_code, r.headers["location"]) == (303, f"/tourneys/{tid}/rounds/1/manage")
    assert client.get(f"/api/tourneys/{tid}").json()["rounds"] == [{"round": 1, "status": "draft"}]


def test_pages_say_who_plays_where(client):
    """The table page, the all-tables page and the referee queue name the round and the teams."""
    t1, t2 = tables(client, 2)
    tid = create(client, [t1, t2])
    rnd = play_round(client, tid)
    home, away = rnd["matches"][0]["home_name"], rnd["matches"][0]["away_name"]
    page = client.get(f"/tables/{t1.id}").text
    assert "春季赛 · round 1 · table 1" in page and f"NS · {home}" in page and f"EW · {away}" in page
    assert client.get("/").text.count("春季赛 · round 1 · table") == 2
    assert t1.post_deal(DEALER_SWEEP, "d").status_code == 201
    _login(client, "ref", "referee", f"/tables/{t1.id}/deals/1")
    queue = client.get("/referee").text
    assert f"seat E ({away})" in queue and "春季赛 · round 1 · table 1" in queue


def test_a_table_plays_one_game_and_takes_only_its_logs(client):
    """A table is created for a game (Shengji unless said); the API's list of games is those of the
    seam (:mod:`games`) the scoreboard has views for (:mod:`scoreboard.kinds`); a log of another game
    is refused as such, kept for a referee, a game whose rules are known included (bridge)."""
    import typing

    from games import GAMES
    from scoreboard.kinds import KINDS
    from scoreboard.schemas import GameName

    assert set(typing.get_args(GameName)) == set(KINDS) and set(KINDS) <= set(GAMES)
    (t1,) = tables(client, 1)
    assert t1.state()["plays"] == "shengji"
    r = t1.post_deal({**DEFENDERS_WIN, "game": "mahjong"}, "m")
    assert r.status_code == 422
    assert (
        r.json()["detail"]
        == "deal log refused: the rules engine refuses the log: game 'mahjong' is not one tractorcam knows (known: bridge, gomoku, shengji)"
    )
    assert t1.post_deal({**DEFENDERS_WIN, "game": "shengji"}, "s").status_code == 201
    board = {"game": "bridge", "board": 1, "contract": "1NT", "declarer": "S", "tricks": [],
             "claim": {"declarer_tricks": 7, "after_trick": 0}, "finished": True}  # fmt: skip
    r = t1.post_deal(board, "b")  # a Shengji table's deal body: a bridge log is not one
    assert r.status_code == 422 and "rules: Field required" in r.json()["detail"]
    assert t1.state()["deals"] == 1
    r = t1.post_board(board, "b2")  # a bridge board at a Shengji table: refused, kept for a referee
    assert r.status_code == 422
    assert (
        r.json()["detail"]
        == f"deal log refused: table {t1.state()['name']} plays shengji, the log is of bridge"
    )
    assert t1.state()["deals"] == 1 and t1.state()["open_alerts"] == 2  # mahjong's and this one
    r = client.post(
        "/api/tables",
        json={"name": "B1", "plays": "bridge", "rules": "national-2deck"},
        headers=ADMIN_HEADERS,
    )
    assert r.status_code == 422 and "rules: Shengji's only, not bridge's" in r.json()["detail"]
    b1 = Table(client, "B1", plays="bridge")
    r = b1.post_board({**DEFENDERS_WIN, "game": "shengji"}, "s")
    assert r.status_code == 422 and "game: Input should be 'bridge'" in r.json()["detail"]
    r = b1.post_board(board, "b")
    assert r.status_code == 201 and r.json()["score"] == {"NS": 90, "EW": -90}
    assert b1.state()["boards"]["played"] == [1] and b1.state()["levels"] == {}
