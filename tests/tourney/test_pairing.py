"""Pairing examples whose answer is known by hand: the first round by rating, the hard rules, the
bye, the fewest breaks when a rule must give, the circle method and the knockout bracket."""

from __future__ import annotations

from typing import Any

import pytest

from tests.tourney.events import event, match, pairs
from tourney.event import parse_event
from tourney.pairing import PairingError, pair_next


def pairing(data: dict[str, Any]) -> dict[str, Any]:
    return pair_next(parse_event(data)).to_json()


def played(out: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["home"], m["away"]) for m in out["matches"] if "table" in m]


def meetings(out: dict[str, Any]) -> set[frozenset[str]]:
    return {frozenset(p) for p in played(out)}


def byes(out: dict[str, Any]) -> list[str]:
    return [m["bye"] for m in out["matches"] if "bye" in m]


def rated(*ratings: int, unit: Any = None) -> list[dict[str, Any]]:
    """Entries R1, R2, … with the given ratings, each of its own unit unless ``unit`` maps them."""
    return [
        {"id": f"R{k}", "rating": r, "unit": unit(k) if unit else f"u{k}"}
        for k, r in enumerate(ratings, start=1)
    ]


# --- Swiss, round 1 ----------------------------------------------------------------------------


def test_round_one_by_rating_top_half_against_bottom_half() -> None:
    """Seed 002 art. 27: strong against weak; 1 v 4, 2 v 5, 3 v 6, tables in rating order."""
    out = pairing(event(rated(600, 500, 400, 300, 200, 100)))
    assert out == {
        "round": 1,
        "matches": [
            {"table": 1, "home": "R1", "away": "R4"},
            {"table": 2, "home": "R2", "away": "R5"},
            {"table": 3, "home": "R3", "away": "R6"},
        ],
        "relaxed": [],
    }


def test_round_one_odd_count_the_lowest_rated_has_the_bye() -> None:
    out = pairing(event(rated(50, 40, 30, 20, 10)))
    assert played(out) == [("R1", "R3"), ("R2", "R4")]
    assert byes(out) == ["R5"]
    assert out["matches"][-1] == {"bye": "R5"}


def test_round_one_by_rating_keeps_units_apart() -> None:
    """R1, R3 of unit X; R2, R4 of unit Y: the ideal 1 v 3, 2 v 4 pairs one unit twice. The valid
    pairings are 1 v 2 with 3 v 4, or 1 v 4 with 2 v 3."""
    out = pairing(event(rated(40, 30, 20, 10, unit=lambda k: "X" if k % 2 else "Y")))
    assert meetings(out) in (
        {frozenset({"R1", "R2"}), frozenset({"R3", "R4"})},
        {frozenset({"R1", "R4"}), frozenset({"R2", "R3"})},
    )
    assert out["relaxed"] == []


def test_round_one_by_lot_is_reproducible_and_follows_the_seed() -> None:
    entries = pairs(*"ABCDEFGHIJ")
    first = pairing(event(entries, seed=7))
    assert pairing(event(entries, seed=7)) == first
    assert len(played(first)) == 5 and first["relaxed"] == []
    draws = {frozenset(meetings(pairing(event(entries, seed=s)))) for s in range(8)}
    assert len(draws) > 1  # the lot depends on the seed


# --- Swiss, later rounds -----------------------------------------------------------------------


def test_equal_points_meet_and_no_rematch() -> None:
    """After A beat B and C beat D: A v C (2 points each) and B v D (0 each), the 2-pointers at
    table 1."""
    out = pairing(event(pairs("A", "B", "C", "D"), [[match(1, "A", "B", "W"), match(2, "C", "D", "W")]]))
    assert meetings(out) == {frozenset("AC"), frozenset("BD")}
    assert set(out["matches"][0].values()) >= {"A", "C"}
    assert out["round"] == 2 and out["relaxed"] == []


def test_the_bye_goes_to_the_lowest_placed_entry_without_one() -> None:
    """Round 1: A beat B, C drew D, E had the bye. Points: A 2, E 2, C 1, D 1, B 0.
    B (lowest, no bye yet) has the bye. A v E and C v D would be closest but C v D is a rematch,
    so A and E each meet one of C, D."""
    out = pairing(event(pairs(*"ABCDE"), [[match(1, "A", "B", "W"), match(2, "C", "D", "D"), {"bye": "E"}]]))
    assert byes(out) == ["B"]
    assert meetings(out) in ({frozenset("AC"), frozenset("ED")}, {frozenset("AD"), frozenset("EC")})
    assert out["relaxed"] == []


