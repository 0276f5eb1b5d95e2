"""``tractorcam score`` as the spec says: JSON out and exit 0, or exit 2 with a one-line message
naming the trick and play, and nothing on standard output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SPEC_EXAMPLE = {
    "rules": "national-2deck",
    "level": "5",
    "trump": "H",
    "dealer": "S",
    "bottom": ["KD", "5C", "3S", "3S", "4D", "6C", "7C", "9D"],
    "tricks": [
        {"plays": [["S", ["AH", "AH"]], ["E", ["3H", "9H"]], ["N", ["2H", "2H"]], ["W", ["QH", "QH"]]]},
        {"plays": [["S", ["BJ"]], ["E", ["3C"]], ["N", ["5S"]], ["W", ["SJ"]]]},
    ],
    "finished": False,
}


def run(stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tractorcam_cli", "score", *(args or ("-",))],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_spec_example_scores() -> None:
    proc = run(json.dumps(SPEC_EXAMPLE))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["tricks"] == [
        {"trick": 1, "leader": "S", "winner": "S", "points": 0},
        {"trick": 2, "leader": "S", "winner": "S", "points": 5},
    ]
    assert out["captured"] == 0 and out["violations"] == [] and "outcome" not in out


def test_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(SPEC_EXAMPLE), encoding="utf-8")
    proc = run("", str(path))
    assert proc.returncode == 0 and json.loads(proc.stdout)["tricks"][1]["points"] == 5


def mutate(**changes: object) -> dict:
    data = json.loads(json.dumps(SPEC_EXAMPLE))
    data.update(changes)
    return data


def with_play(trick: int, play: int, value: list) -> dict:
    data = mutate()
    data["tricks"][trick]["plays"][play] = value
    return data


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "bad JSON"),
        (json.dumps(mutate(rules="bridge")), "unknown rule set"),
        (json.dumps(mutate(trump="X")), "trump"),
        (json.dumps(mutate(level="1")), "level"),
        (json.dumps(with_play(1, 2, ["N", ["5Z"]])), "trick 2, play 3"),
        (json.dumps(with_play(0, 1, ["Q", ["3H", "9H"]])), "trick 1, play 2"),
        (json.dumps(with_play(0, 1, ["N", ["3H", "9H"]])), "out of turn"),
        (json.dumps(with_play(1, 3, ["W", ["AH"]])), "AH appears more than 2"),
        (
            json.dumps(mutate(tricks=[SPEC_EXAMPLE["tricks"][0], {"plays": [["E", ["3C"]]]}])),
            "trick 2, play 1 (E): E led but S won trick 1",
        ),
        (json.dumps([1, 2]), "JSON object"),
    ],
)
def test_malformed_logs_exit_2_with_one_line(text: str, expected: str) -> None:
    proc = run(text)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], proc.stderr


def test_missing_file_exits_2(tmp_path: Path) -> None:
    proc = run("", str(tmp_path / "nope.json"))
    assert proc.returncode == 2 and proc.stdout == ""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested deeper than"),
        ('{"rules": "national-2deck", "level": ' + "9" * 5000 + "}", "longer than 18 digits"),
        ('{"level": 1e999}', "too large"),
        ('{"level": NaN}', "NaN is not valid JSON"),
        (json.dumps(mutate(finished=True)), "does not account for the whole deal"),
        (json.dumps(mutate(rules="x" * 1_000_000)), "unknown rule set"),
        (json.dumps(with_play(0, 0, ["S", "A" * 1_000_000])), "cards must be a list"),
        (json.dumps(mutate(rulings=[{"seat": "E", "kind": "other", "levels": 10**17}])), "levels must be"),
    ],
)
def test_hostile_input_exits_2_with_a_short_line(text: str, expected: str) -> None:
    """Deep nesting, huge numbers and megabyte values: one short line, never a traceback."""
    proc = run(text)
    assert proc.returncode == 2, proc.stderr[-500:]
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], proc.stderr[-500:]
    assert len(lines[0]) <= 320


def test_finished_log_names_what_is_missing() -> None:
    proc = run(json.dumps(mutate(finished=True)))
    assert proc.returncode == 2
    assert "each hand has 25 cards, but S played 3, E played 3, N played 3, W played 3" in proc.stderr
    assert "88 card(s) of the decks never appear" in proc.stderr  # 108 - 12 played - 8 in the bottom


@pytest.mark.slow  # three interpreters started
def test_the_log_says_its_game() -> None:
    """``"game": "shengji"`` scores as a log without ``"game"`` (games.md); a game tractorcam does
    not know, or a ``"game"`` that is no name, is exit 2 with one line and nothing on standard output."""
    plain = run(json.dumps(SPEC_EXAMPLE))
    named = run(json.dumps({"game": "shengji", **SPEC_EXAMPLE}))
    assert named.returncode == 0 and named.stdout == plain.stdout
    for game, line in (
        ("mahjong", "error: game 'mahjong' is not one tractorcam knows (known: bridge, gomoku, shengji)"),
        (7, 'error: "game" must be a game\'s name, not int'),
    ):
        proc = run(json.dumps({**SPEC_EXAMPLE, "game": game}))
        assert (proc.returncode, proc.stdout, proc.stderr.strip()) == (2, "", line)
