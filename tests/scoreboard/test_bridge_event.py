"""Bridge on the scoreboard (issue 78): bridge tables post boards, the director runs a pair event
(a Mitchell, match points) or a team match (IMPs), and the pages show tables, boards, travellers
and standings. Every expected score, match point and IMP here was worked by hand from law 77, the
match-point rule and law 78's scale (the comments show the sums)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from bridge.sim import simulate_board
from tests.scoreboard.conftest import ADMIN_HEADERS, Table, referee_headers, row_counts


def claimed(board: int, contract: str, declarer: str, tricks: int) -> dict[str, Any]:
    """A board whose play the table did not film: declarer's side claims ``tricks`` at the start."""
    return {
        "game": "bridge",
        "board": board,
        "contract": contract,
        "declarer": declarer,
        "tricks": [],
        "claim": {"declarer_tricks": tricks, "after_trick": 0},
        "finished": True,
    }


def bridge_tables(client: TestClient, n: int, prefix: str = "B") -> list[Table]:
    return [Table(client, f"{prefix}{i + 1}", plays="bridge") for i in range(n)]


def new_event(client: TestClient, tables: list[Table], **body: Any) -> dict[str, Any]:
    r = client.post(
        "/api/bridge/events", json={"tables": [t.id for t in tables], **body}, headers=ADMIN_HEADERS
    )
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def start(client: TestClient, event: str, number: int, headers: dict[str, str]) -> Any:
    return client.post(f"/api/bridge/events/{event}/rounds", json={"round": number}, headers=headers)


# The three rounds of a 3-table Mitchell with one board a round (bridge.events.mitchell):
#   round 1: T1 NS1–EW1 board 1, T2 NS2–EW2 board 2, T3 NS3–EW3 board 3
#   round 2: T1 NS1–EW3 board 2, T2 NS2–EW1 board 3, T3 NS3–EW2 board 1
#   round 3: T1 NS1–EW2 board 3, T2 NS2–EW3 board 1, T3 NS3–EW1 board 2
PLAYED = {  # (round, table): the board played there, and N-S's score (law 77, by hand)
    (1, 1): (claimed(1, "4S", "S", 10), 420),  # 120 + 300 game, none vulnerable on board 1
    (1, 2): (claimed(2, "3NT", "N", 9), 600),  # 100 + 500 game, N-S vulnerable on board 2
    (1, 3): (claimed(3, "4HX", "W", 8), 500),  # E-W vulnerable on board 3: doubled, down 2: 200 + 300
    (2, 1): (claimed(2, "3NT", "N", 9), 600),
    (2, 2): (claimed(3, "4H", "W", 10), -620),  # 120 + 500 game for E-W
    (2, 3): (claimed(1, "4S", "S", 11), 450),  # 420 + 30
    (3, 1): (claimed(3, "4H", "W", 10), -620),
    (3, 2): (claimed(1, "4S", "S", 9), -50),  # down 1, undoubled, not vulnerable
    (3, 3): (claimed(2, "2H", "E", 8), -110),  # 60 + 50 part score for E-W
}


