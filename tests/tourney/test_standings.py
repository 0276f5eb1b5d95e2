"""Worked examples from the seeds, every expected value worked out by hand from the seeds' rules.

Boards: W home wins (9 v 6), D draw (8 v 8), L home loses (5 v 7); see ``events.py``.
"""

from __future__ import annotations

import random
from typing import Any

from tests.tourney.events import event, match, pairs, teams
from tourney.event import parse_event
from tourney.standings import standings


def rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    return standings(parse_event(data)).to_json()["standings"]


def the_lot(seed: int, ids: list[str]) -> dict[str, int]:
    """The draw as docs/tourney.md describes it: sorted ids shuffled by Random("tourney:SEED:lot")."""
    order = sorted(ids)
    random.Random(f"tourney:{seed}:lot").shuffle(order)
    return {entry: k + 1 for k, entry in enumerate(order)}


# --- seed 001: a team Swiss, zhku scoring ------------------------------------------------------

#: Eight teams of two pairs. G withdraws after round 1; H has the bye in round 2; F forfeits
#: its round-2 match.
SEED_001 = event(
    teams("A", "B", "C", "D", "E", "F", "G")
    + [{"id": "H", "name": "Team H", "unit": "unit H", "pairs": ["H1", "H2"]}],
    [
        [
            match(1, "A", "B", "W", "D"),
            match(2, "C", "D", "W", "W"),
            match(3, "E", "F", "W", "L"),
            match(4, "G", "H", "W", "W"),
        ],
        [
            match(1, "A", "C", "L", "W"),
            match(2, "B", "E", "D", "D"),
            {"table": 3, "home": "D", "away": "F", "result": {"forfeit": "away"}},
            {"bye": "H"},
        ],
    ],
    rounds_planned=6,
)
SEED_001["entries"][6]["withdrawn"] = True


def test_seed_001_points_opponents_points_level_difference_and_order() -> None:
    """Notice 4.4–4.5: a pair's board 2 / 1 / 0 points and +2 / 0 / −2 (a forfeit 0 and −2, so
    its opponent 2 and +2); a team adds its two pairs; order by points, opponents' points (the
    sum of the points of the teams met), level difference.

    Round 1: A 2+1=3 (+2+0) B 0+1=1 (−2), C 4 (+4) D 0 (−4), E 2+0=2 (+2−2=0) F 2 (0), G 4 (+4) H 0 (−4).
    Round 2: A 0+2=2 → 5 (+2), C 2 → 6 (+4), B 1+1 → 3 (−2), E 2 → 4 (0), D wins both boards by
    F's forfeit 4 → 4 (0), F 0 → 2 (−4), H's bye is two won boards: 4 → 4 (0); G did not play.
    Opponents' points: A = B 3 + C 6 = 9, B = A 5 + E 4 = 9, C = D 4 + A 5 = 9, D = C 6 + F 2 = 8,
    E = F 2 + B 3 = 5, F = E 4 + D 4 = 8, G = H 4, H = G 4 (a bye meets nobody).
    Order: C 6; A 5; at 4 points D (opp. 8), E (opp. 5), then G and H (opp. 4 each) by level
    difference, G +4 before H 0; B 3; F 2.
    """
    got = [(r["id"], r["points"], r["opponents_points"], r["level_difference"]) for r in rows(SEED_001)]
    assert got == [
        ("C", 6, 9, 4),
        ("A", 5, 9, 2),
        ("D", 4, 8, 0),
        ("E", 4, 5, 0),
        ("G", 4, 4, 4),
        ("H", 4, 4, 0),
        ("B", 3, 9, -2),
        ("F", 2, 8, -4),
    ]


def test_seed_001_output_fields() -> None:
    out = standings(parse_event(SEED_001)).to_json()
    assert out["after_round"] == 2
    assert out["order"] == ["points", "opponents_points", "level_difference", "lot"]
    h = next(r for r in out["standings"] if r["id"] == "H")
    assert h["rank"] == 6 and h["name"] == "Team H"
    # H lost round 1 and had the bye in round 2: one match played, one round won, one lost
    assert (h["played"], h["won"], h["drawn"], h["lost"], h["byes"]) == (1, 1, 0, 1, 1)
    assert [r["rank"] for r in out["standings"]] == list(range(1, 9))


def test_seed_001_the_lot_breaks_a_full_tie() -> None:
    """Two pairs that drew each other: 1 point, opponents' points 1, level difference 0 each;
    the lot decides (notice 4.5: "抽签决定名次")."""
    for seed in (1, 2, 3, 4, 5, 6):
        data = event(pairs("P", "Q"), [[match(1, "P", "Q", "D")]], seed=seed)
        lot = the_lot(seed, ["P", "Q"])
        got = rows(data)
        assert [(r["points"], r["opponents_points"], r["level_difference"]) for r in got] == [(1, 1, 0)] * 2
        assert [r["id"] for r in got] == sorted(["P", "Q"], key=lambda e: lot[e])
        assert [r["lot"] for r in got] == [1, 2]


