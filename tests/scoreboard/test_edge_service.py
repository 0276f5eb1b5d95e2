"""The table service (edge_app.service) against the real scoreboard app: a whole filmed deal read
perfectly goes out as live events and one finished deal (posted when the deal ends, before the film
does), through a network outage, exactly once; and through a run that dies mid-deal and a restart
that reads the film again (the durable outbox and the deal's keys)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from edge_app.client import ScoreboardClient
from edge_app.config import TableConfig
from edge_app.deal import DealInfo
from edge_app.outbox import DealKeys, token_tag
from edge_app.service import run_service
from engine.score import score_log
from engine.sim import simulate_deal
from models.synth.deal import plan_deal
from models.synth.layout import Table as FilmTable
from tests.edge_app.test_edge_tracking import card_at, mm_geometry
from tests.scoreboard.test_client import Flaky
from tests.synth.conftest import needs_aisleriot
from vision.capture import Frame
from vision.instances import CardInstance


def filmed(log: dict[str, Any], seed: int) -> tuple[list[Frame], Any, FilmTable]:
    """One frame per reading of a planned film (2 readings a second), each keyframe a picture of its
    own, and a perfect reader that knows which keyframe a picture shows."""
    table = FilmTable(900.0, 900.0)
    film = plan_deal(log, np.random.default_rng(seed), "guyenne-classic", table)
    frames: list[Frame] = []
    for k, kf in enumerate(film.keyframes):
        image = np.zeros((8, 8, 3), np.uint8)
        image[..., 0], image[..., 1], image[..., 2] = k % 256, k // 256, 255 * (k % 2)
        for _ in range(max(1, round(kf.hold * 2))):
            frames.append(Frame(image, len(frames), len(frames) / 2, "film"))

    def read(img: np.ndarray) -> list[CardInstance]:
        kf = film.keyframes[int(img[0, 0, 0]) + 256 * int(img[0, 0, 1])]
        return [card_at(p.card, p.x, p.y) for p in kf.placements if p.face_up]

    return frames, read, table


@needs_aisleriot
def test_filmed_deal_reaches_the_scoreboard_once_through_an_outage(
    client, make_table, tmp_path: Path
) -> None:
    log = simulate_deal("national-2deck", 3, inject_revoke=True)
    truth = {k: v for k, v in log.items() if k not in ("hands", "injected")}
    want = score_log(truth)
    assert want["violations"], "the injected revoke must be proven in the truth"
    frames, read, table = filmed(log, 3)
    t = make_table()
    flaky = Flaky(client._transport)
    sb = ScoreboardClient(
        "http://testserver", t.token, http=httpx.Client(transport=flaky, base_url="http://testserver")
    )

    def outage(frames: list[Frame]) -> Any:
        for f in frames:  # the network is down for the middle third of the deal
            flaky.down = len(frames) // 3 <= f.index < 2 * len(frames) // 3
            yield f
        flaky.down = False

    out = tmp_path / "log.json"
    result = run_service(
        outage(frames),
        read,
        mm_geometry(table),
        DealInfo(truth["rules"], truth["level"], truth["trump"], truth["dealer"]),
        TableConfig(read="frame", every=1, log_out=out),
        client=sb,
    )
    assert result.all_sent and sb.refused == [] and not sb.queue
    # the deal went out when the bottom was seen, while the film still showed it
    assert result.posted_at is not None and result.posted_at < len(frames) - 1 and result.deal_posted
    assert json.loads(out.read_text()) == result.deal.log.to_json()
    assert [t["plays"] for t in result.deal.log.to_json()["tricks"]] == [
        [[s, sorted(c)] for s, c in tr["plays"]] for tr in truth["tricks"]
    ]
    stored = client.get("/api/events", params={"table": t.id, "limit": 1000}).json()["events"]
    kinds = [e["kind"] for e in stored]
    assert kinds.count("play") == sum(len(tr["plays"]) for tr in truth["tricks"])
    assert kinds.count("trick") == len(truth["tricks"])
    # the feed shows an alert again when it changes (the deal post links it to its deal): one per id
    alerts = {
        e["data"]["id"]: (e["data"]["kind"], e["data"]["seat"], e["data"]["trick"])
        for e in stored
        if e["kind"] == "alert"
    }
    alerts = list(alerts.values())
    assert alerts == [(v["kind"], v["seat"], v["trick"]) for v in want["violations"]]
    assert t.state()["deals"] == 1
    assert len(result.alerts) == len(want["violations"])


class Crash(Exception):
    """The process dying mid-deal (what a SIGKILL leaves: only what was committed)."""


@needs_aisleriot
def test_a_run_that_dies_mid_deal_and_reads_the_film_again_stores_everything_once(
    client, make_table, tmp_path: Path
) -> None:
    """With the durable outbox and the deal's keys, a run that dies while the scoreboard is down and
    a second run over the same film (a restart) leave the scoreboard as one uninterrupted run does:
    every play and trick once, the deal once, nothing refused, nothing pending."""
    log = simulate_deal("national-2deck", 3, inject_revoke=True)
    truth = {k: v for k, v in log.items() if k not in ("hands", "injected")}
    frames, read, table = filmed(log, 3)
    info = DealInfo(truth["rules"], truth["level"], truth["trump"], truth["dealer"])
    t = make_table()
    box = tmp_path / "outbox.sqlite"
    keys = DealKeys.of(token_tag(t.token), truth, "film:seed-3")

    def connect() -> tuple[ScoreboardClient, Flaky]:
        flaky = Flaky(client._transport)
        http = httpx.Client(transport=flaky, base_url="http://testserver")
        return ScoreboardClient("http://testserver", t.token, http=http, outbox=box), flaky

    sb, flaky = connect()

    def dies(frames: list[Frame]) -> Any:
        for f in frames:  # the scoreboard goes down at a third of the film; the run dies at 2/3
            flaky.down = f.index >= len(frames) // 3
            if f.index == 2 * len(frames) // 3:
                raise Crash
            yield f

    with pytest.raises(Crash):
        run_service(
            dies(frames),
            read,
            mm_geometry(table),
            info,
            TableConfig(read="frame", every=1),
            client=sb,
            keys=keys,
        )
    assert sb.outbox is not None and len(sb.outbox) > 0  # posts left pending by the dead run
    sb.close()
    again, _ = connect()
    assert again.flush() is True  # what the dead run left (`tractorcam run` does this first)
    result = run_service(
        frames, read, mm_geometry(table), info, TableConfig(read="frame", every=1), client=again, keys=keys
    )
    assert result.all_sent and result.deal_posted and again.refused == [] and not again.queue
    stored = client.get("/api/events", params={"table": t.id, "limit": 1000}).json()["events"]
    kinds = [e["kind"] for e in stored]
    assert kinds.count("deal_start") == 1
    assert kinds.count("play") == sum(len(tr["plays"]) for tr in truth["tricks"])
    assert kinds.count("trick") == len(truth["tricks"])
    plays = [(e["data"]["trick"], e["data"]["seat"]) for e in stored if e["kind"] == "play"]
    assert len(set(plays)) == len(plays)
    assert t.state()["deals"] == 1
    assert again.outbox is not None and set(again.outbox.counts()) == {"sent"}
    again.close()


@pytest.mark.slow
@needs_aisleriot
def test_a_filmed_match_reaches_the_scoreboard_deal_after_deal(client, make_table) -> None:
    """Two deals of one match filmed in a row, each trump declared (亮主), read perfectly: the table
    service posts both, the second at the level and by the dealer the first one's outcome names,
    and the scoreboard takes them without a continuity doubt: its levels are the match's."""
    from engine.match import MatchState
    from models.synth.deal import declaration, match_logs
    from tests.scoreboard.conftest import ADMIN_HEADERS

    logs = match_logs("national-2deck", 4, 2)
    truths = [{k: v for k, v in log.items() if k not in ("hands", "injected")} for log in logs]
    table = FilmTable(900.0, 900.0)
    rng = np.random.default_rng(4)
    keyframes = [
        kf
        for log in logs
        for kf in plan_deal(log, rng, "guyenne-classic", table, declaration(log, rng)).keyframes
    ]
    frames: list[Frame] = []
    for k, kf in enumerate(keyframes):
        image = np.zeros((8, 8, 3), np.uint8)
        image[..., 0], image[..., 1], image[..., 2] = k % 256, k // 256, 255 * (k % 2)
        for _ in range(max(1, round(kf.hold * 2))):
            frames.append(Frame(image, len(frames), len(frames) / 2, "film"))

    def read(img: np.ndarray) -> list[CardInstance]:
        kf = keyframes[int(img[0, 0, 0]) + 256 * int(img[0, 0, 1])]
        return [card_at(p.card, p.x, p.y) for p in kf.placements if p.face_up]

    t = make_table()
    first = truths[0]
    side = "NS" if first["dealer"] in "SN" else "EW"
    r = client.patch(
        f"/api/tables/{t.id}",
        json={"levels": {side: first["level"]}, "dealer": first["dealer"]},
        headers=ADMIN_HEADERS,
    )
    assert r.status_code == 200, r.text
    sb = ScoreboardClient("http://testserver", t.token, http=client)
    info = DealInfo(first["rules"], first["level"], None, first["dealer"])  # trumps are read
    result = run_service(
        frames, read, mm_geometry(table), info, TableConfig(read="frame", every=1), client=sb
    )
    assert result.all_sent and sb.refused == []
    heads = [{k: d.log.to_json()[k] for k in ("level", "trump", "dealer")} for d in result.deals]
    assert heads == [{k: x[k] for k in ("level", "trump", "dealer")} for x in truths]
    state = t.state()
    assert state["deals"] == 2
    match = MatchState.new("national-2deck", {side: first["level"]}, first["dealer"])
    for x in truths:
        match = match.after_deal(x, score_log(x))
    assert state["levels"] == match.levels and state["dealer"] == match.dealer
    ref = client.get("/api/alerts", headers=ADMIN_HEADERS).json()["alerts"]
    assert [a["kind"] for a in ref if a["kind"] in ("mismatch", "refused", "look")] == []


