"""``tractorcam tourney pair|standings FILE`` as shared/spec/cli.md says: one JSON object on standard
output and exit 0, or exit 2 with one line on standard error (and nothing on standard output)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.tourney.events import event, match, pairs
from tests.tourney.test_event import SPEC_EXAMPLE
from tractorcam_cli.main import app

runner = CliRunner()


def write(tmp_path: Path, data: object, name: str = "event.json") -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def test_pair_prints_the_next_round(tmp_path: Path) -> None:
    """After round 1 of the spec example (A beat B, C had the bye): C and A have 2 points, B 0.
    Three entries: one match and a bye. C cannot have a second bye and A–B would be a rematch,
    so B has the bye and A meets C."""
    done = runner.invoke(app, ["tourney", "pair", write(tmp_path, SPEC_EXAMPLE)])
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    assert set(out) == {"round", "matches", "relaxed"}
    assert out["round"] == 2
    assert out["matches"][-1] == {"bye": "B"}
    (m,) = out["matches"][:-1]
    assert m["table"] == 1 and {m["home"], m["away"]} == {"A", "C"}
    assert out["relaxed"] == []


def test_standings_prints_every_tie_break(tmp_path: Path) -> None:
    done = runner.invoke(app, ["tourney", "standings", write(tmp_path, SPEC_EXAMPLE)])
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    assert out["after_round"] == 1
    rows = {r["id"]: r for r in out["standings"]}
    assert [r["rank"] for r in out["standings"]] == [1, 2, 3]
    assert out["standings"][-1]["id"] == "B"
    # A beat B 7–5: 2 points, +2; C's bye: 2 points, +2; B: 0, −2; A's opponent B has 0
    assert {k: (r["points"], r["opponents_points"], r["level_difference"]) for k, r in rows.items()} == {
        "A": (2, 0, 2),
        "C": (2, 0, 2),
        "B": (0, 2, -2),
    }
    assert all(
        {"rank", "id", "points", "opponents_points", "level_difference", "lot"} <= set(r)
        for r in rows.values()
    )


def test_a_relaxed_rule_is_listed(tmp_path: Path) -> None:
    data = event([{"id": "A", "unit": "U"}, {"id": "B", "unit": "U"}])
    out = json.loads(runner.invoke(app, ["tourney", "pair", write(tmp_path, data)]).stdout)
    assert out["relaxed"] == [{"rule": "same_unit", "entries": ["A", "B"]}]


@pytest.mark.parametrize("command", ["pair", "standings"])
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("{not json", "bad JSON"),
        ({"format": "swiss"}, "missing field 'scoring'"),
        ({**SPEC_EXAMPLE, "scoring": "elo"}, "scoring: 'elo' is not one of zhku, national, challenge"),
    ],
)
def test_a_bad_file_exits_2_with_one_line(
    tmp_path: Path, command: str, content: object, message: str
) -> None:
    path = str(tmp_path / "missing.json") if content is None else write(tmp_path, content)
    done = runner.invoke(app, ["tourney", command, path])
    assert done.exit_code == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines


def test_an_event_with_no_next_round_exits_2(tmp_path: Path) -> None:
    data = event(pairs("A", "B"), [[match(1, "A", "B", "W")]], rounds_planned=1)
    done = runner.invoke(app, ["tourney", "pair", write(tmp_path, data)])
    assert done.exit_code == 2 and done.stdout == ""
    assert "all 1 planned rounds are paired" in done.stderr


def test_the_installed_command_reads_a_file_and_standard_input(tmp_path: Path) -> None:
    path = write(tmp_path, SPEC_EXAMPLE)
    command = [sys.executable, "-m", "tractorcam_cli", "tourney"]
    done = subprocess.run([*command, "standings", path], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["after_round"] == 1
    piped = subprocess.run(
        [*command, "pair", "-"], input=json.dumps(SPEC_EXAMPLE), capture_output=True, text=True, timeout=120
    )
    assert piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout)["round"] == 2
    bad = subprocess.run([*command, "pair", "-"], input="[]", capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip() == "error: standard input: expected a JSON object, got a list"