def test_only_complete_rounds_count() -> None:
    """Round 2 has a match without a result: the standings are after round 1."""
    data = event(pairs("A", "B", "C", "D"), [[match(1, "A", "B", "W"), match(2, "C", "D", "L")]])
    data["rounds"].append({"round": 2, "matches": [match(1, "A", "D", "W"), match(2, "B", "C")]})
    out = standings(parse_event(data)).to_json()
    assert out["after_round"] == 1
    assert {r["id"]: r["points"] for r in out["standings"]} == {"A": 2, "D": 2, "B": 0, "C": 0}


# --- seed 004: groups of four, challenge scoring -----------------------------------------------


def test_seed_004_head_to_head_before_small_score() -> None:
    """3 / 1 / 0; equal points → the match between them; then small score (level margins).

    P 9–6 Q, R 5–5 S; P 4–8 R, Q 10–7 S; P 7–3 S, Q K–9 R.
    Points: P W L W = 6, Q L W W = 6, R D W L = 4, S D L L = 1.
    P and Q: P beat Q (head-to-head 3 to 0), though Q's small score is better:
    P +3 −4 +4 = +3, Q −3 +3 +4 = +4, R 0 +4 −4 = 0, S 0 −3 −4 = −7.
    """
    lv = lambda h, a: {"home_level": h, "away_level": a}  # noqa: E731
    data = event(
        [{"id": x, "group": "A"} for x in "PQRS"],
        [
            [match(1, "P", "Q", lv("9", "6")), match(2, "R", "S", lv("5", "5"))],
            [match(1, "P", "R", lv("4", "8")), match(2, "Q", "S", lv("10", "7"))],
            [match(1, "P", "S", lv("7", "3")), match(2, "Q", "R", lv("K", "9"))],
        ],
        format="round-robin",
        scoring="challenge",
    )
    out = standings(parse_event(data)).to_json()
    assert out["order"] == ["points", "head_to_head", "small_score", "lot"]
    got = [(r["rank"], r["id"], r["points"], r["head_to_head"], r["small_score"]) for r in out["standings"]]
    assert got == [(1, "P", 6, 3, 3), (2, "Q", 6, 0, 4), (3, "R", 4, 0, 0), (4, "S", 1, 0, -7)]
    assert all(r["group"] == "A" for r in out["standings"])


def test_seed_004_small_score_after_a_drawn_head_to_head() -> None:
    """W 6–6 X, Y 8–4 Z; W J–9 Y, X A–2 Z; Z 7–5 W, Y 10–7 X.
    Points: W D W L = 4, X D W L = 4, Y W L W = 6, Z L L W = 3. W and X drew (1 each);
    small score W 0 +2 −2 = 0, X 0 +12 −3 = +9: X ahead. Y +4 −2 +3 = +5, Z −4 −12 +2 = −14."""
    lv = lambda h, a: {"home_level": h, "away_level": a}  # noqa: E731
    data = event(
        [{"id": x, "group": "B"} for x in "WXYZ"],
        [
            [match(1, "W", "X", lv("6", "6")), match(2, "Y", "Z", lv("8", "4"))],
            [match(1, "W", "Y", lv("J", "9")), match(2, "X", "Z", lv("A", "2"))],
            [match(1, "Z", "W", lv("7", "5")), match(2, "Y", "X", lv("10", "7"))],
        ],
        format="round-robin",
        scoring="challenge",
    )
    got = [(r["id"], r["points"], r["head_to_head"], r["small_score"]) for r in rows(data)]
    assert got == [("Y", 6, 0, 5), ("X", 4, 1, 9), ("W", 4, 1, 0), ("Z", 3, 0, -14)]


def test_seed_004_head_to_head_among_three_level_entries() -> None:
    """A three-way cycle: each of K, L, M beat one of the others and lost to the other; all beat N.
    Points 6 each; head-to-head (points among the three) 3 each; small score decides:
    K 9–6 L (+3), L 9–5 M (+4), M 9–8 K (+1); each beat N 9–6 (+3).
    K +3 −1 +3 = 5, L −3 +4 +3 = 4, M −4 +1 +3 = 0."""
    lv = lambda h, a: {"home_level": h, "away_level": a}  # noqa: E731
    data = event(
        [{"id": x, "group": "C"} for x in "KLMN"],
        [
            [match(1, "K", "L", lv("9", "6")), match(2, "M", "N", lv("9", "6"))],
            [match(1, "L", "M", lv("9", "5")), match(2, "K", "N", lv("9", "6"))],
            [match(1, "M", "K", lv("9", "8")), match(2, "L", "N", lv("9", "6"))],
        ],
        format="round-robin",
        scoring="challenge",
    )
    got = [(r["id"], r["points"], r["head_to_head"], r["small_score"]) for r in rows(data)]
    assert got == [("K", 6, 3, 5), ("L", 6, 3, 4), ("M", 6, 3, 0), ("N", 0, 0, -9)]


