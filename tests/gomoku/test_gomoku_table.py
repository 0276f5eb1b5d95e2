"""Gomoku at the table: a filmed game read by the board reader and the move tracker (every move,
its time within half a second, the winner, no look on a quiet film), the grid found where the
renderer laid it, the tracker's looks on scripted boards, and ``tractorcam run --game gomoku``
with its bad inputs. The truth is the simulator's log and the renderer's grid, never the code
under test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from calibration.table import TableGeometry
from edge_app.gomoku import read_presses, run_gomoku_pipeline
from gomoku.board import SIZE, parse_point
from gomoku.rules import score_log
from vision.capture import VideoFileSource
from vision.gomoku import Reading, find_grid, square_view
from vision.gomoku_track import MoveTracker

SEED = 5  # a short game (14 moves, white wins, one overtime)


@pytest.fixture(scope="module")
def film(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from models.synth.gomoku_film import render_game

    out = tmp_path_factory.mktemp("gomoku") / "film"
    render_game(SEED, out, width=960, height=720)
    return out


def test_the_grid_is_found_where_the_board_lies(film: Path) -> None:
    truth = json.loads((film / "truth.json").read_text())
    geometry = TableGeometry.load(film / "table.json")
    frames = iter(VideoFileSource(film / "video.mp4"))
    grid = find_grid(square_view(next(frames).image, geometry))
    k = 1.6  # the square view's px per mm
    a1, pitch = truth["grid"]["a1"], truth["grid"]["pitch"]
    # within a twelfth of a pitch (the lens's bend is left in the view); the pitch within 1 %
    assert abs(grid.x0 - a1[0] * k) < pitch * k / 12 and abs(grid.y0 - a1[1] * k) < pitch * k / 12
    assert abs(grid.step_x / (pitch * k) - 1) < 0.01 and abs(grid.step_y / (pitch * k) - 1) < 0.01


def test_a_filmed_game_is_read_move_by_move_and_timed(film: Path) -> None:
    truth = json.loads((film / "truth.json").read_text())
    geometry = TableGeometry.load(film / "table.json")
    presses = read_presses(truth["presses"])
    result = run_gomoku_pipeline(VideoFileSource(film / "video.mp4"), geometry, presses=lambda: presses)
    got = result.log["moves"]
    assert [m[:2] for m in got] == [m[:2] for m in truth["moves"]]
    assert max(abs(g[2] - w[2]) for g, w in zip(got, truth["moves"], strict=True)) <= 0.5
    want = score_log(truth)
    assert result.result is not None
    assert (result.result["winner"], result.result["line"]) == (want["winner"], want["line"])
    assert [(v["colour"], v["move"]) for v in result.result["violations"]] == [
        (v["colour"], v["move"]) for v in want["violations"]
    ]
    assert result.looks == [] and result.log["finished"] is True
    assert result.busy > 0  # the hands were there, and were waited out


# --- the tracker on scripted boards ---------------------------------------------------------------


def board(**stones: str) -> list[str]:
    out = ["."] * (SIZE * SIZE)
    for name, colour in stones.items():
        p = parse_point(name)
        out[p.col * SIZE + p.row] = colour
    return out


def feed(readings: list[tuple[list[str], tuple[int, ...]]], step: float = 0.2) -> MoveTracker:
    t = MoveTracker(confirm=2)
    for i, (points, covered) in enumerate(readings):
        t.update(Reading(points, covered), i * step, i)
    return t


HAND = (0, 1, 2)  # cells near a1: a hand reaching in from the edge


def test_a_stone_is_a_move_timed_when_first_seen_clear() -> None:
    t = feed(
        [(board(), ()), (board(), HAND), (board(h8="B"), HAND), (board(h8="B"), ()), (board(h8="B"), ())]
    )
    assert [(m.colour, m.point, m.at) for m in t.moves] == [("B", "h8", 0.4)]
    assert t.looks == []


def test_looks_for_two_stones_the_wrong_colour_a_stone_taken_or_moved() -> None:
    two = feed([(board(), ()), (board(h8="B", h9="W"), ()), (board(h8="B", h9="W"), ())])
    assert [(x.kind, x.points) for x in two.looks] == [("two_stones", ("h8", "h9"))] and two.moves == []
    wrong = feed([(board(), ()), (board(h8="W"), ()), (board(h8="W"), ())])
    assert [x.kind for x in wrong.looks] == ["wrong_colour"] and "it is B's move" in wrong.looks[0].reason
    moved = feed([(board(h8="B"), ())] * 2 + [(board(h9="B"), ())] * 3)
    assert [m.point for m in moved.moves] == ["h8"] and [x.kind for x in moved.looks] == ["moved"]
    assert "the B stone on h8 was moved to h9" in moved.looks[0].reason
    taken = feed([(board(h8="B"), ())] * 2 + [(board(), ())] * 3)
    assert [x.kind for x in taken.looks] == ["taken"]
    # a look is raised once while its board stays, and the game goes on once the board is put right
    again = feed([(board(), ())] + [(board(h8="B", h9="W"), ())] * 4 + [(board(h8="B"), ())] * 2)
    assert len(again.looks) == 1 and [m.point for m in again.moves] == ["h8"]


def test_something_lying_between_the_points_is_a_look_once_then_read_round() -> None:
    between = (50,)  # one cell middle covered, nothing else moving
    readings = [(board(), ())] + [(board(), between)] * 20 + [(board(h8="B"), between)] * 3
    t = feed(readings, step=0.2)
    assert [x.kind for x in t.looks] == ["off_grid"]
    assert [m.point for m in t.moves] == ["h8"]  # the rest of the board is read on


def test_a_hand_that_stays_is_never_a_look() -> None:
    t = feed([(board(), ())] + [(board(), HAND + (40, 41, 42))] * 40 + [(board(), ())] * 2)
    assert t.looks == [] and t.moves == []


# --- tractorcam run --game gomoku -----------------------------------------------------------------

runner = CliRunner()


def test_run_follows_a_filmed_game(film: Path, tmp_path: Path) -> None:
    from tractorcam_cli.main import app

    truth = json.loads((film / "truth.json").read_text())
    presses = tmp_path / "presses.json"
    presses.write_text(json.dumps(truth["presses"]))
    out = tmp_path / "game.json"
    r = runner.invoke(
        app,
        ["run", "--game", "gomoku", "--source", str(film / "video.mp4"), "--table", str(film / "table.json")]
        + ["--long-thinks", str(presses), "--log-out", str(out)],
    )
    assert r.exit_code == 0, r.output
    want = score_log(truth)
    assert f"gomoku: {len(truth['moves'])} moves, {want['winner']} won ({' '.join(want['line'])})" in r.stdout
    log = json.loads(out.read_text())
    assert [m[:2] for m in log["moves"]] == [m[:2] for m in truth["moves"]] and log["finished"] is True


BAD: dict[str, tuple[list[str], str]] = {
    "a scoreboard without a token": (
        ["--scoreboard", "http://127.0.0.1:9"],
        "--scoreboard and --token go together",
    ),
    "a bridge board": (["--board", "3"], "a bridge table's"),
    "presses not a list": (["--long-thinks", "{tmp}/p.json"], "--long-thinks"),
    "no such table": (["--table", "{tmp}/none.json"], "cannot read --table"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_each_bad_input_exits_2_with_one_line(case: str, film: Path, tmp_path: Path) -> None:
    from tractorcam_cli.main import app

    (tmp_path / "p.json").write_text('{"t": 3}')
    args, said = BAD[case]
    base = [
        "run",
        "--game",
        "gomoku",
        "--source",
        str(film / "video.mp4"),
        "--table",
        str(film / "table.json"),
    ]
    r = runner.invoke(app, base + [a.format(tmp=tmp_path) for a in args])
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.splitlines()
    assert line.startswith("error: ") and said in line
    assert r.stdout == ""


def test_long_thinks_only_at_a_gomoku_table(film: Path, tmp_path: Path) -> None:
    from tractorcam_cli.main import app

    (tmp_path / "p.json").write_text("[]")
    r = runner.invoke(
        app, ["run", "--source", str(film / "video.mp4"), "--long-thinks", str(tmp_path / "p.json")]
    )
    assert r.exit_code == 2 and "--long-thinks is a gomoku table's" in r.stderr


def test_presses_are_checked() -> None:
    assert read_presses([{"t": 3.5, "colour": "W"}]) == [(3.5, "W")]
    for bad in (
        {"t": 1},
        [{"t": 1, "colour": "R"}],
        [{"t": -1, "colour": "B"}],
        [{"t": True, "colour": "B"}],
    ):
        with pytest.raises(ValueError):
            read_presses(bad)


def test_synth_game_refuses_what_it_cannot_film(tmp_path: Path) -> None:
    from tractorcam_cli.main import app

    out = str(tmp_path / "x")
    for args, said in (
        (["--look", "marble"], "--look 'marble' is not one of kaya, dark-wood"),
        (["--game", "bridge"], "bridge is a card game: film it with `tractorcam synth deal --game bridge`"),
        (["--game", "go"], "game 'go' is not one tractorcam knows"),
    ):
        r = runner.invoke(app, ["synth", "game", "--seed", "1", "--out", out, *args])
        assert r.exit_code == 2 and said in r.stderr, r.output
    r = runner.invoke(app, ["synth", "deal", "--game", "gomoku", "--seed", "1", "--out", out])
    assert r.exit_code == 2 and "film it with `tractorcam synth game --game gomoku`" in r.stderr
    assert not (tmp_path / "x").exists()


def test_quick_moves_read_as_several_stones_are_taken_in_turn() -> None:
    """The next stone laid before the last one's board was read twice: both are moves, timed from
    when each was seen, when they appeared one after the other in turn (here side by side)."""
    far = (180, 181)  # a hand in a far corner
    t = feed(
        [
            (board(), ()),
            (board(h8="B"), far),
            (board(h8="B"), far),
            (board(h8="B", h9="W"), far),
            (board(h8="B", h9="W"), ()),
            (board(h8="B", h9="W"), ()),
        ]
    )
    assert [(m.colour, m.point, round(m.at, 3)) for m in t.moves] == [("B", "h8", 0.2), ("W", "h9", 0.6)]
    assert t.looks == []
    # the same two stones in the wrong turn (white's first) are a look
    wrong = feed(
        [(board(), ()), (board(h9="W"), far), (board(h8="B", h9="W"), far)]
        + [(board(h8="B", h9="W"), ())] * 2
    )
    assert [x.kind for x in wrong.looks] == ["two_stones"] and wrong.moves == []