def test_no_second_bye_while_avoidable_then_the_fewest_breaks() -> None:
    """Three entries. Round 1: A beat B, C bye. Round 2: B is lowest without a bye: A v C, B bye.
    Round 3: only A has had no bye, and B v C is new: A bye, B v C. Round 4: every pair has met
    and everyone has had a bye: one rematch and one second bye, the fewest there can be."""
    rounds: list[list[dict[str, Any]]] = [[match(1, "A", "B", "W"), {"bye": "C"}]]
    second = pairing(event(pairs("A", "B", "C"), rounds))
    assert (meetings(second), byes(second), second["relaxed"]) == ({frozenset("AC")}, ["B"], [])
    rounds.append([match(1, "A", "C", "W"), {"bye": "B"}])
    third = pairing(event(pairs("A", "B", "C"), rounds))
    assert (meetings(third), byes(third), third["relaxed"]) == ({frozenset("BC")}, ["A"], [])
    rounds.append([match(1, "B", "C", "D"), {"bye": "A"}])
    fourth = pairing(event(pairs("A", "B", "C"), rounds))
    assert sorted(r["rule"] for r in fourth["relaxed"]) == ["rematch", "second_bye"]
    pair = next(r["entries"] for r in fourth["relaxed"] if r["rule"] == "rematch")
    bye = next(r["entries"] for r in fourth["relaxed"] if r["rule"] == "second_bye")
    assert meetings(fourth) == {frozenset(pair)} and byes(fourth) == bye


def test_one_unit_everywhere_breaks_the_rule_once_per_match() -> None:
    out = pairing(event([{"id": x, "unit": "Library"} for x in "ABCD"]))
    assert len(played(out)) == 2
    assert sorted(r["rule"] for r in out["relaxed"]) == ["same_unit", "same_unit"]
    assert {frozenset(r["entries"]) for r in out["relaxed"]} == meetings(out)


def test_a_unit_with_three_of_four_breaks_the_rule_once() -> None:
    """X1, X2, X3 of one unit and Y: Y takes one X; the two other X must meet: one break."""
    entries = [
        {"id": "X1", "unit": "X"},
        {"id": "X2", "unit": "X"},
        {"id": "X3", "unit": "X"},
        {"id": "Y", "unit": "Y"},
    ]
    out = pairing(event(entries))
    assert len(out["relaxed"]) == 1 and out["relaxed"][0]["rule"] == "same_unit"
    assert any("Y" in m for m in meetings(out))


def test_rematch_and_same_unit_on_one_pair_count_twice() -> None:
    """A and B, one unit, have met; with two entries there is no other pairing."""
    data = event([{"id": "A", "unit": "U"}, {"id": "B", "unit": "U"}], [[match(1, "A", "B", "D")]])
    out = pairing(data)
    assert sorted(r["rule"] for r in out["relaxed"]) == ["rematch", "same_unit"]


def test_withdrawn_entries_are_not_paired() -> None:
    entries = pairs("A", "B", "C", "D")
    entries[3]["withdrawn"] = True
    out = pairing(event(entries, [[match(1, "A", "B", "W"), match(2, "C", "D", "W")]]))
    assert "D" not in {e for m in meetings(out) for e in m} | set(byes(out))
    assert len(played(out)) == 1 and len(byes(out)) == 1


def test_swiss_stops_at_the_planned_rounds_and_waits_for_results() -> None:
    data = event(pairs("A", "B"), [[match(1, "A", "B", "W")]], rounds_planned=1)
    with pytest.raises(PairingError, match="all 1 planned rounds are paired"):
        pair_next(parse_event(data))
    unfinished = event(pairs("A", "B", "C", "D"), [[match(1, "A", "B", "W"), match(2, "C", "D")]])
    with pytest.raises(PairingError, match=r"round 1 is not finished: table 2 \(C v D\) has no result"):
        pair_next(parse_event(unfinished))


# --- round robin -------------------------------------------------------------------------------


def _play_out(data: dict[str, Any], limit: int = 20) -> list[dict[str, Any]]:
    """Pair and play (home wins every board) until the event says it is complete."""
    outs = []
    for _ in range(limit):
        try:
            out = pairing(data)
        except PairingError:
            return outs
        outs.append(out)
        items = [
            dict(m, result={"home_level": "9", "away_level": "6"}) if "table" in m else m
            for m in out["matches"]
        ]
        data["rounds"].append({"round": out["round"], "matches": items})
    raise AssertionError("the event never completed")


def test_round_robin_of_four_meets_everyone_once_in_three_rounds() -> None:
    outs = _play_out(event(pairs(*"ABCD"), format="round-robin", scoring="challenge"))
    assert len(outs) == 3
    met = [frozenset(p) for out in outs for p in played(out)]
    assert sorted(met, key=sorted) == sorted(
        [frozenset(p) for p in ("AB", "AC", "AD", "BC", "BD", "CD")], key=sorted
    )


def test_round_robin_of_five_gives_each_one_bye() -> None:
    outs = _play_out(event(pairs(*"ABCDE"), format="round-robin"))
    assert len(outs) == 5
    assert sorted(b for out in outs for b in byes(out)) == list("ABCDE")
    assert len({frozenset(p) for out in outs for p in played(out)}) == 10


def test_round_robin_pairs_within_groups_only() -> None:
    entries = [{"id": f"{g}{k}", "group": g} for g in "PQ" for k in range(4)]
    outs = _play_out(event(entries, format="round-robin", scoring="challenge"))
    assert len(outs) == 3
    for out in outs:
        assert all(a[0] == b[0] for a, b in played(out))
        assert [m["table"] for m in out["matches"]] == [1, 2, 3, 4]


