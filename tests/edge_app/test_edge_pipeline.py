"""The per-table pipeline (edge_app.pipeline) on scripted frames, and ``tractorcam run`` end to end on
a filmed deal with the shipped reader (recorded footage replayed through the live pipeline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from calibration.table import TableGeometry
from edge_app.deal import DealInfo
from edge_app.pipeline import PipelineConfigError, run_pipeline, same_picture, thumbnail
from models.synth.layout import Table
from tests.edge_app.test_edge_tracking import card_at, mm_geometry
from tests.synth.conftest import needs_aisleriot
from tractorcam_cli.main import app
from vision.capture import Frame
from vision.instances import CardInstance

runner = CliRunner()

# where each seat's cards land in a 900 × 900 mm table seen 1 px = 1 mm
SPOT = {"S": (450, 800), "N": (450, 100), "E": (820, 450), "W": (80, 450)}


# one trick laid S, E, N, W on an empty table, then cleared
ONE_TRICK: list[dict[str, list[str]]] = [
    {},
    {"S": ["AH"]},
    {"S": ["AH"], "E": ["3H"]},
    {"S": ["AH"], "E": ["3H"], "N": ["2H"]},
    {"S": ["AH"], "E": ["3H"], "N": ["2H"], "W": ["QH"]},
    {},
]


def scripted(
    pictures: list[dict[str, list[str]]], repeat: int
) -> tuple[list[Frame], dict[int, list[CardInstance]]]:
    """Frames whose picture changes with each entry of ``pictures`` (each held ``repeat`` frames), and
    the cards a perfect reader would return for each picture (keyed by the picture's grey level)."""
    frames, answers = [], {}
    for k, zones in enumerate(pictures):
        level = 10 + 20 * k
        answers[level] = [card_at(c, *SPOT[s]) for s, cards in zones.items() for c in cards]
        for _ in range(repeat):
            i = len(frames)
            frames.append(Frame(np.full((90, 90, 3), level, np.uint8), i, i / 10, "test"))
    return frames, answers


def test_pipeline_reads_each_picture_once_and_builds_the_trick() -> None:
    frames, answers = scripted(ONE_TRICK, repeat=10)
    calls: list[int] = []

    def read(image: np.ndarray) -> list[CardInstance]:
        calls.append(int(image[0, 0, 0]))
        return answers[int(image[0, 0, 0])]

    geometry = mm_geometry(Table(900.0, 900.0))
    result = run_pipeline(frames, read, geometry, DealInfo("national-2deck", "5", "H", "S"), every=5)
    assert result.stats.frames == 60 and result.stats.sampled == 12
    assert result.stats.read == 6 and calls == sorted(set(calls))  # one read per distinct picture
    assert result.deal.log.to_json()["tricks"] == [
        {"plays": [["S", ["AH"]], ["E", ["3H"]], ["N", ["2H"]], ["W", ["QH"]]]}
    ]
    assert len(result.states) == 12


def test_each_plays_picture_is_the_last_frame_that_showed_it() -> None:
    """The evidence picture of a play is of the latest frame in which the tracker's play lay there
    (made when the deal is built, not at every frame): here S's ace lay through pictures 1-4."""
    import cv2

    frames, answers = scripted(ONE_TRICK, repeat=3)
    geometry = mm_geometry(Table(900.0, 900.0))
    built = []
    result = run_pipeline(
        frames,
        lambda image: answers[int(image[0, 0, 0])],
        geometry,
        DealInfo("national-2deck", "5", "H", "S"),
        every=1,
        still_threshold=None,
        on_trick=built.append,
    )

    def level(jpeg: bytes) -> float:
        return float(cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR).mean())

    assert len(built) == 1  # the trick cleared
    for deal in (built[0], result.deal):
        assert {k for k in deal.crops if k[1] != "centre"} == {(1, s) for s in "SENW"}
        assert level(deal.crops[(1, "S")]) == pytest.approx(10 + 20 * 4, abs=2)  # picture 4's grey
        assert level(deal.crops[(1, "W")]) == pytest.approx(10 + 20 * 4, abs=2)


def test_pipeline_refuses_bad_settings() -> None:
    geometry = mm_geometry(Table(900.0, 900.0))
    info = DealInfo("national-2deck", "5", "H", "S")
    with pytest.raises(PipelineConfigError):
        run_pipeline([], lambda im: [], geometry, info, every=0)
    with pytest.raises(PipelineConfigError):
        run_pipeline([], lambda im: [], geometry, info, still_threshold=-1)


