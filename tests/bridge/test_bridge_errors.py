"""Bridge logs refused with one line naming the fault (games.md: exit 2, no traceback), through the
rules and through ``tractorcam score``; the IMPs and match points commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bridge import BridgeLogError, score_log


def bridge(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"game": "bridge", "board": 1, "contract": "3NT", "declarer": "S", "tricks": []}
    return {**base, **fields}


def tricks(*written: str) -> list[dict[str, Any]]:
    return [{"plays": [p.split(":") for p in t.split()]} for t in written]


BAD = [
    (bridge(board=0), "board"),
    (bridge(board=1000), "board"),
    (bridge(board=True), "board"),
    (bridge(contract="8NT"), "contract"),
    (bridge(contract="4Q"), "contract"),
    (bridge(declarer="X"), "declarer"),
    (bridge(declarer=None), "declarer"),
    (bridge(contract="PASS", declarer=None, tricks=tricks("W:2C N:3C E:4C S:5C")), "passed out"),
    (bridge(vulnerable="NSEW"), "vulnerable"),
    (bridge(tricks=tricks("N:2C E:3C S:4C W:5C")), "trick 1, play 1: N plays out of turn"),
    (bridge(tricks=tricks("W:2C E:3C S:4C N:5C")), "trick 1, play 2: E plays out of turn"),
    (bridge(tricks=tricks("W:2C N:3C W:4C S:5C")), "trick 1, play 3: W plays twice"),
    (bridge(tricks=tricks("W:2C N:3C E:4C S:2C")), "trick 1, play 4: 2C again"),
    (
        bridge(tricks=tricks("W:2C N:3C E:4C S:5C", "W:2D N:3D E:4D S:5D")),
        "trick 2, play 1: W leads out of turn",
    ),
    (bridge(tricks=tricks("W:2C N:3C", "W:2D N:3D E:4D S:5D")), "trick 1 has 2 plays"),
    (bridge(tricks=tricks("W:2C N:3C E:4C S:SJ")), "joker"),
    (bridge(tricks=tricks("W:2C N:3C E:4C S:1C")), "trick 1, play 4"),
    (bridge(tricks=[{"plays": []}]), "trick 1"),
    (bridge(tricks=[{"plays": [["W", "2C"]]}] * 14), "14 tricks"),
    (bridge(finished=True, tricks=tricks("W:2C N:3C E:4C S:5C")), "finished"),
    (
        bridge(tricks=tricks("W:AC N:2C E:4C S:5C"), claim={"declarer_tricks": 13, "after_trick": 1}),
        "at most 0",
    ),
    (
        bridge(tricks=tricks("W:2C N:AC E:4C S:5C"), claim={"declarer_tricks": 0, "after_trick": 1}),
        "already won 1",
    ),
    (
        bridge(tricks=tricks("W:2C N:AC E:4C S:5C"), claim={"declarer_tricks": 5, "after_trick": 3}),
        "after trick 3",
    ),
    (bridge(dummy=["AS", "AS"]), "dummy: AS laid twice"),
    (bridge(dummy=["2C"], tricks=tricks("W:2C N:3C E:4C S:5C")), "a card of dummy's"),
    ({"game": "bridge"}, "board"),
    ([], "JSON object"),
]


@pytest.mark.parametrize(("data", "said"), BAD)
def test_a_bad_log_is_refused_with_one_line_naming_it(data: Any, said: str) -> None:
    with pytest.raises(BridgeLogError) as err:
        score_log(data)
    message = str(err.value)
    assert said in message and "\n" not in message and len(message) < 300


def test_a_claim_within_the_tricks_left_is_taken() -> None:
    out = score_log(
        bridge(tricks=tricks("W:2C N:AC E:4C S:5C"), claim={"declarer_tricks": 13, "after_trick": 1})
    )
    assert out["declarer_tricks"] == 13


def test_a_board_passed_out_scores_nothing() -> None:
    out = score_log(bridge(contract="PASS", declarer=None, board=4, finished=True))
    assert (out["dealer"], out["vulnerable"], out["score"], out["tricks"]) == (
        "W",
        "both",
        {"NS": 0, "EW": 0},
        [],
    )


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tractorcam_cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_tractorcam_score_scores_a_bridge_log_and_refuses_a_bad_one(tmp_path: Path) -> None:
    good = tmp_path / "board.json"
    good.write_text(
        json.dumps(
            bridge(
                board=7,
                contract="1NT",
                tricks=tricks("W:2C N:AC E:4C S:5C"),
                claim={"declarer_tricks": 7, "after_trick": 1},
                finished=True,
            )
        )
    )
    ok = _cli("score", str(good))
    assert ok.returncode == 0, ok.stderr
    out = json.loads(ok.stdout)
    assert (out["game"], out["board"], out["dealer"], out["vulnerable"]) == ("bridge", 7, "S", "both")
    assert out["score"] == {"NS": 90, "EW": -90} and out["result"] == 0
    bad = _cli("score", "-", stdin=json.dumps(bridge(tricks=tricks("N:2C E:3C S:4C W:5C"))))
    assert bad.returncode == 2 and bad.stdout == ""
    assert (
        bad.stderr.startswith("error: trick 1, play 1: N plays out of turn") and bad.stderr.count("\n") == 1
    )


def test_tourney_imps_and_matchpoints(tmp_path: Path) -> None:
    assert [_cli("tourney", "imps", d).stdout.strip() for d in ("170", "-170", "0", "4000")] == [
        "5",
        "-5",
        "0",
        "24",
    ]
    bad = _cli("tourney", "imps", "12x")
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and bad.stdout == ""
    traveller = tmp_path / "t.json"
    traveller.write_text("[420, 420, 170, -50]")
    out = _cli("tourney", "matchpoints", str(traveller))
    assert out.returncode == 0 and json.loads(out.stdout) == {"NS": [5, 5, 2, 0], "EW": [1, 1, 4, 6]}
    for text in ('[420, "x"]', '{"NS": 1}', "[420,"):
        bad = _cli("tourney", "matchpoints", "-", stdin=text)
        assert bad.returncode == 2 and bad.stderr.startswith("error:") and bad.stdout == ""
