"""The event file: the spec's example reads, every bad field is named in one line, and
``parse_event(e.to_json()) == e``."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.tourney.events import event, match, pairs, teams
from tourney.event import Bye, EventFileError, Match, Result, load_event, parse_event

#: The example of shared/spec/cli.md, "Tournament commands" (one entry added so A, B and C exist).
SPEC_EXAMPLE: dict[str, Any] = {
    "format": "swiss",
    "scoring": "zhku",
    "rounds_planned": 6,
    "seed": 42,
    "entries": [
        {"id": "A", "name": "Library", "unit": "Library", "rating": 0},
        {"id": "B", "name": "Maths", "unit": "Maths", "rating": 0},
        {"id": "C", "name": "Physics", "unit": "Physics", "rating": 0},
    ],
    "rounds": [
        {
            "round": 1,
            "matches": [
                {"table": 1, "home": "A", "away": "B", "result": {"home_level": "7", "away_level": "5"}},
                {"bye": "C"},
            ],
        }
    ],
}


def test_the_spec_example_reads() -> None:
    e = parse_event(SPEC_EXAMPLE)
    assert (e.format, e.scoring, e.seed, e.rounds_planned) == ("swiss", "zhku", 42, 6)
    assert [x.id for x in e.entries] == ["A", "B", "C"]
    assert e.rounds[0].items == (Match(1, "A", "B", (Result("7", "5"),)), Bye("C"))
    assert e.to_json() == SPEC_EXAMPLE


def test_levels_take_the_engine_spelling() -> None:
    data = event(pairs("A", "B"), [[match(1, "A", "B", {"home_level": "t", "away_level": "a"})]])
    result = parse_event(data).rounds[0].matches[0].result
    assert result == (Result("10", "A"),)
    assert result[0].margin == 10 - 14


def test_a_team_match_holds_one_result_per_pair() -> None:
    data = event(teams("A", "B"), [[match(1, "A", "B", "W", "L")]])
    e = parse_event(data)
    assert e.team and e.boards == 2
    assert e.rounds[0].matches[0].result == (Result("9", "6"), Result("5", "7"))
    assert parse_event(e.to_json()) == e


def test_a_team_forfeit_forfeits_every_board() -> None:
    data = event(teams("A", "B"), [[{"table": 1, "home": "A", "away": "B", "result": {"forfeit": "away"}}]])
    result = parse_event(data).rounds[0].matches[0].result
    assert result == (Result(forfeit="away"), Result(forfeit="away"))


def test_round_trip_keeps_every_field() -> None:
    data = event(
        [
            {"id": "A", "name": "Library", "unit": "L", "rating": 1500.5, "group": "G1"},
            {"id": "B", "name": "B", "rating": 3, "group": "G1", "withdrawn": True},
        ],
        [
            [
                {
                    "table": 3,
                    "home": "B",
                    "away": "A",
                    "result": {
                        "home_level": "J",
                        "away_level": "J",
                        "winner": "away",
                        "violations": {"home": 2, "away": 0},
                    },
                }
            ],
            [{"table": 1, "home": "A", "away": "B"}],
        ],
        format="knockout",
        scoring="challenge",
        name="Staff championship",
        rounds_planned=4,
    )
    e = parse_event(data)
    assert e.to_json() == data
    assert parse_event(json.loads(json.dumps(e.to_json()))) == e
    assert e.rounds[0].matches[0].result == (Result("J", "J", None, "away", (2, 0)),)
    assert not e.rounds[1].complete


def _broken(path: list[Any], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(SPEC_EXAMPLE)
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["format"], "ladder", "format: 'ladder' is not one of swiss, round-robin, knockout"),
        (["scoring"], KeyError, "missing field 'scoring'"),
        (["seed"], "42", "seed: expected an integer, got a string"),
        (["seed"], True, "seed: expected an integer, got a boolean"),
        (["rounds_planned"], 0, "rounds_planned: 0 is out of range (1 to 256)"),
        (["colour"], "red", "unknown field 'colour'"),
        (["entries", 1, "id"], "A", "entries[1].id: 'A' is used twice"),
        (["entries", 0, "rating"], "high", "entries[0].rating: expected a number, got a string"),
        (["entries", 2, "unit"], 7, "entries[2].unit: expected a string, got a number"),
        (["entries", 0, "pairs"], ["only one"], "entries[0].pairs: a team lists at least two pairs"),
        (["rounds", 0, "round"], 2, "rounds[0].round: expected round 1"),
        (["rounds", 0, "matches", 0, "away"], "Z", "rounds[0].matches[0].away: unknown entry 'Z'"),
        (["rounds", 0, "matches", 0, "away"], "A", "rounds[0].matches[0]: 'A' cannot play itself"),
        (["rounds", 0, "matches", 1, "bye"], "A", "rounds[0].matches[1]: entry 'A' is already in this round"),
        (["rounds", 0, "matches", 0, "table"], 0, "rounds[0].matches[0].table: 0 is out of range"),
        (
            ["rounds", 0, "matches", 0, "result", "home_level"],
            "Z",
            "rounds[0].matches[0].result.home_level: unknown rank 'Z'",
        ),
        (
            ["rounds", 0, "matches", 0, "result", "home_level"],
            7,
            "rounds[0].matches[0].result.home_level: expected a level as a string",
        ),
        (
            ["rounds", 0, "matches", 0, "result", "winner"],
            "home",
            "rounds[0].matches[0].result.winner: only a drawn result names a winner",
        ),
        (
            ["rounds", 0, "matches", 0, "result"],
            {"forfeit": "both"},
            "rounds[0].matches[0].result.forfeit: 'both' is not one of home, away",
        ),
        (
            ["rounds", 0, "matches", 0, "result"],
            {"forfeit": "home", "home_level": "7"},
            "rounds[0].matches[0].result: a forfeit has no 'home_level'",
        ),
        (
            ["rounds", 0, "matches", 0, "result"],
            {"home_level": "7"},
            "rounds[0].matches[0].result: missing field 'away_level'",
        ),
    ],
)
def test_a_bad_field_is_named_in_one_line(path: list[Any], value: Any, message: str) -> None:
    with pytest.raises(EventFileError) as caught:
        parse_event(_broken(path, value))
    text = str(caught.value)
    assert message in text, text
    assert "\n" not in text


def test_teams_and_pairs_do_not_mix() -> None:
    with pytest.raises(
        EventFileError, match=r"entries\[1\].pairs: every entry is a pair or every entry is a team"
    ):
        parse_event(event([*teams("A"), *pairs("B")]))


def test_a_team_match_needs_a_result_per_pair() -> None:
    with pytest.raises(EventFileError, match=r"result: expected 2 results \(one per pair\), got 1"):
        parse_event(
            event(
                teams("A", "B"),
                [[{"table": 1, "home": "A", "away": "B", "result": [match(1, "A", "B", "W")["result"]]}]],
            )
        )
    with pytest.raises(EventFileError, match="teams play 2 boards"):
        parse_event(event(teams("A", "B"), [[match(1, "A", "B", "W")]]))


def test_groups_are_all_or_none_outside_swiss() -> None:
    entries = [{"id": "A", "group": "1"}, {"id": "B"}]
    with pytest.raises(EventFileError, match=r"entries\[1\].group: missing: in a round-robin event"):
        parse_event(event(entries, format="round-robin"))
    assert parse_event(event(entries)).entries[1].group is None  # a Swiss event ignores groups


def test_a_table_is_used_once_a_round() -> None:
    rnd = [match(1, "A", "B", "W"), match(1, "C", "D", "W")]
    with pytest.raises(EventFileError, match="table 1 is used twice in this round"):
        parse_event(event(pairs("A", "B", "C", "D"), [rnd]))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "bad JSON: empty input"),
        ("{", "bad JSON: malformed JSON"),
        ("[1, 2]", "expected a JSON object, got a list"),
        ('{"a": NaN}', "bad JSON: NaN is not valid JSON"),
    ],
)
def test_text_that_is_not_an_event(text: str, message: str) -> None:
    with pytest.raises(EventFileError) as caught:
        load_event(text)
    assert str(caught.value).startswith(message), str(caught.value)