def test_a_mitchell_pair_event_is_scored_by_match_points(client: TestClient) -> None:
    tables = bridge_tables(client, 3)
    ref = referee_headers(client)
    ev = new_event(
        client, tables, name="Club pairs", kind="pairs", boards_per_round=1,
        pairs={"NS": ["Li / Wang", "Chen / Zhao", "Sun / Zhou"], "EW": ["Wu / Xu", "Ma / Hu", "Lin / He"]},
    )  # fmt: skip
    assert ev["rounds"] == 3 and ev["current_round"] == 0
    assert [(m["round"], m["table"], m["ns"], m["ew"], m["boards"]) for m in ev["movement"]] == [
        (1, 1, 1, 1, [1]), (1, 2, 2, 2, [2]), (1, 3, 3, 3, [3]),
        (2, 1, 1, 3, [2]), (2, 2, 2, 1, [3]), (2, 3, 3, 2, [1]),
        (3, 1, 1, 2, [3]), (3, 2, 2, 3, [1]), (3, 3, 3, 1, [2]),
    ]  # fmt: skip
    eid = ev["id"]
    assert start(client, eid, 2, ref).status_code == 409  # round 1 first
    assert start(client, eid, 1, {}).status_code == 401  # the director's
    for number in (1, 2, 3):
        r = start(client, eid, number, ref)
        assert r.status_code == 200, r.text
        assert r.json()["current_round"] == number
        for t, table in enumerate(tables, start=1):
            state = table.state()
            assert state["game"]["round"] == number and state["game"]["event_name"] == "Club pairs"
            log, ns = PLAYED[(number, t)]
            assert state["boards"]["round"] == [log["board"]]
            r = table.post_board(log, f"r{number}")
            assert r.status_code == 201, r.text
            assert r.json()["score"] == {"NS": ns, "EW": -ns}
    assert start(client, eid, 4, ref).status_code == 409
    out = client.get(f"/api/bridge/events/{eid}").json()
    # Board 1: 450 beats 2 (4), 420 beats 1 (2), -50 none (0); E-W: top 4 less N-S's.
    # Board 2: 600, 600 beat 1 and tie 1 (3 each), -110 (0). Board 3: +500 (4), -620, -620 (1 each).
    # N-S: pair 1 = 2 + 3 + 1 = 6, pair 2 = 0 + 3 + 1 = 4, pair 3 = 4 + 0 + 4 = 8, of 12 each.
    # E-W: pair 1 = 2 + 4 + 3 = 9, pair 2 = 0 + 1 + 3 = 4, pair 3 = 4 + 1 + 0 = 5.
    got = [(s["direction"], s["pair"], s["matchpoints"], s["top"], s["percentage"]) for s in out["standings"]]
    assert got == [
        ("NS", 3, 8, 12, 66.67), ("NS", 1, 6, 12, 50.0), ("NS", 2, 4, 12, 33.33),
        ("EW", 1, 9, 12, 75.0), ("EW", 3, 5, 12, 41.67), ("EW", 2, 4, 12, 33.33),
    ]  # fmt: skip
    assert out["standings"][0]["name"] == "Sun / Zhou"
    trav = client.get(f"/api/bridge/events/{eid}/boards/1").json()
    lines = [
        (x["round"], x["table"], x["ns_name"], x["ew_name"], x["ns_score"], x["ns_mp"], x["ew_mp"])
        for x in trav["lines"]
    ]
    assert lines == [
        (1, 1, "Li / Wang", "Wu / Xu", 420, 2, 2),
        (2, 3, "Sun / Zhou", "Ma / Hu", 450, 4, 0),
        (3, 2, "Chen / Zhao", "Lin / He", -50, 0, 4),
    ]
    assert trav["top"] == 4
    page = client.get(f"/bridge/{eid}").text
    assert "Sun / Zhou" in page and "66.67" in page and "Standings EW" in page
    page = client.get(f"/bridge/{eid}/boards/1").text
    assert "Chen / Zhao" in page and "-50" in page
    assert client.get(f"/api/bridge/events/{eid}/boards/4").status_code == 404
    assert client.get("/api/bridge/events/" + "0" * 32).status_code == 404
    assert [e["name"] for e in client.get("/api/bridge/events").json()["events"]] == ["Club pairs"]


def test_a_team_match_is_scored_by_imps(client: TestClient) -> None:
    t1, t2 = bridge_tables(client, 2)
    ref = referee_headers(client)
    ev = new_event(client, [t1, t2], name="Final", kind="teams", teams={"A": "Red", "B": "Blue"})
    assert start(client, ev["id"], 1, ref).status_code == 200
    assert t1.state()["game"]["teams"] == {"NS": "Red", "EW": "Blue"}
    assert t2.state()["game"]["teams"] == {"NS": "Blue", "EW": "Red"}
    # Board 1 (none vulnerable): Red N-S +420 at table 1; Blue N-S go down one at table 2 (-50):
    # Red gains 470, 10 IMPs. Board 2 (N-S vulnerable): 600 at table 1, 630 at table 2: Red
    # loses 30, 1 IMP.
    for table, log in (
        (t1, claimed(1, "4S", "S", 10)),
        (t2, claimed(1, "4S", "S", 9)),
        (t1, claimed(2, "3NT", "N", 9)),
        (t2, claimed(2, "3NT", "N", 10)),
    ):
        assert table.post_board(log, f"b{log['board']}").status_code == 201
    match = client.get(f"/api/bridge/events/{ev['id']}").json()["match"]
    assert [(b["board"], b["ns_score_1"], b["ns_score_2"], b["imps"]) for b in match["boards"]] == [
        (1, 420, -50, 10),
        (2, 600, 630, -1),
    ]
    assert match["imps"] == {"A": 10, "B": 1}
    assert client.get(f"/api/bridge/events/{ev['id']}/boards/1").json()["imps"] == 10
    assert "Red 10 – 1 Blue" in client.get(f"/bridge/{ev['id']}").text