def test_groups_rank_within_each_group() -> None:
    data = event(
        [
            {"id": "A1", "group": "A"},
            {"id": "A2", "group": "A"},
            {"id": "B1", "group": "B"},
            {"id": "B2", "group": "B"},
        ],
        [[match(1, "A2", "A1", "W"), match(2, "B1", "B2", "W")]],
        format="round-robin",
        scoring="challenge",
    )
    got = [(r["group"], r["rank"], r["id"], r["points"]) for r in rows(data)]
    assert got == [("A", 1, "A2", 3), ("A", 2, "A1", 0), ("B", 1, "B1", 3), ("B", 2, "B2", 0)]


# --- seed 002 art. 27: national scoring ---------------------------------------------------------


def test_seed_002_points_wins_opponents_points_violations() -> None:
    """Round 1: A beats B, C draws D, E beats F. Round 2: E beats A, C draws F (1 violation
    against C), B draws D.
    Points (2 / 1 / 0): A 2+0 = 2, B 0+1 = 1, C 1+1 = 2, D 1+1 = 2, E 4, F 0+1 = 1.
    Rounds won: A 1, C 0, D 0, E 2, B 0, F 0.
    Opponents' points: A = B 1 + E 4 = 5, B = A 2 + D 2 = 4, C = D 2 + F 1 = 3, D = C 2 + B 1 = 3,
    E = F 1 + A 2 = 3, F = E 4 + C 2 = 6.
    Order: E 4; at 2 points A (1 win) before C and D (no win; opponents' points 3 each; C has one
    violation, D none: D, C); at 1 point F (opponents' points 6) before B (4)."""
    data = event(
        pairs("A", "B", "C", "D", "E", "F"),
        [
            [match(1, "A", "B", "W"), match(2, "C", "D", "D"), match(3, "E", "F", "W")],
            [
                match(1, "E", "A", "W"),
                match(2, "C", "F", {"home_level": "6", "away_level": "6", "violations": {"home": 1}}),
                match(3, "B", "D", "D"),
            ],
        ],
        scoring="national",
    )
    out = standings(parse_event(data)).to_json()
    assert out["order"] == ["points", "wins", "opponents_points", "violations", "win_ratio", "lot"]
    got = [
        (r["id"], r["points"], r["wins"], r["opponents_points"], r["violations"]) for r in out["standings"]
    ]
    assert got == [
        ("E", 4, 2, 3, 0),
        ("A", 2, 1, 5, 0),
        ("D", 2, 0, 3, 0),
        ("C", 2, 0, 3, 1),
        ("F", 1, 0, 6, 0),
        ("B", 1, 0, 4, 0),
    ]


def test_seed_002_win_ratio_counts_boards_played() -> None:
    """X beats Y; Z has the bye. X and Z: 2 points, 1 round won, opponents' points 0 (Y has 0, a
    bye meets nobody), no violations; win ratio X 1/1 = 1.0, Z 0 boards played → 0.0."""
    data = event(pairs("X", "Y", "Z"), [[match(1, "X", "Y", "W"), {"bye": "Z"}]], scoring="national")
    got = [(r["id"], r["points"], r["wins"], r["opponents_points"], r["win_ratio"]) for r in rows(data)]
    assert got == [("X", 2, 1, 0, 1.0), ("Z", 2, 1, 0, 0.0), ("Y", 0, 0, 2, 0.0)]


def test_a_bye_and_a_forfeit_score_as_the_spec_says() -> None:
    """zhku: a bye is a win with +2; a forfeit is 0 and −2 for the side that forfeits, 2 and +2
    for the other; challenge: the bye is 3 points and small score +2."""
    data = event(
        pairs("A", "B", "C"),
        [[{"table": 1, "home": "A", "away": "B", "result": {"forfeit": "home"}}, {"bye": "C"}]],
    )
    got = {r["id"]: (r["points"], r["level_difference"]) for r in rows(data)}
    assert got == {"A": (0, -2), "B": (2, 2), "C": (2, 2)}
    data["scoring"] = "challenge"
    got = {r["id"]: (r["points"], r["small_score"]) for r in rows(data)}
    assert got == {"A": (0, -2), "B": (3, 2), "C": (3, 2)}