def test_pipeline_stops_before_taking_another_frame() -> None:
    frames, answers = scripted(ONE_TRICK, repeat=10)
    taken: list[int] = []

    def source() -> Any:
        for f in frames:
            taken.append(f.index)
            yield f

    geometry = mm_geometry(Table(900.0, 900.0))
    result = run_pipeline(
        source(),
        lambda image: answers[int(image[0, 0, 0])],
        geometry,
        DealInfo("national-2deck", "5", "H", "S"),
        every=5,
        stop=lambda: len(taken) >= 26,
    )
    assert result.stopped and taken == list(range(26)) and result.stats.frames == 26
    assert [p[0] for p in result.deal.log.to_json()["tricks"][0]["plays"]] == ["S", "E"]  # what was seen
    done = run_pipeline(
        frames,
        lambda image: answers[int(image[0, 0, 0])],
        geometry,
        DealInfo("national-2deck", "5", "H", "S"),
    )
    assert not done.stopped and done.stats.frames == 60


def test_same_picture_sees_a_card_land() -> None:
    rng = np.random.default_rng(0)
    table = rng.integers(90, 110, (480, 640, 3), dtype=np.uint8)
    noisy = np.clip(table.astype(int) + rng.integers(-3, 4, table.shape), 0, 255).astype(np.uint8)
    card = table.copy()
    card[200:260, 300:345] = 250  # a 45 × 60 px card on a 640 × 480 frame
    assert same_picture(thumbnail(table), thumbnail(noisy), 2.0)
    assert not same_picture(thumbnail(table), thumbnail(card), 2.0)


# ------------------------------------------------------------------ the command


def test_run_bad_input_exits_2(tmp_path: Path) -> None:
    table = tmp_path / "table.json"
    mm_geometry(Table(900.0, 900.0)).save(table)
    r = runner.invoke(app, ["run", "--source", str(tmp_path / "nope.mp4"), "--table", str(table)])
    assert r.exit_code == 2 and "source not found" in r.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"image_width": 3}')
    r = runner.invoke(app, ["run", "--source", str(tmp_path), "--table", str(bad)])
    assert r.exit_code == 2 and "cannot read --table" in r.output
    r = runner.invoke(
        app, ["run", "--source", str(tmp_path), "--table", str(table), "--scoreboard", "http://x"]
    )
    assert r.exit_code == 2 and "--token" in r.output
    empty = tmp_path / "empty"
    empty.mkdir()
    r = runner.invoke(app, ["run", "--source", str(empty), "--table", str(table)])
    assert r.exit_code == 2 and "no images" in r.output


@pytest.mark.slow
@needs_aisleriot
def test_run_on_a_filmed_deal(tmp_path: Path) -> None:
    """Two tricks filmed at 960 × 720, replayed through ``tractorcam run`` with the shipped reader:
    the log carries the given deal info, and the plays are found at the right seats in the right
    order (the seats depend on the tracker and the zones, not on naming the cards)."""
    from models.synth.deal import render_deal

    res = render_deal(
        5, tmp_path / "deal", rules="national-2deck", fps=2, width=960, height=720, max_tricks=2
    )
    out = tmp_path / "read.json"
    r = runner.invoke(
        app,
        [
            "run",
            "--source",
            str(res.video),
            "--table",
            str(res.table),
            "--log-out",
            str(out),
            "--info",
            str(res.truth),
            "--every",
            "1",
        ],
    )
    assert r.exit_code == 0, r.output
    log = json.loads(out.read_text())
    truth = json.loads(res.truth.read_text())
    assert {k: log[k] for k in ("rules", "level", "trump", "dealer")} == {
        k: truth[k] for k in ("rules", "level", "trump", "dealer")
    }
    # both tricks found, each read play at a seat that played, in turn order; the reader may miss
    # a card it cannot name (this film's trick 1 has a big joker), never invent a play
    assert len(log["tricks"]) == 2 and "2 tricks" in r.output
    for got, want in zip(log["tricks"], truth["tricks"], strict=True):
        seats = [p[0] for p in want["plays"]]
        read = [p[0] for p in got["plays"]]
        assert read == [s for s in seats if s in read]
    assert sum(len(t["plays"]) for t in log["tricks"]) >= 6
    assert TableGeometry.load(res.table).image_width == 960


@pytest.mark.slow
@needs_aisleriot
def test_demo_films_reads_and_reports(tmp_path: Path) -> None:
    """``tractorcam demo`` (one trick, to keep it short): the film is made, then reused; the table
    service reads it and a local scoreboard receives its events."""
    args = ["demo", "--dir", str(tmp_path / "demo"), "--tricks", "1"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "sample deal rendered" in r.output and "scoreboard on http://127.0.0.1:" in r.output
    assert "trick  1" in r.output and "plays read exactly:" in r.output
    sent = int(r.output.split("scoreboard: ")[1].split(" events sent")[0])
    assert sent >= 6  # deal start, four plays and the trick's result at least
    log = json.loads((tmp_path / "demo" / "read.json").read_text())
    assert len(log["tricks"]) == 1 and [p[0] for p in log["tricks"][0]["plays"]]
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "sample deal reused" in again.output