def test_late_wrong_and_repeated_boards(client: TestClient) -> None:
    """A board posted after the next round started counts in its own round; a board the round does
    not play at the table is alerted and counted nowhere in the event; a board posted twice is
    alerted and the later post counts."""
    tables = bridge_tables(client, 3)
    ref = referee_headers(client)
    eid = new_event(client, tables, name="Pairs", kind="pairs", boards_per_round=1)["id"]
    start(client, eid, 1, ref)
    assert tables[0].post_board(claimed(1, "4S", "S", 10), "a").status_code == 201
    start(client, eid, 2, ref)
    assert tables[2].post_board(claimed(3, "4HX", "W", 8), "late").status_code == 201  # round 1's board
    assert tables[2].state()["open_alerts"] == 0
    r = client.get(f"/api/bridge/events/{eid}/boards/3").json()
    assert [(x["round"], x["table"], x["ns_score"]) for x in r["lines"]] == [(1, 3, 500)]
    assert tables[1].post_board(claimed(5, "1NT", "S", 7), "wrong").status_code == 201
    alerts = client.get(f"/api/alerts?table={tables[1].id}", headers=ref).json()["alerts"]
    assert [a["kind"] for a in alerts] == ["mismatch"]
    assert "board 5 is not one this table plays in round 2 (boards 3)" in alerts[0]["reasoning"]
    assert tables[0].post_board(claimed(2, "3NT", "N", 9), "x").status_code == 201
    assert tables[0].post_board(claimed(2, "3NT", "N", 10), "y").status_code == 201
    alerts = client.get(f"/api/alerts?table={tables[0].id}", headers=ref).json()["alerts"]
    assert ["board 2 was posted in this game before" in a["reasoning"] for a in alerts] == [True]
    r = client.get(f"/api/bridge/events/{eid}/boards/2").json()
    assert [(x["table"], x["ns_score"]) for x in r["lines"]] == [(1, 630)]
    boards = {b["board"]: b["lines"] for b in client.get(f"/api/bridge/events/{eid}").json()["boards"]}
    assert boards == {1: 1, 2: 1, 3: 1}


def test_bad_events_and_rounds_are_refused_and_store_nothing(client: TestClient) -> None:
    b = bridge_tables(client, 3)
    shengji = Table(client, "S1")
    before = row_counts(client)
    cases = [
        ({"name": "x", "kind": "pairs", "tables": [b[0].id, b[1].id, shengji.id]}, 422, "plays shengji, not bridge"),
        ({"name": "x", "kind": "pairs", "tables": [b[0].id, b[1].id]}, 422, "a Mitchell needs at least 3 tables"),
        ({"name": "x", "kind": "teams", "tables": [t.id for t in b]}, 422, "a team match is played at 2 tables"),
        ({"name": "x", "kind": "pairs", "tables": [b[0].id, b[0].id, b[1].id]}, 422, "a table is listed twice"),
        ({"name": "x", "kind": "pairs", "tables": [t.id for t in b], "pairs": {"NS": ["a", "b"]}}, 422, "NS: 2 pair names for 3 tables"),
        ({"name": "x", "kind": "pairs", "tables": [t.id for t in b], "rounds": 4}, 422, "has 1 to 3 rounds"),
        ({"name": "x", "kind": "teams", "tables": [b[0].id, b[1].id], "pairs": {"NS": ["a", "b"]}}, 422, "a team match has teams"),
        ({"name": "x", "kind": "pairs", "tables": [t.id for t in b], "boards_per_round": 9}, 422, "boards_per_round"),
        ({"name": "x", "kind": "pairs", "tables": [b[0].id, b[1].id, "f" * 32]}, 404, "no table"),
        ({"name": "x", "kind": "bridge", "tables": [t.id for t in b]}, 422, "kind"),
    ]  # fmt: skip
    for body, status, words in cases:
        r = client.post("/api/bridge/events", json=body, headers=ADMIN_HEADERS)
        assert (r.status_code, words in r.json()["detail"]) == (status, True), (body, r.text)
    r = client.post("/api/bridge/events", json={"name": "x", "kind": "pairs", "tables": [t.id for t in b]})
    assert r.status_code == 401
    assert row_counts(client) == before


