"""Bottom multipliers, level tables and dealer rotation, value by value from the seeds' tables."""

from __future__ import annotations

import pytest

from engine import score_log
from engine.rules import RULE_SETS
from tests.engine.helpers import plays
from tests.fill import complete


@pytest.mark.parametrize(
    ("rules", "total", "expected"),
    [
        # seed 002 table 2/3, two decks (dealer side's 得分 = 200 − D)
        ("national-2deck", 0, ("dealer", 3)),
        ("national-2deck", 5, ("dealer", 2)),
        ("national-2deck", 35, ("dealer", 2)),
        ("national-2deck", 40, ("dealer", 1)),
        ("national-2deck", 75, ("dealer", 1)),
        ("national-2deck", 80, ("defenders", 0)),
        ("national-2deck", 115, ("defenders", 0)),
        ("national-2deck", 120, ("defenders", 1)),
        ("national-2deck", 160, ("defenders", 2)),
        ("national-2deck", 200, ("defenders", 3)),
        ("national-2deck", -5, ("dealer", 4)),
        ("national-2deck", -40, ("dealer", 4)),
        ("national-2deck", -45, ("dealer", 5)),
        # one deck: 65–80 / 85–95 / 100 / 105–120 for the dealer side
        ("national-1deck", 35, ("dealer", 1)),
        ("national-1deck", 20, ("dealer", 1)),
        ("national-1deck", 15, ("dealer", 2)),
        ("national-1deck", 40, ("defenders", 0)),
        ("national-1deck", 60, ("defenders", 1)),
        ("national-1deck", -20, ("dealer", 4)),
        # three decks: 185–240 / 245–295 / 300 / 305–360
        ("national-3deck", 115, ("dealer", 1)),
        ("national-3deck", 60, ("dealer", 1)),
        ("national-3deck", 55, ("dealer", 2)),
        ("national-3deck", 120, ("defenders", 0)),
        ("national-3deck", 180, ("defenders", 1)),
        ("national-3deck", -60, ("dealer", 4)),
        # seed 001 table 2
        ("zhku-3deck", 115, ("dealer", 1)),
        ("zhku-3deck", 90, ("dealer", 1)),
        ("zhku-3deck", 85, ("dealer", 2)),
        ("zhku-3deck", 25, ("dealer", 4)),
        ("zhku-3deck", 0, ("dealer", 4)),
        ("zhku-3deck", -5, ("dealer", 5)),
        ("zhku-3deck", -25, ("dealer", 5)),
        ("zhku-3deck", 120, ("defenders", 1)),
        ("zhku-3deck", 145, ("defenders", 1)),
        ("zhku-3deck", 150, ("defenders", 2)),
        ("zhku-3deck", 300, ("defenders", 7)),
        # seed 004: 80-point standard, 40 per level
        ("challenge-2deck", 80, ("defenders", 0)),
        ("challenge-2deck", 75, ("dealer", 1)),
    ],
)
def test_level_tables(rules: str, total: int, expected: tuple[str, int]) -> None:
    assert RULE_SETS[rules].levels.outcome(total) == expected


def finished(rules: str, tricks: list[dict], bottom: list[str]) -> dict:
    """A whole finished deal whose last tricks are ``tricks`` (filler tricks the dealer wins before
    them, the bottom padded with cards worth nothing: ``tests/fill.py``)."""
    short = {"rules": rules, "level": "2", "trump": "H", "dealer": "S", "bottom": bottom, "tricks": tricks}
    return complete(short)


