"""benchmarks/board.py's comparison of a board as read with its truth: plays exact and as scored,
dummy's cards, the score, revokes alerted, missed and false."""

import importlib.util
from pathlib import Path

import pytest

from bridge.sim import simulate_board
from edge_app.bridge import RecognisedBoard

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "board.py"


@pytest.fixture(scope="module")
def board():
    spec = importlib.util.spec_from_file_location("bench_board", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plain(log):
    return {k: v for k, v in log.items() if k not in ("hands", "injected")}


def test_a_board_read_exactly_compares_exactly(board) -> None:
    from bridge import score_log

    truth = simulate_board(2)
    read = RecognisedBoard(_plain(truth), score_log(_plain(truth)), None)
    c = board.compare(read, truth)
    assert (c["plays"], c["exact"], c["scored"], c["dummy"]) == (52, 52, 52, 13)
    assert c["score_right"] and c["missed"] == [] and c["false"] == [] and c["looks"] == 0


def test_a_misread_play_a_missed_revoke_and_a_false_alert_are_counted(board) -> None:
    from bridge import score_log

    truth = next(lg for s in range(40) if "injected" in (lg := simulate_board(s, inject_revoke=True)))
    log = _plain(truth)
    tricks = [dict(t, plays=[list(p) for p in t["plays"]]) for t in log["tricks"]]
    tricks[0]["plays"][1][1] = "??"  # one play not named
    read_log = {**log, "tricks": tricks, "dummy": log["dummy"][:12] + ["??"]}
    result = score_log(read_log)
    seat = "N" if truth["injected"]["seat"] != "N" else "E"
    alert = {"seat": seat, "trick": 1, "kind": "revoke"}  # raised where the truth has none
    read = RecognisedBoard(read_log, result, None, ("a look",), (alert,))
    c = board.compare(read, truth)
    assert c["exact"] == 51 and c["dummy"] == 12 and c["looks"] == 1
    assert c["missed"] == [(truth["injected"]["seat"], truth["injected"]["trick"])]
    assert c["false"] == [(seat, 1)]
    settled = {(r["trick"], r["seat"]) for r in result.get("resolved", [])}
    assert c["scored"] == 51 + ((1, tricks[0]["plays"][1][0]) in settled)
