"""Filming a simulated deal: every card of the truth log shows up where and when it should."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import engine.sim as sim
from calibration.table import TableGeometry  # noqa: E402
from models.synth.deal import _winners, make_renderer, plan_deal, render_deal  # noqa: E402
from models.synth.layout import Table  # noqa: E402


@pytest.fixture(scope="module")
def film():
    log = sim.simulate_deal("national-1deck", 4)
    rng = np.random.default_rng(4)
    table = Table(900, 900)
    return log, plan_deal(log, rng, "proc0", table), make_renderer(rng, table, 800, 600)


def test_complete_tricks_visible(film) -> None:
    log, f, renderer = film
    last_play = {}
    for k, kf in enumerate(f.keyframes):
        if kf.event.get("kind") == "play" and not kf.arms:
            last_play[kf.event["trick"]] = k
    assert len(last_play) == len(log["tricks"])
    for t in (0, len(log["tricks"]) // 2, len(log["tricks"]) - 1):
        kf = f.keyframes[last_play[t]]
        sc = renderer.render(kf.placements, kf.arms, np.random.default_rng(0), jpeg=False)
        for seat, cards in (p[:2] for p in log["tricks"][t]["plays"]):
            seen = Counter(
                c.card
                for c in sc.cards
                if c.role == "play"
                and c.seat == seat
                and c.face_up
                and any(ix.visible >= 0.5 for ix in c.corners)
            )
            assert seen == Counter(cards), (t, seat)


def test_cleared_tricks_go_to_piles_and_centre(film) -> None:
    log, f, _ = film
    winners = _winners(log)
    dealer_side = {log["dealer"], "SENW"[("SENW".index(log["dealer"]) + 2) % 4]}
    expected = Counter()
    for t, trick in enumerate(log["tricks"]):
        if winners[t] not in dealer_side:
            expected.update(c for p in trick["plays"] for c in p[1] if c[:-1] in ("5", "10", "K"))
    end = f.keyframes[-1]
    assert Counter(p.card for p in end.placements if p.role == "captured" and p.face_up) == expected
    assert Counter(p.card for p in end.placements if p.role == "bottom" and p.face_up) == Counter(
        log["bottom"]
    )
    n_played = sum(len(p[1]) for tr in log["tricks"] for p in tr["plays"])
    assert sum(1 for p in end.placements if p.role in ("pile", "captured")) == n_played


def test_render_deal_files(tmp_path: Path) -> None:
    import cv2

    from engine.score import score_log

    res = render_deal(2, tmp_path, rules="national-1deck", fps=2, width=320, height=240, max_tricks=2)
    truth = json.loads(res.truth.read_text())
    assert len(truth["tricks"]) == 2 and "hands" in truth
    score_log({k: v for k, v in truth.items() if k not in ("hands", "injected")})
    TableGeometry.load(res.table)
    cap = cv2.VideoCapture(str(res.video))
    assert int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) == res.frames > 0
    ok, frame = cap.read()
    assert ok and frame.shape == (240, 320, 3)
    # the timeline covers every frame once and shows each play of the log, in order
    tl = json.loads(res.timeline.read_text())
    assert tl["frames"] == res.frames
    pos = 0
    for entry in tl["keyframes"]:
        assert entry["frame"] == pos
        pos += entry["frames"]
    assert pos == res.frames
    plays = [
        (e["event"]["trick"], e["event"]["play"]) for e in tl["keyframes"] if e["event"].get("kind") == "play"
    ]
    expect = [
        (t, j) for t, tr in enumerate(truth["tricks"]) for j in range(len(tr["plays"])) for _ in range(2)
    ]
    assert plays == expect
    last = next(e for e in reversed(tl["keyframes"]) if e["event"].get("kind") == "play")
    shown = Counter(c["card"] for c in last["cards"] if c["role"] == "play" and c["face_up"])
    assert shown == Counter(c for p in truth["tricks"][-1]["plays"] for c in p[1])


def test_cli_bad_rules(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tractorcam_cli.main import app

    r = CliRunner().invoke(app, ["synth", "deal", "--seed", "1", "--out", str(tmp_path), "--rules", "nope"])
    assert r.exit_code == 2
    assert not (tmp_path / "video.mp4").exists()


def test_table_json_maps_pixels_to_seats(film) -> None:
    """table.json of the film's camera maps every played card's image position back to its table
    position (through the lens model) and into the zone of the seat that played it."""
    from models.synth.deal import table_geometry

    log, f, renderer = film
    geom = table_geometry(renderer, 63.0)
    kf = next(k for k in f.keyframes if k.event.get("kind") == "play" and k.event["play"] == 3 and not k.arms)
    sc = renderer.render(kf.placements, [], np.random.default_rng(0), jpeg=False)
    by_z = {lab.z: lab for lab in sc.cards}
    plays = 0
    for z, p in enumerate(kf.placements):
        lab = by_z.get(z)
        if lab is None:
            continue
        centre_px = np.array(lab.quad).mean(axis=0)
        mm = geom.pixel_to_table(centre_px[None])[0]
        assert np.hypot(mm[0] - p.x, mm[1] - p.y) < 3.0
        if p.role == "play":
            plays += 1
            assert geom.seat_of((p.x, p.y)) == p.seat
    assert plays == sum(len(pl[1]) for pl in log["tricks"][kf.event["trick"]]["plays"])


def test_a_film_of_a_game_tractorcam_does_not_know_is_refused(tmp_path) -> None:
    """``synth deal --game G`` films G's game (games.md); an unknown game is exit 2, one line, and no
    folder is written."""
    from typer.testing import CliRunner

    from tractorcam_cli.main import app

    r = CliRunner().invoke(
        app, ["synth", "deal", "--seed", "1", "--out", str(tmp_path / "f"), "--game", "go"]
    )
    assert r.exit_code == 2
    assert r.output.strip() == "error: game 'go' is not one tractorcam knows (known: bridge, gomoku, shengji)"
    assert not (tmp_path / "f").exists()
