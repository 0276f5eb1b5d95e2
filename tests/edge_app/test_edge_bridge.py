"""The bridge table service's pipeline (edge_app.bridge) on scripted readings: dummy's hand read once
where it is laid, each seat's card trick by trick, the log and its score, revokes alerted only on
cards read surely, and what a misread becomes. The truth is a board played by bridge.sim and
checked by the tests' own comparison, never by the code under test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bridge.sim import simulate_board
from edge_app.bridge import BoardInfo, BoardInfoError, DummyReader, run_bridge_pipeline
from models.synth.layout import Table
from tests.edge_app.test_edge_tracking import card_at, mm_geometry
from vision.capture import Frame
from vision.instances import CardInstance

TABLE = Table(900.0, 900.0)
# where a played card lands, 1 px = 1 mm: about 180 mm in from each seat's edge
PLAY = {"S": (450, 720), "N": (450, 180), "E": (720, 450), "W": (180, 450)}


def _point(seat: str, depth: float, along: float) -> tuple[float, float]:
    """A table point ``depth`` mm in from ``seat``'s edge, ``along`` mm from the edge's middle."""
    return {
        "S": (450 + along, 900 - depth),
        "N": (450 - along, depth),
        "E": (900 - depth, 450 - along),
        "W": (depth, 450 + along),
    }[seat]


def _layout(
    dummy: str, cards: list[str], strip: dict[str, str] | None = None
) -> list[tuple[str, float, float]]:
    """Dummy's cards laid in columns: depths 70–168 mm (inside the line, 243 mm), spread along its
    edge; ``strip``: cards read as others there."""
    return [
        ((strip or {}).get(c, c), *_point(dummy, 70 + 14 * (i % 8), -160 + 25 * i))
        for i, c in enumerate(cards)
    ]


def film(
    log: dict[str, Any],
    repeat: int = 3,
    misread: dict[tuple[int, str], str] | None = None,
    strip: dict[str, str] | None = None,
) -> list[list[tuple[str, float, float]]]:
    """The pictures of a board's play as a perfect camera reads them: each play added, dummy's hand
    laid after the opening lead (its played card moved nearer the centre), each trick cleared.
    ``misread``: (trick, seat) → the card read instead, in every reading of that play; ``strip``:
    a card of dummy's → the card read instead while it lies in dummy's columns."""
    dummy = {"N": "S", "S": "N", "E": "W", "W": "E"}[log["declarer"]]
    remaining = list(log["hands"][dummy])
    laid = False
    pictures: list[list[tuple[str, float, float]]] = [[]] * repeat
    for t, trick in enumerate(log["tricks"]):
        on_table: list[tuple[str, float, float]] = []
        for seat, card in trick["plays"]:
            shown = (misread or {}).get((t + 1, seat), card)
            if seat == dummy:  # taken from its columns (laid after the opening lead)
                remaining.remove(card)
                at = _point(dummy, 350, 0)
            else:
                at = PLAY[seat]
            on_table.append((shown, *at))
            layout = _layout(dummy, remaining, strip) if laid else []
            pictures += [on_table + layout] * repeat
            if t == 0 and not laid:  # the opening lead made: dummy lays its hand
                laid = True
                pictures += [on_table + _layout(dummy, remaining, strip)] * repeat
        pictures += [_layout(dummy, remaining, strip) if remaining else []] * repeat
    return pictures


def _frames(pictures: list[list[tuple[str, float, float]]]) -> tuple[list[Frame], Any]:
    frames = [Frame(np.zeros((4, 4, 3), np.uint8), i, i / 10, "test") for i in range(len(pictures))]
    answers = {i: [card_at(c, x, y) for c, x, y in p] for i, p in enumerate(pictures)}
    at = {"i": 0}

    def read(image: np.ndarray) -> list[CardInstance]:
        out = answers[at["i"]]
        at["i"] += 1
        return out

    return frames, read


def _run(log: dict[str, Any], pictures: list[list[tuple[str, float, float]]]) -> Any:
    frames, read = _frames(pictures)
    info = BoardInfo(log["board"], log["contract"], log["declarer"])
    return run_bridge_pipeline(frames, read, mm_geometry(TABLE), info, every=1, inertia=2)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_board_read_perfectly_gives_its_log_and_score(seed: int) -> None:
    log = simulate_board(seed)
    result = _run(log, film(log))
    board = result.board
    plays = [[tuple(p) for p in t["plays"]] for t in board.log["tricks"]]
    assert plays == [[tuple(p) for p in t["plays"]] for t in log["tricks"]]
    assert sorted(board.log["dummy"]) == sorted(log["dummy"])
    assert board.finished and result.finished_at is not None
    assert board.alerts == () and board.looks == ()
    from bridge.play import score_log

    want = score_log({k: v for k, v in log.items() if k not in ("hands", "injected")})
    assert board.result is not None and board.result["score"] == want["score"]
    assert len(board.crops) == 52


def _partner(seat: str) -> str:
    return {"N": "S", "S": "N", "E": "W", "W": "E"}[seat]


def _revoking(by_dummy: bool) -> dict[str, Any]:
    """A board with a revoke injected, by dummy or by another seat."""
    return next(
        lg
        for s in range(60)
        if "injected" in (lg := simulate_board(s, inject_revoke=True))
        and (lg["injected"]["seat"] == _partner(lg["declarer"])) == by_dummy
    )


def test_an_injected_revoke_is_alerted_at_its_trick() -> None:
    log = _revoking(by_dummy=False)
    board = _run(log, film(log)).board
    alerted = {(a["seat"], a["trick"]) for a in board.alerts}
    assert (log["injected"]["seat"], log["injected"]["trick"]) in alerted
    assert board.looks == ()


def test_dummys_revoke_is_put_to_the_referee_not_alerted() -> None:
    log = _revoking(by_dummy=True)
    board = _run(log, film(log)).board
    assert board.alerts == ()
    assert any(
        line.startswith(f"trick {log['injected']['trick']}: dummy may have revoked") for line in board.looks
    )


def _misread(log: dict[str, Any]) -> tuple[str, str, str]:
    """A card of trick 3 played by a seat other than dummy, and a card of dummy's still in its
    columns then: (seat, card, dummy's card)."""
    dummy = _partner(log["declarer"])
    seat, card = next((s, c) for s, c in log["tricks"][2]["plays"] if s != dummy)
    gone = {c for t in log["tricks"][:3] for _, c in t["plays"]}
    return seat, card, next(c for c in log["dummy"] if c not in gone)


def test_a_card_read_unsurely_as_one_of_dummys_is_written_unknown_with_a_look() -> None:
    log = simulate_board(5)
    seat, card, wrong = _misread(log)
    pictures = film(log)
    # two readings in three of the play read it as a card of dummy's: that card, read by two thirds
    shaky = [[(wrong if c == card and i % 3 else c, x, y) for c, x, y in p] for i, p in enumerate(pictures)]
    board = _run(log, shaky).board
    written = dict(tuple(p) for p in board.log["tricks"][2]["plays"])
    assert written[seat] == "??"
    assert any(
        f"{seat}'s card read as {wrong}, which is one of dummy's cards as laid" in line
        for line in board.looks
    )
    assert board.alerts == ()


def test_a_play_read_surely_is_taken_over_a_misread_strip_of_dummys_columns() -> None:
    log = simulate_board(5)
    seat, card, mine = _misread(log)
    # dummy's card ``mine`` is read, in every reading of its columns, as the card ``seat`` plays
    board = _run(log, film(log, strip={mine: card})).board
    plays = [[tuple(p) for p in t["plays"]] for t in board.log["tricks"]]
    assert plays == [[tuple(p) for p in t["plays"]] for t in log["tricks"]]
    assert sorted(board.log["dummy"]) == sorted(log["dummy"])
    assert board.alerts == () and board.looks == ()


def test_a_card_read_twice_is_written_unknown_the_second_time() -> None:
    log = simulate_board(5)
    seat, card, _ = _misread(log)
    first = log["tricks"][0]["plays"][0][1]  # the opening lead, read again in trick 3
    board = _run(log, film(log, misread={(3, seat): first})).board
    assert dict(tuple(p) for p in board.log["tricks"][2]["plays"])[seat] == "??"
    assert any("which was played before" in line for line in board.looks)


def test_a_play_read_differently_in_many_readings_makes_a_revoke_a_look_not_an_alert() -> None:
    log = _revoking(by_dummy=False)
    seat, trick = log["injected"]["seat"], log["injected"]["trick"]
    pictures = film(log, repeat=4)
    # every other reading of the revoking card reads no card there: agreement 0.5 or less
    card = dict(tuple(p) for p in log["tricks"][trick - 1]["plays"])[seat]
    shaky = [[c for c in p if not (c[0] == card and i % 2)] for i, p in enumerate(pictures)]
    board = _run(log, shaky).board
    assert (seat, trick) not in {(a["seat"], a["trick"]) for a in board.alerts}


CARDS = ["AS", "KS", "QS", "2H", "3H", "4H", "5H", "6D", "7D", "8D", "9C", "10C", "JC"]


def test_dummys_cards_are_those_read_often_enough_over_the_board() -> None:
    r = DummyReader(seen=3)
    assert r.layout() is None
    for _ in range(2):
        r.see(CARDS[:8])  # an overlapped column shows few indices at first
    r.see(CARDS[:8] + ["QC"])  # JC misread once as QC
    assert sorted(str(c) for c in r.layout() or ()) == sorted(CARDS[:8])
    for _ in range(3):
        r.see(CARDS[5:])  # the rest read as the columns shorten
    assert sorted(str(c) for c in r.layout() or ()) == sorted(CARDS)


def test_the_cards_read_most_often_come_first() -> None:
    r = DummyReader(seen=1)
    for _ in range(5):
        r.see(CARDS)
    r.see(["QC"])  # a misread, once
    assert sorted(str(c) for c in (r.layout() or ())[:13]) == sorted(CARDS)
    assert str((r.layout() or ())[-1]) == "QC"


def test_a_board_the_rules_refuse_to_follow_is_refused_at_once() -> None:
    with pytest.raises(BoardInfoError, match="level is 1 to 7"):
        BoardInfo(3, "8S", "N")
    with pytest.raises(BoardInfoError, match="passed out"):
        BoardInfo(3, "PASS", "N")


@pytest.mark.slow
def test_run_follows_a_filmed_bridge_board(tmp_path: Path) -> None:
    """A board filmed at 960 × 720 (a training design, 4 fps), replayed through ``tractorcam run
    --game bridge`` with the shipped reader: the log carries the board the operator entered, every
    trick is found with its plays in turn order from its leader, and the report says the board."""
    from typer.testing import CliRunner

    from models.synth.bridge_film import render_board
    from tractorcam_cli.main import app

    res = render_board(3, tmp_path / "board", fps=4, width=960, height=720, design="proc0")
    truth = json.loads(res.truth.read_text())
    out = tmp_path / "read.json"
    r = CliRunner().invoke(
        app,
        [
            "run", "--game", "bridge", "--source", str(res.video), "--table", str(res.table),
            "--board", str(truth["board"]), "--contract", truth["contract"], "--declarer", truth["declarer"],
            "--log-out", str(out), "--every", "1",
        ],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    log = json.loads(out.read_text())
    assert (log["board"], log["contract"], log["declarer"]) == (
        truth["board"],
        truth["contract"],
        truth["declarer"],
    )
    assert len(log["tricks"]) == 13 and f"board {truth['board']}: " in r.output
    order = "NESW"
    for trick in log["tricks"]:
        seats = [p[0] for p in trick["plays"]]
        lead = order.index(seats[0])
        assert seats == [order[(lead + i) % 4] for i in range(len(seats))]
    exact = sum(
        p == q
        for got, want in zip(log["tricks"], truth["tricks"], strict=True)
        for p, q in zip(got["plays"], want["plays"], strict=False)
    )
    assert exact >= 48, (exact, r.output)