def test_a_bridge_board_at_the_scoreboard(client: TestClient) -> None:
    """A filmed board with a revoke: the bridge rules' alert, the score posted, the live play,
    corrections as new versions, a Shengji ruling refused, an open score kept for a referee."""
    (t,) = bridge_tables(client, 1)
    ref = referee_headers(client)
    log = simulate_board(2, inject_revoke=True)
    injected = log["injected"]
    assert t.post_event({"type": "board_start", "board": log["board"], "contract": log["contract"],
                         "declarer": log["declarer"]}, "s").status_code == 201  # fmt: skip
    for i, (seat, card) in enumerate(log["tricks"][0]["plays"]):
        assert (
            t.post_event({"type": "play", "trick": 1, "seat": seat, "cards": [card]}, f"p{i}").status_code
            == 201
        )
    live = t.state()["live"]
    assert live["board"] == log["board"] and len(live["scored_tricks"]) == 1
    assert live["scored_tricks"][0]["winner"] in "NESW"
    r = t.post_board(log, "board")
    assert r.status_code == 201, r.text
    result = r.json()
    assert [(v["kind"], v["seat"], v["trick"]) for v in result["violations"]] == [
        ("revoke", injected["seat"], injected["trick"])
    ]
    alerts = client.get(f"/api/alerts?table={t.id}", headers=ref).json()["alerts"]
    assert [(a["kind"], a["seat"], a["trick"], a["source"]) for a in alerts] == [
        ("revoke", injected["seat"], injected["trick"], "engine")
    ]
    assert t.state()["live"]["finished"] is True and t.state()["live"]["score"] == result["score"]
    page = client.get(f"/tables/{t.id}").text
    assert f"<td>{log['board']}</td><td>{log['contract']}</td>" in page
    assert "Revoke by" in client.get(f"/tables/{t.id}/deals/1").text
    # A referee's Shengji ruling does not apply to bridge: the log is corrected instead.
    r = client.post(f"/api/tables/{t.id}/deals/1/rulings", json={"seat": "N", "kind": "revoke"}, headers=ref)
    assert r.status_code == 422 and "takes no Shengji ruling" in r.json()["detail"]
    fixed = {**log, "tricks": log["tricks"][:1], "claim": {"declarer_tricks": 7, "after_trick": 1}}
    r = client.post(
        f"/api/tables/{t.id}/deals/1/versions",
        json={"base_version": 1, "reason": "the film stopped after trick 1: a claim of 7", "log": fixed},
        headers=ref,
    )
    assert r.status_code == 201, r.text
    assert r.json()["result"]["declarer_tricks"] == 7 and r.json()["result"]["violations"] == []
    alerts = client.get(f"/api/alerts?table={t.id}&status=resolved", headers=ref).json()["alerts"]
    assert [(a["kind"], a["note"]) for a in alerts] == [("revoke", "no longer proven by the corrected log")]
    # A board whose unknown cards leave the score open is kept for a referee.
    open_log = {**log, "tricks": [{"plays": [[s, "??"] for s, _ in trk["plays"]]} for trk in log["tricks"]]}
    r = t.post_board({**open_log, "board": 3}, "open")
    assert r.status_code == 422 and "the score depends on" in r.json()["detail"]
    assert t.state()["deals"] == 1