def test_a_filmed_bridge_board_reaches_the_scoreboard_once_with_its_revoke_and_pictures(
    client, tmp_path: Path
) -> None:
    """A bridge board read perfectly, through an outage and then read again from the same film (a
    restart): its start and 52 plays once, the revoke alerted once with the pictures it rests on
    (the rules' reasoning joined to it), the board stored once with the rules' score."""
    from bridge.play import score_log as bridge_score
    from edge_app.bridge import BoardInfo, run_bridge_service
    from tests.edge_app.test_edge_bridge import TABLE, _frames, _revoking, film
    from tests.scoreboard.conftest import Table, referee_headers

    log = _revoking(by_dummy=False)
    truth = {k: v for k, v in log.items() if k not in ("hands", "injected")}
    want = bridge_score(truth)
    t = Table(client, "Bridge 1", plays="bridge")
    box = tmp_path / "outbox.sqlite"
    info = BoardInfo(log["board"], log["contract"], log["declarer"])
    keys = DealKeys.of_board(token_tag(t.token), info.header(), "film:bridge")

    def connect() -> tuple[ScoreboardClient, Flaky]:
        flaky = Flaky(client._transport)
        http = httpx.Client(transport=flaky, base_url="http://testserver")
        return ScoreboardClient("http://testserver", t.token, http=http, outbox=box), flaky

    def run(sb: ScoreboardClient, flaky: Flaky) -> Any:
        frames, read = _frames(film(log))

        def outage(frames: list[Frame]) -> Any:
            for f in frames:
                flaky.down = len(frames) // 3 <= f.index < 2 * len(frames) // 3
                yield f
            flaky.down = False

        return run_bridge_service(
            outage(frames), read, mm_geometry(TABLE), info, TableConfig(read="frame", every=1),
            client=sb, keys=keys,
        )  # fmt: skip

    for _ in range(2):  # the run, then a restart over the same film
        sb, flaky = connect()
        result = run(sb, flaky)
        assert result.all_sent and result.board_posted and sb.refused == [] and not sb.queue
        sb.close()
    stored = client.get("/api/events", params={"table": t.id, "limit": 1000}).json()["events"]
    kinds = [e["kind"] for e in stored]
    assert kinds.count("board_start") == 1 and kinds.count("play") == 52
    assert t.state()["deals"] == 1
    deal = client.get(f"/api/tables/{t.id}/deals/1").json()["versions"][0]
    assert deal["log"]["tricks"] == truth["tricks"]
    assert deal["result"]["score"] == want["score"]
    ref = referee_headers(client)
    alerts = client.get(f"/api/alerts?table={t.id}", headers=ref).json()["alerts"]
    injected = log["injected"]
    assert [(a["kind"], a["seat"], a["trick"], a["source"]) for a in alerts] == [
        ("revoke", injected["seat"], injected["trick"], "edge")
    ]
    assert "engine: revoke" in alerts[0]["reasoning"]
    detail = client.get(f"/api/alerts/{alerts[0]['id']}", headers=ref).json()
    assert len(detail["images"]) >= 2  # the offence and its proof (and the lead, when another seat's)
