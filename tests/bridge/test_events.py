"""A bridge event's frame: the Mitchell movement checked by the test's own rules (who meets whom,
who plays which board, how pairs and boards move), pair standings and a team match worked by hand."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bridge.events import BoardResult, MovementError, mitchell, pair_results, team_match


@pytest.mark.parametrize("tables", range(3, 17))
@pytest.mark.parametrize("per_round", [1, 2, 3])
def test_a_mitchell_never_repeats_a_meeting_or_a_board(tables: int, per_round: int) -> None:
    seatings = mitchell(tables, boards_per_round=per_round)
    rounds = tables if tables % 2 else tables - 1
    assert len(seatings) == rounds * tables
    for r in range(1, rounds + 1):
        here = [s for s in seatings if s.round == r]
        assert sorted(s.table for s in here) == list(range(1, tables + 1))
        assert sorted(s.ns for s in here) == list(range(1, tables + 1))
        assert sorted(s.ew for s in here) == list(range(1, tables + 1))
        boards = [b for s in here for b in s.boards]
        assert len(boards) == len(set(boards)) == tables * per_round
    meetings = Counter((s.ns, s.ew) for s in seatings)
    assert max(meetings.values()) == 1
    for direction in ("ns", "ew"):
        played = Counter((getattr(s, direction), b) for s in seatings for b in s.boards)
        assert max(played.values()) == 1  # no pair plays a board twice
    assert all(s.ns == s.table for s in seatings)  # North-South sit still


@pytest.mark.parametrize("tables", [5, 6])
def test_east_west_move_up_and_the_boards_down_with_a_skip_when_the_tables_are_even(tables: int) -> None:
    seatings = {(s.round, s.table): s for s in mitchell(tables, boards_per_round=1)}
    rounds = max(r for r, _ in seatings)
    for r in range(1, rounds):
        for t in range(1, tables + 1):
            ew = seatings[(r, t)].ew
            step = 2 if tables % 2 == 0 and r == tables // 2 else 1  # the skip, once, after half
            moved_to = (t - 1 + step) % tables + 1
            assert seatings[(r + 1, moved_to)].ew == ew
            board_to = (t - 2) % tables + 1  # boards go down a table
            assert seatings[(r + 1, board_to)].boards == seatings[(r, t)].boards


def test_a_mitchell_that_cannot_be_made_is_refused() -> None:
    with pytest.raises(MovementError, match="at least 3 tables"):
        mitchell(2)
    with pytest.raises(MovementError, match="1 to 5 rounds"):
        mitchell(6, rounds=6)
    with pytest.raises(MovementError, match="at least 1 board"):
        mitchell(5, boards_per_round=0)
    assert len(mitchell(7, rounds=3)) == 21


def test_pair_standings_by_match_points_worked_by_hand() -> None:
    # 3 tables, one board a round: board 1 played by NS1-EW1, NS2-EW3, NS3-EW2 (the first round's
    # table 1, the second's table 3, the third's table 2)
    lines = [
        BoardResult(1, 1, 1, 420), BoardResult(1, 3, 2, 450), BoardResult(1, 2, 3, -50),
        BoardResult(2, 2, 2, 110), BoardResult(2, 1, 3, 110), BoardResult(2, 3, 1, 140),
        BoardResult(3, 3, 3, -100), BoardResult(3, 2, 1, -100), BoardResult(3, 1, 2, -100),
    ]  # fmt: skip
    got = {(s.direction, s.pair): (s.matchpoints, s.top, s.percentage) for s in pair_results(lines)}
    # board 1: 450 top (4), 420 (2), -50 (0); board 2: 140 (4), 110 and 110 (1 each);
    # board 3: all tie (2 each). EW gets 4 less North-South's.
    assert got[("NS", 1)] == (2 + 1 + 2, 12, 41.67)
    assert got[("NS", 2)] == (0 + 1 + 2, 12, 25.0)
    assert got[("NS", 3)] == (4 + 4 + 2, 12, 83.33)
    assert got[("EW", 1)] == (2 + 0 + 2, 12, 33.33)
    assert got[("EW", 2)] == (0 + 3 + 2, 12, 41.67)
    assert got[("EW", 3)] == (4 + 3 + 2, 12, 75.0)
    order = [(s.direction, s.pair) for s in pair_results(lines)]
    assert order == [("NS", 3), ("NS", 1), ("NS", 2), ("EW", 3), ("EW", 2), ("EW", 1)]


def test_a_team_match_in_imps_worked_by_hand() -> None:
    match = team_match([(1, 420, -50), (2, -100, 620), (3, 170, 140), (4, 50, 50)])
    # 470 → 10; -720 → -12; 30 → 1; 0 → 0
    assert match.imps == (10, -12, 1, 0)
    assert match.totals == (11, 12)
    assert match.boards == (1, 2, 3, 4)


def test_tourney_mitchell_pairs_and_teams(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from tractorcam_cli.main import app

    runner = CliRunner()
    r = runner.invoke(app, ["tourney", "mitchell", "3", "--boards-per-round", "1"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert rows[3] == {"round": 2, "table": 1, "ns": 1, "ew": 3, "boards": [2]}
    bad = runner.invoke(app, ["tourney", "mitchell", "2"])
    assert bad.exit_code == 2 and "at least 3 tables" in bad.stderr
    lines = tmp_path / "lines.json"
    lines.write_text(
        json.dumps(
            [{"board": 1, "ns": 1, "ew": 1, "ns_score": 420}, {"board": 1, "ns": 2, "ew": 2, "ns_score": 450}]
        )
    )
    r = runner.invoke(app, ["tourney", "pairs", str(lines)])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)[0] == {
        "direction": "NS",
        "pair": 2,
        "matchpoints": 2,
        "top": 2,
        "percentage": 100.0,
    }
    lines.write_text('[{"board": 1, "ns": 1}]')
    bad = runner.invoke(app, ["tourney", "pairs", str(lines)])
    assert bad.exit_code == 2 and "traveller lines" in bad.stderr
    board_rows = tmp_path / "match.json"
    board_rows.write_text("[[1, 420, -50], [2, -100, 620]]")
    r = runner.invoke(app, ["tourney", "teams", str(board_rows)])
    assert r.exit_code == 0 and json.loads(r.stdout) == {
        "boards": [1, 2],
        "imps": [10, -12],
        "totals": [10, 12],
    }
    board_rows.write_text("[[1, 420]]")
    bad = runner.invoke(app, ["tourney", "teams", str(board_rows)])
    assert bad.exit_code == 2 and bad.stderr.startswith("error:")
