"""The evidence model: violations are reported once, when (and only when) the log proves them."""

from __future__ import annotations

from engine import score_log
from tests.engine.helpers import log, plays


def violations(data: dict) -> list[tuple[str, str, int, int]]:
    return [(v["kind"], v["seat"], v["trick"], v["proven_at"]) for v in score_log(data)["violations"]]


def test_suit_revoke_is_proven_when_the_withheld_suit_appears_seed001_art18() -> None:
    """E discards a club on a spade lead, then plays a spade in trick 3: proven at trick 3."""
    data = log(
        "national-2deck",
        "2",
        "H",
        "S",
        plays("S: AS", "E: 3C", "N: 4S", "W: 5S"),
        plays("S: AD", "E: 3D", "N: 4D", "W: 5D"),
        plays("S: KC", "E: 6S", "N: 4C", "W: 5C"),
    )
    assert violations(data) == [("revoke", "E", 1, 3)]


def test_no_violation_without_evidence() -> None:
    data = log(
        "national-2deck",
        "2",
        "H",
        "S",
        plays("S: AS", "E: 3C", "N: 4S", "W: 5S"),
        plays("S: AD", "E: 3D", "N: 4D", "W: 5D"),
    )
    assert violations(data) == []


def test_pair_revoke_proven_by_a_later_pair() -> None:
    """E follows a pair lead with two singles, and later plays 9S 9S: they held a pair at trick 1."""
    data = log(
        "national-2deck",
        "2",
        "H",
        "S",
        plays("S: AS AS", "E: 3S 4S", "N: 5S 5S", "W: 6S 7S"),
        plays("S: AD", "E: 3D", "N: 4D", "W: 5D"),
        plays("S: KS", "E: 9S", "N: 8S", "W: 8S"),
        plays("S: QS", "E: 9S", "N: 10S", "W: JS"),
    )
    assert violations(data) == [("revoke", "E", 1, 4)]


def test_revoke_in_a_trump_lead_and_evidence_from_level_cards() -> None:
    """A level card of another suit is trump: holding it means E could follow a trump lead."""
    data = log(
        "national-2deck",
        "5",
        "H",
        "S",
        plays("S: 3H", "E: 4C", "N: 4H", "W: 6H"),
        plays("W: AC", "S: 3C", "E: 5C", "N: 6C"),
    )
    assert violations(data) == [("revoke", "E", 1, 2)]


def test_card_count_is_its_own_proof() -> None:
    data = log("national-2deck", "2", "H", "S", plays("S: AS AS", "E: 3S", "N: 4S 4D", "W: 5S 6S"))
    assert violations(data) == [("card_count", "E", 1, 1)]


def test_failed_throw_proven_by_a_follower_with_a_higher_pair_seed002_art11() -> None:
    """S throws AS + QS QS; N follows with KS KS: a higher pair than the thrown pair."""
    data = log(
        "national-2deck", "2", "H", "S", plays("S: AS QS QS", "E: 3S 4S 5S", "N: KS KS 6S", "W: 7S 8S 9S")
    )
    assert violations(data) == [("failed_throw", "S", 1, 1)]


def test_failed_throw_proven_later_by_a_higher_single() -> None:
    """S throws AS KS (two singles, the lowest K); W's AS appears in trick 2: proven at 2."""
    data = log(
        "national-2deck",
        "2",
        "H",
        "S",
        plays("S: AS KS", "E: 3S 4S", "N: 5S 6S", "W: 3C 4C"),
        plays("S: AD", "E: 3D", "N: 4D", "W: AS"),
    )
    got = violations(data)
    assert ("failed_throw", "S", 1, 2) in got
    assert ("revoke", "W", 1, 2) in got  # W also discarded clubs while holding a spade


def test_equal_does_not_beat_a_throw() -> None:
    """Equal does not beat: another AS against a thrown AS KS... KS is the lowest single, so only a
    card above K (an ace) beats it; a second K does not."""
    data = log("national-2deck", "2", "H", "S", plays("S: AS KS", "E: KS 4S", "N: 5S 6S", "W: 7S 8S"))
    assert violations(data) == []


def test_throw_of_unbeatable_cards_is_valid() -> None:
    data = log(
        "national-2deck", "2", "H", "S", plays("S: AS AS KS", "E: 3S 4S 5S", "N: KS QS 6S", "W: 7S 8S 9S")
    )
    assert violations(data) == []


def test_higher_tractor_beats_a_thrown_tractor_seed002_art11() -> None:
    data = log(
        "national-2deck",
        "2",
        "H",
        "S",
        plays("S: 9S 9S 10S 10S AS", "E: QS QS JS JS 3S", "N: 3C 4C 5C 6C 7C", "W: 3D 4D 5D 6D 7D"),
    )
    assert ("failed_throw", "S", 1, 1) in violations(data)


def test_each_violation_is_reported_once() -> None:
    data = log(
        "national-2deck",
        "2",
        "H",
        "S",
        plays("S: AS", "E: 3C", "N: 4S", "W: 5S"),
        plays("S: AD", "E: 6S", "N: 4D", "W: 5D"),
        plays("S: KD", "E: 8D", "N: 6D", "W: 7D"),
    )
    assert violations(data) == [("revoke", "E", 1, 2), ("revoke", "E", 2, 3)]
