"""Trick winners (seed 002 art. 14–15, seed 004 (9), seed 001 art. 12), scored through score_log."""

from __future__ import annotations

from engine import score_log
from tests.engine.helpers import log, plays


def winners(data: dict) -> list[str]:
    return [t["winner"] for t in score_log(data)["tricks"]]


def test_highest_of_the_led_suit_wins_and_discards_cannot() -> None:
    data = log("national-2deck", "2", "H", "S", plays("S: 9S", "E: KS", "N: AC", "W: QS"))
    assert winners(data) == ["E"]


def test_trump_beats_plain_and_higher_trump_overtrumps_seed002_art15() -> None:
    data = log("national-2deck", "2", "H", "S", plays("S: AS", "E: 3H", "N: 4H", "W: KS"))
    assert winners(data) == ["N"]


def test_equal_cards_first_played_wins_seed002_art14() -> None:
    """相同的牌以先出者为大; off-suit level cards are equal to each other."""
    data = log("national-2deck", "5", "H", "S", plays("S: 3H", "E: 5S", "N: 5D", "W: 5S"))
    assert winners(data) == ["E"]
    data = log("national-2deck", "5", "H", "S", plays("S: AS", "E: AS", "N: 3S", "W: 4S"))
    assert winners(data) == ["S"]


def test_pair_lead_needs_a_pair_to_beat_seed002_art14() -> None:
    """当领出对子…时，非跟出对子…的牌小于领出牌: two different higher cards do not win."""
    data = log("national-2deck", "2", "H", "S", plays("S: 9S 9S", "E: AS KS", "N: 3H 3H", "W: 4S 5S"))
    assert winners(data) == ["N"]
    data = log("national-2deck", "2", "H", "S", plays("S: 9S 9S", "E: AS KS", "N: 3H 4H", "W: 4S 5S"))
    assert winners(data) == ["S"]


def test_tractor_ruff_must_be_a_tractor_seed004_9() -> None:
    """将吃拖拉机须用拖拉机."""
    data = log(
        "national-2deck",
        "2",
        "H",
        "S",
        plays("S: 9S 9S 10S 10S", "E: 3H 3H 6H 6H", "N: 4S 5S 6S 7S", "W: 8C 8C 9C 9C"),
    )
    assert winners(data) == ["S"]
    data = log(
        "national-2deck",
        "2",
        "H",
        "S",
        plays("S: 9S 9S 10S 10S", "E: 3H 3H 4H 4H", "N: 4S 5S 6S 7S", "W: 8C 8C 9C 9C"),
    )
    assert winners(data) == ["E"]


def test_throw_trumped_by_matching_trump_play_and_overtrump_by_its_pair_seed002_art15() -> None:
    """超将吃含有对子的甩牌时，以一对牌大于将吃为超; seed 004: 含有对牌的组合牌按对牌大计."""
    data = log(
        "national-2deck", "2", "H", "S", plays("S: AS AS KS", "E: 3H 3H 4H", "N: 6H 6H 3C", "W: 5H 5H AH")
    )
    # E ruffs with a pair + single; N is not all trump (discard); W's pair 55 beats E's 33
    assert winners(data) == ["W"]


def test_throw_ruff_without_matching_shape_is_a_discard() -> None:
    data = log(
        "national-2deck", "2", "H", "S", plays("S: AS AS KS", "E: 3H 4H 5H", "N: 3C 4C 5C", "W: 6D 7D 8D")
    )
    assert winners(data) == ["S"]


def test_trump_lead_big_joker_wins_over_small() -> None:
    data = log("national-2deck", "2", "H", "S", plays("S: SJ", "E: BJ", "N: 2H", "W: AH"))
    assert winners(data) == ["E"]


def test_no_trump_level_cards_are_trump_and_equal() -> None:
    data = log("challenge-2deck", "7", "NT", "S", plays("S: AS", "E: 7D", "N: 7S", "W: AS"))
    assert winners(data) == ["E"]


def test_points_captured_only_by_defenders() -> None:
    data = log(
        "national-2deck",
        "2",
        "H",
        "S",
        plays("S: 5S", "E: KS", "N: 10S", "W: 3S"),  # E (defender) wins 25
        plays("E: 5C", "N: AC", "W: 10C", "S: 3C"),
    )  # N (dealer side) wins 15
    result = score_log(data)
    assert [t["points"] for t in result["tricks"]] == [25, 15]
    assert result["captured"] == 25
