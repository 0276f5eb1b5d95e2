"""Gomoku's rules (seed 004; games.md, "Gomoku"): games worked by hand, random legal games against
the tests' own brute force, the clock with long thinks, and bad logs refused with one line
through the rules and through ``tractorcam score`` (exit 2, no traceback)."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gomoku import GomokuLogError, score_log

LETTERS = "abcdefghijklmno"


def game(*points: str, seconds: float = 5.0, **extra: Any) -> dict[str, Any]:
    """A log of ``points`` played alternately from black."""
    moves = [["BW"[i % 2], p, seconds] for i, p in enumerate(points)]
    return {"game": "gomoku", "size": 15, "moves": moves, **extra}


def interleave(black: list[str], white: list[str]) -> list[str]:
    out = []
    for i, b in enumerate(black):
        out.append(b)
        if i < len(white):
            out.append(white[i])
    return out


# --- games worked by hand -------------------------------------------------------------------------

WINS = [
    # (black's stones in order, white's, winner, line)
    (["d4", "e5", "f6", "g7", "h8"], ["a1", "a3", "a5", "a7"], "B", ["d4", "e5", "f6", "g7", "h8"]),
    (["h8", "h9", "h10", "h12", "h11"], ["a1", "a3", "a5", "a7"], "B", ["h8", "h9", "h10", "h11", "h12"]),
    (["k2", "j3", "i4", "h5", "g6"], ["o15", "o13", "o11", "o9"], "B", ["g6", "h5", "i4", "j3", "k2"]),
    (
        ["a1", "c3", "e5", "o1", "o3"],
        ["b15", "c15", "d15", "e15", "f15"],
        "W",
        ["b15", "c15", "d15", "e15", "f15"],
    ),
]


@pytest.mark.parametrize("black, white, winner, line", WINS)
def test_five_in_a_row_wins_and_names_its_line(black, white, winner, line) -> None:
    out = score_log(game(*interleave(black, white), finished=True))
    assert (out["winner"], out["line"], out["draw"]) == (winner, line, False)
    assert out["moves"] == len(black) + len(white)
    assert out["game"] == "gomoku" and out["violations"] == []


def test_six_in_a_row_wins_with_all_six_in_its_line() -> None:
    black = ["c8", "d8", "e8", "g8", "h8", "f8"]  # the sixth stone joins 3 + 2: c8..h8
    white = ["a1", "a3", "a5", "a7", "a9"]
    out = score_log(game(*interleave(black, white)))
    assert out["winner"] == "B" and out["line"] == ["c8", "d8", "e8", "f8", "g8", "h8"]


def test_four_is_no_win_and_a_broken_five_is_none() -> None:
    black = ["c8", "d8", "e8", "f8", "h8"]  # g8 missing
    white = ["a1", "a3", "a5", "a7"]
    out = score_log(game(*interleave(black, white)))
    assert (out["winner"], out["line"], out["draw"], out["moves"]) == (None, None, False, 9)


def test_a_move_after_the_win_is_refused() -> None:
    points = interleave(["d4", "e5", "f6", "g7", "h8"], ["a1", "a3", "a5", "a7", "a9"])  # B wins at move 9
    with pytest.raises(GomokuLogError) as err:
        score_log(game(*points))
    assert str(err.value) == "move 10: W on a9 after the game was won (B made five at move 9)"


def draw_board() -> list[str]:
    """A whole board with no five: a point is black where (column + 2·row) mod 4 < 2. Along a row
    the colours go BBWW, along a column they alternate, along either diagonal they take every
    residue in four steps: every line of five holds both colours. Played black first, alternating."""
    black = [f"{LETTERS[c]}{r + 1}" for r in range(15) for c in range(15) if (c + 2 * r) % 4 < 2]
    white = [f"{LETTERS[c]}{r + 1}" for r in range(15) for c in range(15) if (c + 2 * r) % 4 >= 2]
    assert len(black) == len(white) + 1  # 113 and 112
    return interleave(black, white)


def test_a_full_board_without_five_is_a_draw() -> None:
    out = score_log(game(*draw_board(), finished=True))
    assert (out["winner"], out["draw"], out["moves"]) == (None, True, 225)


def test_an_open_board_is_no_draw() -> None:
    points = draw_board()
    out = score_log(game(*points[:100]))
    assert out["draw"] is False  # lines of five empty points are left


# --- random legal games against the tests' own brute force ----------------------------------------


def brute(points: list[str]) -> tuple[str | None, int, bool]:
    """The winner, the move it came at, and whether the position is drawn, by checking every line of
    five points on the board after each move (no code under test)."""
    cells: dict[tuple[int, int], str] = {}
    lines = [
        [(c + k * dc, r + k * dr) for k in range(5)]
        for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1))
        for c in range(15)
        for r in range(15)
        if 0 <= c + 4 * dc < 15 and 0 <= r + 4 * dr < 15
    ]
    for n, p in enumerate(points, start=1):
        cells[(LETTERS.index(p[0]), int(p[1:]) - 1)] = "BW"[(n - 1) % 2]
        if any(len({cells.get(q) for q in line}) == 1 and cells.get(line[0]) for line in lines):
            return "BW"[(n - 1) % 2], n, False
    drawn = all({"B", "W"} <= {cells.get(q) for q in line} for line in lines)
    return None, len(points), drawn


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32), st.integers(5, 225), st.floats(0.3, 1.0))
def test_random_games_agree_with_brute_force(seed: int, length: int, near: float) -> None:
    rng = random.Random(seed)
    everything = [f"{c}{r}" for c in LETTERS for r in range(1, 16)]
    # stones near earlier ones most of the time, so that fives come up
    points: list[str] = []
    while len(points) < length:
        free = [p for p in everything if p not in points]
        if points and rng.random() < near:
            last = points[-rng.randint(1, min(4, len(points)))]
            c, r = LETTERS.index(last[0]), int(last[1:])
            near_free = [p for p in free if abs(LETTERS.index(p[0]) - c) <= 2 and abs(int(p[1:]) - r) <= 2]
            free = near_free or free
        points.append(rng.choice(free))
    winner, at, drawn = brute(points)
    out = score_log(game(*points[:at]))
    assert (out["winner"], out["moves"], out["draw"]) == (winner, at, drawn)
    if winner is not None:
        line = out["line"]
        assert len(line) >= 5 and points[at - 1] in line and set(line) <= set(points[at - 1 :: -2])
        if at < len(points):
            with pytest.raises(GomokuLogError, match="after the game was won"):
                score_log(game(*points[: at + 1]))


# --- the clock (seed 004 art. 4) ------------------------------------------------------------------


def timed(*seconds: float, **extra: Any) -> dict[str, Any]:
    spots = [f"{LETTERS[i % 15]}{1 + 2 * (i // 15)}" for i in range(len(seconds))]  # never five
    return {
        "game": "gomoku",
        "moves": [["BW"[i % 2], p, s] for i, (p, s) in enumerate(zip(spots, seconds, strict=True))],
        **extra,
    }


def test_thirty_seconds_a_move_and_exactly_thirty_is_in_time() -> None:
    out = score_log(timed(30.0, 30.1, 12.0, 41.5))
    assert out["violations"] == [
        {"kind": "overtime", "colour": "W", "move": 2, "seconds": 30.1, "limit": 30},
        {"kind": "overtime", "colour": "W", "move": 4, "seconds": 41.5, "limit": 30},
    ]


def test_three_long_thinks_of_two_minutes_and_a_fourth_is_void() -> None:
    # black asks for a long think at moves 1, 3, 5 and 7; the fourth (move 7) is void: 30 s
    seconds = [119.0, 5, 121.0, 5, 60.0, 5, 60.0, 5]
    out = score_log(timed(*seconds, long_thinks={"B": [1, 3, 5, 7], "W": []}))
    assert out["violations"] == [
        {"kind": "overtime", "colour": "B", "move": 3, "seconds": 121.0, "limit": 120},
        {"kind": "overtime", "colour": "B", "move": 7, "seconds": 60.0, "limit": 30},
    ]
    out = score_log(timed(*seconds, long_thinks={"B": [7, 5, 3, 1]}))  # listed in any order
    assert [v["move"] for v in out["violations"]] == [3, 7]


def test_a_long_think_for_the_move_being_thought_about_is_taken() -> None:
    out = score_log(timed(5.0, 5.0, long_thinks={"B": [3], "W": []}))  # black thinks about move 3
    assert out["violations"] == [] and out["moves"] == 2


def test_an_untimed_move_is_never_over() -> None:
    log = {"game": "gomoku", "moves": [["B", "h8"], ["W", "h9", 31]]}
    assert [v["move"] for v in score_log(log)["violations"]] == [2]


# --- bad logs -------------------------------------------------------------------------------------

BAD = [
    (game("h8", "h8"), "move 2: W on h8, which B took at move 1"),
    (game("h8", "p1"), "move 2: 'p1' is off a 15 × 15 board"),
    (game("h8", "h16"), "move 2: 'h16' is off a 15 × 15 board"),
    (game("h8", "h0"), "move 2: 'h0' is not a point's name"),
    (game("h8", "88"), "move 2: '88' is not a point's name"),
    (game("h8", 8), "move 2: a point is a name like 'h8', not int"),
    ({"game": "gomoku", "moves": [["W", "h8", 1]]}, "move 1: W moves, but black moves first"),
    ({"game": "gomoku", "moves": [["B", "h8", 1], ["B", "h9", 1]]}, "move 2: B moves, but black moves first and the colours alternate (W's turn)"),
    ({"game": "gomoku", "moves": [["X", "h8", 1]]}, "move 1: the colour must be 'B' or 'W'"),
    ({"game": "gomoku", "moves": [["B", "h8", -1]]}, "move 1: -1 seconds is not a move's time"),
    ({"game": "gomoku", "moves": [["B", "h8", "5"]]}, "move 1: the seconds must be a number"),
    ({"game": "gomoku", "moves": [["B"]]}, "move 1: a move is [colour, point, seconds]"),
    ({"game": "gomoku", "moves": "h8"}, '"moves" must be a list'),
    ({"game": "gomoku", "size": 40}, '"size" must be a board size'),
    ({"game": "gomoku", "size": True}, '"size" must be a board size'),
    (game("h8", "h9", long_thinks={"B": [2]}), '"long_thinks": move 2 is W\'s, not B\'s'),
    (game("h8", long_thinks={"B": [0]}), '"long_thinks": B asked for a long think for move 0, not a move number'),
    (game("h8", long_thinks={"W": [3]}), '"long_thinks": move 3 is B\'s, not W\'s'),
    (game("h8", long_thinks={"B": [1, 1]}), '"long_thinks": B names a move twice'),
    (game("h8", long_thinks={"R": [1]}), '"long_thinks" must be'),
    (game("h8", finished="yes"), '"finished" must be true or false'),
    ([1, 2], "a gomoku log is a JSON object"),
]  # fmt: skip


@pytest.mark.parametrize("data, said", BAD)
def test_a_bad_log_is_refused_with_one_line_naming_it(data: Any, said: str) -> None:
    with pytest.raises(GomokuLogError) as err:
        score_log(data)
    assert said in str(err.value) and "\n" not in str(err.value)


def test_tractorcam_score_scores_a_gomoku_log_and_refuses_a_bad_one(tmp_path: Path) -> None:
    good = tmp_path / "game.json"
    points = interleave(["d4", "e5", "f6", "g7", "h8"], ["a1", "a3", "a5", "a7"])
    good.write_text(json.dumps(game(*points, long_thinks={"B": [], "W": [4]}, finished=True)))
    cli = [sys.executable, "-m", "tractorcam_cli", "score"]
    r = subprocess.run([*cli, str(good)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {
        "game": "gomoku", "winner": "B", "line": ["d4", "e5", "f6", "g7", "h8"], "moves": 9,
        "draw": False, "violations": [],
    }  # fmt: skip
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(game("h8", "h8")))
    r = subprocess.run([*cli, str(bad)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == ["error: move 2: W on h8, which B took at move 1"]


# --- SGF (GM[4]) ----------------------------------------------------------------------------------


def test_sgf_is_written_as_gomoku_programs_read_it() -> None:
    from gomoku import parse_gomoku_log
    from gomoku.sgf import read_sgf, to_sgf

    points = interleave(["d4", "e5", "f6", "g7", "h8"], ["a1", "o15", "a3", "a5"])
    log = parse_gomoku_log(game(*points, seconds=4.5, long_thinks={"W": [4]}, finished=True))
    # columns from the left, rows from the top: d4 is (d, 15 - 4 + 1 = 12th row from the top: l)
    assert to_sgf(log, black="李", white="王") == (
        "(;FF[4]GM[4]SZ[15]CA[UTF-8]AP[tractorcam]PB[李]PW[王]RE[B+]"
        ";B[dl]C[4.5 s];W[ao]C[4.5 s];B[ek]C[4.5 s];W[oa]C[4.5 s, long think];B[fj]C[4.5 s]"
        ";W[am]C[4.5 s];B[gi]C[4.5 s];W[ak]C[4.5 s];B[hh]C[4.5 s])"
    )
    assert read_sgf(to_sgf(log)) == log


def test_sgf_from_elsewhere_is_read_main_line_only() -> None:
    from gomoku.sgf import SgfError, read_sgf

    text = "(;GM[4]FF[4]SZ[15]PB[x\\]y];B[hh];W[ih](;B[jg];W[kf])(;B[gg]))"
    log = read_sgf(text)
    assert [(m.colour, str(m.point)) for m in log.moves] == [
        ("B", "h8"),
        ("W", "i8"),
        ("B", "j9"),
        ("W", "k10"),
    ]
    assert log.finished is False and log.moves[0].seconds is None
    for bad, said in [
        ("(;GM[1]SZ[19];B[pd])", "GM[1] is not gomoku"),
        ("(;GM[4]SZ[15];B[hh];W[hh])", "SGF: move 2: W on h8, which B took at move 1"),
        ("(;GM[4]SZ[15];B[zz])", "move 1: B[zz] is not a point"),
        ("hello", "no '(;'"),
    ]:
        with pytest.raises(SgfError, match=re.escape(said)):
            read_sgf(bad)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.integers(0, 120))
def test_any_game_goes_to_sgf_and_back(seed: int, length: int) -> None:
    from gomoku import parse_gomoku_log
    from gomoku.sgf import read_sgf, to_sgf

    rng = random.Random(seed)
    points = rng.sample([f"{c}{r}" for c in LETTERS for r in range(1, 16)], length)
    winner, at, _ = brute(points)
    seconds = [round(rng.uniform(0, 150), 1) for _ in range(at)]
    log = {
        "game": "gomoku",
        "moves": [["BW"[i % 2], p, s] for i, (p, s) in enumerate(zip(points[:at], seconds, strict=True))],
    }
    black_moves = [i + 1 for i in range(0, at, 2)]
    log["long_thinks"] = {"B": black_moves[:2], "W": []}
    log["finished"] = winner is not None
    parsed = parse_gomoku_log(log)
    assert read_sgf(to_sgf(parsed)) == parsed
