"""Filming a bridge board: every card of the truth shows where and when a duplicate table shows it
(dummy's hand inside the line in front of dummy, each card played in front of its player, dummy's
beyond the line, each trick turned face down), and the film's files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from bridge import score_log
from bridge.sim import simulate_board
from edge_app.bridge import DUMMY_LINE
from models.synth.bridge_film import COLUMNS_WITHIN, plan_board, render_board
from models.synth.layout import Table
from tractorcam_cli.main import app

TABLE = Table(900.0, 900.0)


def _depth(seat: str, x: float, y: float) -> float:
    return {"S": TABLE.height - y, "N": y, "E": TABLE.width - x, "W": x}[seat]


def _nearest(x: float, y: float) -> str:
    return min("NESW", key=lambda s: _depth(s, x, y))


@pytest.mark.parametrize("seed", [3, 8])
def test_each_card_lies_where_a_duplicate_table_lays_it(seed: int) -> None:
    log = simulate_board(seed)
    dummy = {"N": "S", "S": "N", "E": "W", "W": "E"}[log["declarer"]]
    film = plan_board(log, np.random.default_rng(seed), "proc0", TABLE)
    line = DUMMY_LINE * TABLE.height
    laid_seen = False
    cleared = 0
    for kf in film.keyframes:
        up = [p for p in kf.placements if p.face_up]
        plays = [p for p in up if p.role == "play"]
        laid = [p for p in up if p.role == "dummy"]
        for p in plays:
            assert _nearest(p.x, p.y) == p.seat
            if p.seat == dummy:
                assert _depth(dummy, p.x, p.y) > line + 44  # a whole card beyond the line
        for p in laid:
            assert _nearest(p.x, p.y) == dummy and _depth(dummy, p.x, p.y) < line - 44
        assert all(p.role in ("play", "dummy") for p in up)  # held hands and turned tricks face down
        if kf.event.get("kind") == "cleared":
            cleared += 1
            assert plays == []
            turned = [p for p in kf.placements if p.role == "turned"]
            assert len(turned) == 4 * cleared
        if kf.event.get("kind") == "play" and not kf.arms:
            t, j = kf.event["trick"], kf.event["play"]
            want = [card for _, card in log["tricks"][t]["plays"][: j + 1]]
            assert sorted(p.card for p in plays) == sorted(want)
            if laid_seen or t > 0 or j > 0:
                held_by_dummy = {c for tr in log["tricks"][t:] for s, c in tr["plays"] if s == dummy}
                played_now = {p.card for p in plays if p.seat == dummy}
                assert {p.card for p in laid} == held_by_dummy - played_now
        laid_seen = laid_seen or bool(laid)
    assert cleared == 13


def test_the_films_columns_keep_within_the_line_the_table_service_reads() -> None:
    assert COLUMNS_WITHIN == DUMMY_LINE


def test_a_rendered_board_writes_its_truth_table_and_timeline(tmp_path: Path) -> None:
    out = render_board(4, tmp_path / "b", width=480, height=360, design="proc0", inject_revoke=True)
    truth = json.loads(out.truth.read_text())
    scored = score_log({k: v for k, v in truth.items() if k not in ("hands", "injected")})
    injected = truth["injected"]
    assert (injected["seat"], injected["trick"]) in {(v["seat"], v["trick"]) for v in scored["violations"]}
    timeline = json.loads(out.timeline.read_text())
    assert timeline["frames"] == out.frames == sum(k["frames"] for k in timeline["keyframes"])
    assert (tmp_path / "b" / "video.mp4").stat().st_size > 0 and out.table.exists()


@pytest.mark.parametrize(
    ("extra", "said"),
    [(["--inject-failed-throw"], "bridge has no throws to fail"), (["--deals", "2"], "one board")],
)
def test_what_a_bridge_film_cannot_hold_is_refused(tmp_path: Path, extra: list[str], said: str) -> None:
    r = CliRunner().invoke(
        app, ["synth", "deal", "--game", "bridge", "--seed", "1", "--out", str(tmp_path / "f"), *extra]
    )
    assert r.exit_code == 2 and said in r.output