@pytest.mark.parametrize(
    ("rules", "lead", "follows", "multiplier"),
    [
        ("national-2deck", "AS", ("3S", "4S", "5S"), 2),
        ("national-2deck", "AS AS", ("3S 4S", "5S 6S", "7S 8S"), 4),
        ("national-2deck", "KS KS QS QS", ("3S 4S 5S 6S", "7S 8S 9S 10S", "3C 4C 5C 6C"), 6),
        (
            "national-2deck",
            "KS KS QS QS JS JS",
            ("3S 4S 5S 6S 7S 8S", "3C 4C 5C 6C 7C 8C", "3D 4D 5D 6D 7D 8D"),
            8,
        ),
        ("national-2deck", "AS KS", ("3S 4S", "5S 6S", "7S 8S"), 3),
        ("national-3deck", "AS AS", ("3S 4S", "5S 6S", "7S 8S"), 3),
        ("national-3deck", "AS AS AS", ("3S 4S 5S", "6S 7S 8S", "9S 10S JS"), 4),
        ("national-3deck", "AS AS KS KS", ("3S 4S 5S 6S", "7S 8S 9S 10S", "3C 4C 5C 6C"), 5),
        (
            "national-3deck",
            "AS AS AS KS KS KS",
            ("3S 4S 5S 6S 7S 8S", "3C 4C 5C 6C 7C 8C", "3D 4D 5D 6D 7D 8D"),
            6,
        ),
        ("zhku-3deck", "AS AS KS", ("3S 4S 5S", "6S 7S 8S", "9S 10S JS"), 5),  # pair 3 + single 2
        ("challenge-2deck", "KS KS QS QS", ("3S 4S 5S 6S", "7S 8S 9S 10S", "3C 4C 5C 6C"), 8),
        ("challenge-2deck", "AS AS KS", ("3S 4S 5S", "6S 7S 8S", "9S 10S JS"), 4),
        ("challenge-2deck", "AS KS", ("3S 4S", "5S 6S", "7S 8S"), 3),
    ],
)
def test_bottom_multiplier_by_last_lead_shape(
    rules: str, lead: str, follows: tuple[str, str, str], multiplier: int
) -> None:
    """Seed 002 art. 17 table 1; seed 001 table 1; seed 004 (11). E (defender) leads and wins."""
    trick = plays(f"E: {lead}", f"N: {follows[0]}", f"W: {follows[1]}", f"S: {follows[2]}")
    data = finished(rules, [trick], ["5H", "5H", "QH", "QH", "9H", "9H"])
    result = score_log(data)
    assert result["tricks"][-1]["winner"] == "E"
    assert result["bottom"] == {"points": 10, "multiplier": multiplier, "awarded": 10 * multiplier}


def test_bottom_kept_by_dealer_side_awards_nothing() -> None:
    trick = plays("S: AS", "E: 3S", "N: 4S", "W: 5S")
    result = score_log(finished("national-2deck", [trick], ["5D", "5D", "QC", "QC", "3C", "3C", "4C", "4C"]))
    assert result["bottom"] == {"points": 10, "multiplier": 0, "awarded": 0}


def test_outcome_and_next_dealer() -> None:
    """Seed 002 art. 19–20: dealer side up → partner deals; defenders take over → dealer's 下家."""
    dealer_wins = score_log(finished("national-2deck", [plays("S: AS", "E: 3S", "N: 4S", "W: 5S")], []))
    assert dealer_wins["outcome"] == {"side": "dealer", "levels": 3, "next_dealer": "N"}
    trick = plays("E: AS", "N: 3S", "W: 4S", "S: 5S")
    defenders = score_log(
        finished("national-2deck", [trick], ["KD", "KD", "KC", "KC", "10C", "10C", "10D", "10D"])
    )
    # 80 bottom points × 2 (single) = 160 + 5 captured = 165 → defenders up ⌊(165 − 80)/40⌋ = 2
    assert defenders["defender_total"] == 165
    assert defenders["outcome"] == {"side": "defenders", "levels": 2, "next_dealer": "E"}


def test_referee_ruling_points_enter_the_total() -> None:
    data = finished("national-2deck", [plays("S: AS", "E: 3S", "N: 4S", "W: 5S")], [])
    data["rulings"] = [{"seat": "N", "kind": "revoke", "points": 40}]
    result = score_log(data)
    assert result["defender_total"] == 40 and result["outcome"]["side"] == "dealer"
    data["rulings"] = [{"seat": "E", "kind": "revoke", "points": 20}]
    assert score_log(data)["defender_total"] == -20


def test_zhku_ruling_levels_and_deal_go_to_non_offending_side_seed001_art18() -> None:
    data = finished("zhku-3deck", [plays("S: AS", "E: 3S", "N: 4S", "W: 5S")], [])
    data["rulings"] = [{"seat": "N", "kind": "revoke", "levels": 1, "deals_next": True}]
    out = score_log(data)["outcome"]
    assert out["ruling_levels"] == {"EW": 1} and out["next_dealer"] == "E"