# --- knockout ----------------------------------------------------------------------------------


def test_knockout_of_eight_by_rating_in_seeded_places() -> None:
    """Seed 002 art. 25: 1 v 8, 4 v 5, 2 v 7, 3 v 6, so 1 and 2 can meet only in the final."""
    out = pairing(event(rated(8, 7, 6, 5, 4, 3, 2, 1), format="knockout"))
    assert played(out) == [("R1", "R8"), ("R4", "R5"), ("R2", "R7"), ("R3", "R6")]
    assert [m["table"] for m in out["matches"]] == [1, 2, 3, 4]


def test_knockout_of_six_byes_to_the_two_best_then_winners_meet_in_bracket_order() -> None:
    data = event(rated(6, 5, 4, 3, 2, 1), format="knockout")
    first = pairing(data)
    assert first["matches"] == [
        {"bye": "R1"},
        {"table": 1, "home": "R4", "away": "R5"},
        {"bye": "R2"},
        {"table": 2, "home": "R3", "away": "R6"},
    ]
    # the away side wins both: R5 and R6 go through
    data["rounds"].append(
        {
            "round": 1,
            "matches": [{"bye": "R1"}, match(1, "R4", "R5", "L"), {"bye": "R2"}, match(2, "R3", "R6", "L")],
        }
    )
    assert played(pairing(data)) == [("R1", "R5"), ("R2", "R6")]


def test_a_level_knockout_match_needs_a_winner() -> None:
    data = event(rated(2, 1), [[match(1, "R1", "R2", "D")]], format="knockout")
    with pytest.raises(PairingError, match="is level: a knockout match needs a winner"):
        pair_next(parse_event(data))
    data["rounds"][0]["matches"][0]["result"]["winner"] = "away"
    with pytest.raises(PairingError, match="the knockout is complete: R2 won"):
        pair_next(parse_event(data))


def _play_groups(data: dict[str, Any], result: Any) -> None:
    """Pair and play the group stage; ``result(home, away)`` gives each board."""
    for _ in range(3):
        out = pairing(data)
        items = [dict(m, result=result(m["home"], m["away"])) if "table" in m else m for m in out["matches"]]
        data["rounds"].append({"round": out["round"], "matches": items})


def test_seed_004_top_two_of_each_group_cross_groups() -> None:
    """Two groups of four; in each the lower number always wins 9–6, so P1 (9 points), P2 (6),
    P3 (3), P4 (0), and Q alike. The knockout's first round: each group winner against the other
    group's runner-up (seed 004: the top two go through)."""
    entries = [{"id": f"{g}{k}", "group": g} for g in "PQ" for k in (1, 2, 3, 4)]
    data = event(entries, format="knockout", scoring="challenge")
    _play_groups(
        data,
        lambda home, away: (
            {"home_level": "9", "away_level": "6"} if home < away else {"home_level": "6", "away_level": "9"}
        ),
    )
    bracket = pairing(data)
    assert bracket["round"] == 4 and bracket["relaxed"] == []
    assert meetings(bracket) == {frozenset({"P1", "Q2"}), frozenset({"Q1", "P2"})}
    assert [m["table"] for m in bracket["matches"]] == [1, 2]


def test_seed_004_the_best_third_places_fill_the_bracket() -> None:
    """Three groups of three: six go through as winners and runners-up, the bracket holds eight,
    so the two best third-placed entries join. Group P's third drew its two matches (1 + 1 = 2
    points), Q's lost one and drew one (1), R's lost both (0): P3 and Q3 go through."""
    entries = [{"id": f"{g}{k}", "group": g} for g in "PQR" for k in (1, 2, 3)]
    lv = lambda h, a: {"home_level": h, "away_level": a}  # noqa: E731
    results = {
        frozenset({"P1", "P2"}): ("P1", lv("9", "6")),
        frozenset({"P1", "P3"}): ("P1", lv("7", "7")),
        frozenset({"P2", "P3"}): ("P2", lv("7", "7")),
        frozenset({"Q1", "Q2"}): ("Q1", lv("9", "6")),
        frozenset({"Q1", "Q3"}): ("Q1", lv("9", "6")),
        frozenset({"Q2", "Q3"}): ("Q2", lv("7", "7")),
        frozenset({"R1", "R2"}): ("R1", lv("9", "6")),
        frozenset({"R1", "R3"}): ("R1", lv("9", "6")),
        frozenset({"R2", "R3"}): ("R2", lv("9", "6")),
    }

    def result(home: str, away: str) -> dict[str, str]:
        first, board = results[frozenset({home, away})]
        return (
            board if first == home else {"home_level": board["away_level"], "away_level": board["home_level"]}
        )

    data = event(entries, format="knockout", scoring="challenge")
    _play_groups(data, result)
    bracket = pairing(data)
    entered = {e for p in meetings(bracket) for e in p} | set(byes(bracket))
    assert entered == {"P1", "P2", "Q1", "Q2", "R1", "R2", "P3", "Q3"}
    assert bracket["relaxed"] == []
    assert all(len({e[0] for e in pair}) == 2 for pair in meetings(bracket))  # no group meets itself
