"""Gomoku on the scoreboard (issue 79): a gomoku table takes the games its camera posts (the live
stones, long thinks and clock, the finished game scored by the gomoku rules), shows the record with
move numbers and gives it as SGF, and a game's result enters an event's match. A filmed game goes
from the table service to the scoreboard once, through an outage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from gomoku.rules import score_log
from gomoku.sgf import read_sgf
from gomoku.sim import simulate_game
from tests.scoreboard.conftest import ADMIN_HEADERS, Table, referee_headers


def test_a_gomoku_table_takes_its_games_live_and_finished(client: TestClient) -> None:
    t = Table(client, "G1", plays="gomoku")
    game = simulate_game(5)  # white wins at move 14; move 13 is black's overtime (38.3 s)
    assert t.post_event({"type": "game_start"}, "s").status_code == 201
    for i, (colour, point, seconds) in enumerate(game["moves"][:6]):
        body = {"type": "stone", "move": i + 1, "colour": colour, "point": point, "seconds": seconds}
        assert t.post_event(body, f"m{i}").status_code == 201
    assert t.post_event({"type": "long_think", "colour": "B"}, "lt").status_code == 201
    live = t.state()["live"]
    assert len(live["stones"]) == 6 and live["long_thinks"] == {"B": [7], "W": []}
    assert live["result"]["winner"] is None and live["clock_from"]
    page = client.get(f"/tables/{t.id}").text
    assert page.count('class="stone ') == 6 and 'data-limit="120"' in page  # black's long think
    r = t.post_event({"type": "stone", "move": 9, "colour": "B", "point": "a1"}, "gap")
    assert r.status_code == 201 and "stone 9 came after stone 6" in t.state()["live"]["error"]

    r = client.post(f"/api/tables/{t.id}/gomoku", json=game, headers=t.headers("game"))
    assert r.status_code == 201, r.text
    assert r.json() == {**score_log(game), "game": "gomoku"}
    state = t.state()
    assert state["gomoku"] == {
        "games": 1,
        "last": {"winner": "W", "line": ["i4", "j5", "k6", "l7", "m8"], "moves": 14, "draw": False},
    }
    assert state["levels"] == {} and state["live"]["finished"] is True
    record = client.get(f"/tables/{t.id}/deals/1").text
    assert (
        record.count('class="stone ') == 14 and 'data-move="14"' in record and "took 38.3 s of 30 s" in record
    )
    sgf = client.get(f"/api/tables/{t.id}/deals/1/sgf")
    assert sgf.status_code == 200 and sgf.headers["content-type"].startswith("application/x-go-sgf")
    assert "GM[4]" in sgf.text and "RE[W+]" in sgf.text
    back = read_sgf(sgf.text)
    assert [(m.colour, str(m.point)) for m in back.moves] == [(c, p) for c, p, _ in game["moves"]]


def test_bad_gomoku_posts_are_refused_and_kept(client: TestClient) -> None:
    t = Table(client, "G1", plays="gomoku")
    shengji = Table(client, "S1")
    bad = {"game": "gomoku", "moves": [["B", "h8", 1], ["W", "h8", 1]], "finished": True}
    r = client.post(f"/api/tables/{t.id}/gomoku", json=bad, headers=t.headers("bad"))
    assert r.status_code == 422
    assert (
        r.json()["detail"]
        == "deal log refused: the rules engine refuses the log: move 2: W on h8, which B took at move 1"
    )
    r = client.post(f"/api/tables/{shengji.id}/gomoku", json=simulate_game(5), headers=shengji.headers("g"))
    assert r.status_code == 422 and "plays shengji, the log is of gomoku" in r.json()["detail"]
    r = client.post(
        f"/api/tables/{t.id}/gomoku", json={"game": "gomoku", "moves": []}, headers=t.headers("u")
    )
    assert r.status_code == 422 and "only finished" in r.json()["detail"]
    assert t.state()["gomoku"]["games"] == 0
    assert client.get(f"/api/tables/{shengji.id}/deals/1/sgf").status_code == 404
    r = client.post(
        "/api/tables", json={"name": "G2", "plays": "gomoku", "levels": {"NS": "3"}}, headers=ADMIN_HEADERS
    )
    assert r.status_code == 422


def test_a_gomoku_game_enters_its_event_match(client: TestClient) -> None:
    """A gomoku challenge run as an event: the game's winner (black sits N-S, the home side) is the
    match's winner, a level ahead; the match closes with the game."""
    t = Table(client, "G1", plays="gomoku")
    event = {
        "format": "swiss", "scoring": "zhku", "seed": 1,
        "entries": [{"id": "A", "name": "李"}, {"id": "B", "name": "王"}],
        "rounds": [{"round": 1, "matches": [{"table": 1, "home": "A", "away": "B"}]}],
    }  # fmt: skip
    r = client.post("/api/tourneys", json={"event": event, "tables": [t.id]}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    eid = r.json()["id"]
    game = simulate_game(5)  # white (E-W, the away side) wins
    assert client.post(f"/api/tables/{t.id}/gomoku", json=game, headers=t.headers("g")).status_code == 201
    rounds = client.get(f"/api/tourneys/{eid}/rounds/1").json()
    (match,) = rounds["matches"]
    assert match["result"] == {"home_level": "2", "away_level": "3"}
    assert t.state()["game"]["status"] == "closed"


@pytest.fixture(scope="module")
def film(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from models.synth.gomoku_film import render_game

    out = tmp_path_factory.mktemp("gomoku") / "film"
    render_game(5, out, width=960, height=720)
    return out


def test_a_filmed_game_reaches_the_scoreboard_once_through_an_outage(
    client: TestClient, film: Path, tmp_path: Path
) -> None:
    from calibration.table import TableGeometry
    from edge_app.client import ScoreboardClient
    from edge_app.gomoku import read_presses, run_gomoku_service
    from edge_app.outbox import DealKeys, token_tag
    from tests.scoreboard.test_client import Flaky
    from vision.capture import VideoFileSource

    truth = json.loads((film / "truth.json").read_text())
    t = Table(client, "Gomoku 1", plays="gomoku")
    geometry = TableGeometry.load(film / "table.json")
    presses = read_presses(truth["presses"])
    keys = DealKeys.of_game(token_tag(t.token), "gomoku", "film:gomoku")
    for _ in range(2):  # the run, then a restart over the same film
        flaky = Flaky(client._transport)
        http = httpx.Client(transport=flaky, base_url="http://testserver")
        sb = ScoreboardClient("http://testserver", t.token, http=http, outbox=tmp_path / "outbox.sqlite")

        def outage(frames: Any, flaky: Flaky = flaky) -> Any:
            for f in frames:
                flaky.down = 100 <= f.index < 300
                yield f
            flaky.down = False

        result = run_gomoku_service(
            outage(VideoFileSource(film / "video.mp4")),
            geometry,
            presses=lambda: presses,
            client=sb,
            keys=keys,
        )
        assert result.all_sent and sb.refused == [] and not sb.queue
        sb.close()
    stored = client.get("/api/events", params={"table": t.id, "limit": 1000}).json()["events"]
    kinds = [e["kind"] for e in stored]
    assert kinds.count("game_start") == 1 and kinds.count("stone") == len(truth["moves"])
    state = t.state()
    assert state["gomoku"]["games"] == 1
    assert state["gomoku"]["last"]["winner"] == score_log(truth)["winner"]
    ref = referee_headers(client)
    alerts = client.get(f"/api/alerts?table={t.id}", headers=ref).json()["alerts"]
    # a quiet film: no look; the one move over its time (the truth's) is the referee's to rule on
    want = [("overtime", v["move"]) for v in score_log(truth)["violations"]]
    assert [(a["kind"], a["trick"]) for a in alerts] == want and want
    assert "engine: overtime by black at move 13 of game 1" in alerts[0]["reasoning"]
