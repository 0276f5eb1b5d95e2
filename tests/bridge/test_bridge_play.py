"""Bridge play followed from the log: trick winners, revokes proven by the table's own plays and law
64's transfers (1997), claims, unknown cards, and the logs refused. Expected values are worked by
hand here or computed by the test's own simple rules (``_winner``), never by the code under test."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge import duplicate_score, parse_contract, score_log
from tests.bridge.helpers import CLOCKWISE, as_log, log, play, random_boards, suit_of


def test_winners_follow_the_suit_led_and_trumps() -> None:
    out = score_log(
        log(
            "4H", "S",
            "W:KD N:2D E:5D S:AD",  # S wins with the ace
            "S:3C W:QC N:4H E:KC",  # N ruffs
            "N:2S E:AS S:3S W:4S",  # E wins the suit led
        )
    )  # fmt: skip
    assert [(t["leader"], t["winner"]) for t in out["tricks"]] == [("W", "S"), ("S", "N"), ("N", "E")]
    assert out["declarer_tricks"] == 2 and out["violations"] == [] and "score" not in out  # not finished
    assert out["dealer"] == "N" and out["vulnerable"] == "none"  # board 1


REVOKE_CASES = {
    # E ruffs a club while holding one (a trump contract), wins the trick; EW win a later one: 2
    "offender won it, side won later": (
        ["W:2C N:3C E:2S S:4C", "E:KH S:2H W:3H N:4H", "E:5C S:6C W:7C N:8C"],
        {"seat": "E", "trick": 1, "proven_at": 3, "established": True, "transferred": 2},
    ),
    # as before, but NS win every later trick: the revoke trick alone
    "offender won it, nothing later": (
        ["W:2C N:3C E:2S S:4C", "E:2H S:AH W:3H N:4H", "S:6C W:7C N:8C E:5C"],
        {"seat": "E", "trick": 1, "proven_at": 3, "established": True, "transferred": 1},
    ),
    # E discards while holding a club; partner W wins the trick: one trick
    "partner won it": (
        ["W:AC N:3C E:2D S:4C", "W:2H N:AH E:3H S:4H", "N:8C E:5C S:6C W:7C"],
        {"seat": "E", "trick": 1, "proven_at": 3, "established": True, "transferred": 1},
    ),
    # E discards while holding a club; NS win that trick and every later one: nothing to transfer
    "offending side won nothing": (
        ["W:2C N:AC E:2D S:4C", "N:AH E:3H S:4H W:2H", "N:8C E:5C S:6C W:7C"],
        {"seat": "E", "trick": 1, "proven_at": 3, "established": True, "transferred": 0},
    ),
    # declarer S discards while holding a heart; EW win the trick, NS a later one: one trick to EW
    "declarer revokes": (
        ["W:AH N:2H E:3H S:2D", "W:5D N:AD E:6D S:7D", "N:9H E:QH S:4H W:8H"],
        {"seat": "S", "trick": 1, "proven_at": 3, "established": True, "transferred": 1},
    ),
}


@pytest.mark.parametrize("case", list(REVOKE_CASES))
def test_a_revoke_the_plays_prove_and_law_64s_transfer(case: str) -> None:
    tricks, expected = REVOKE_CASES[case]
    (v,) = score_log(log("4S", "S", *tricks))["violations"]
    assert {k: v[k] for k in expected} == expected
    assert v["kind"] == "revoke" and len(v["evidence"]) == 2


def test_a_second_revoke_in_the_same_suit_by_the_same_player_transfers_nothing() -> None:
    out = score_log(
        log(
            "4S", "S",
            "W:AC N:3C E:2D S:4C",  # E revokes (W wins: one trick)
            "W:KC N:5C E:3D S:6C",  # E revokes again in clubs
            "W:2H N:AH E:3H S:4H",
            "N:8C E:7C S:9C W:10C",  # E's club proves both
        )
    )  # fmt: skip
    first, second = out["violations"]
    assert (first["trick"], first["transferred"]) == (1, 1)
    assert (second["trick"], second["proven_at"], second["transferred"]) == (2, 4, 0)


def test_dummys_revoke_is_proven_by_its_cards_as_laid_and_transfers_nothing() -> None:
    dummy = ["3C", "2D", "AS", "KS", "QS", "JS", "10S", "9S", "8S", "7S", "6S", "5S", "4S"]
    one = score_log(log("4S", "S", "W:2C N:2D E:5C S:4C", dummy=dummy))
    (v,) = one["violations"]
    assert (v["seat"], v["trick"], v["proven_at"], v["established"], v["transferred"]) == (
        "N",
        1,
        1,
        False,
        0,
    )
    two = score_log(log("4S", "S", "W:2C N:2D E:5C S:4C", "E:AH S:2H W:3H N:3C", dummy=dummy))
    assert two["violations"][0]["established"] is True and two["violations"][0]["transferred"] == 0


def test_a_player_who_could_not_follow_has_not_revoked() -> None:
    out = score_log(log("3NT", "S", "W:2C N:3C E:2D S:4C", "S:AH W:3H N:4H E:5H", "S:KH W:6H N:7H E:8H"))
    assert out["violations"] == []


UNKNOWN_CASES = [
    # E's discard may have been a club
    (["W:2C N:3C E:?? S:4C", "E:KH S:2H W:3H N:4H", "E:5C S:6C W:7C N:8C"], []),
    # E's proof is not named
    (["W:2C N:3C E:2D S:4C", "S:KH W:2H N:3H E:4H", "S:7C W:6C N:8C E:??"], []),
    # the suit led is not known
    (["W:?? N:3C E:2D S:4C", "S:KH W:2H N:3H E:4H", "S:6C W:7C N:8C E:5C"], []),
    # E's card is a diamond, rank unknown: surely no club; its club later proves the revoke
    (["W:2C N:3C E:?D S:4C", "S:KH W:2H N:3H E:4H", "S:6C W:7C N:8C E:5C"], [("E", 1, 3)]),
]


@pytest.mark.parametrize(("tricks", "expected"), UNKNOWN_CASES)
def test_a_revoke_is_reported_only_when_every_completion_of_the_unknowns_has_it(
    tricks: list[str], expected: list[tuple[str, int, int]]
) -> None:
    out = score_log(log("3NT", "S", *tricks))
    assert [(v["seat"], v["trick"], v["proven_at"]) for v in out["violations"]] == expected
    assert out["unknown"] == 1


def test_a_winner_an_unknown_card_leaves_open_is_null_until_the_next_lead_settles_it() -> None:
    open_ = score_log(log("3NT", "S", "W:2C N:?? E:3C S:4C"))
    assert open_["tricks"][0]["winner"] is None and open_["tricks"][0]["winner_possible"] == ["N", "S"]
    assert open_["declarer_tricks"] == 1  # N or S: declarer's side either way
    settled = score_log(log("3NT", "S", "W:2C N:?? E:?? S:4C", "S:AH W:2H N:3H E:4H"))
    assert settled["tricks"][0]["winner"] == "S"
    ew = score_log(log("3NT", "S", "W:2C N:3C E:?? S:4C"))
    assert ew["declarer_tricks"] is None and ew["declarer_tricks_range"] == [0, 1]


@settings(max_examples=60, deadline=None)
@given(**random_boards(32))
def test_random_legal_deals_are_scored_without_violations(
    seed: int, level: int, strain: str, doubled: str, declarer: str, board: int
) -> None:
    contract = f"{level}{strain}{doubled}"
    tricks, winners, _ = play(random.Random(seed), contract, declarer)
    out = score_log(as_log(contract, declarer, tricks, board))
    assert [t["winner"] for t in out["tricks"]] == winners
    side = {declarer, CLOCKWISE[(CLOCKWISE.index(declarer) + 2) % 4]}
    taken = sum(w in side for w in winners)
    assert out["declarer_tricks"] == out["adjusted_tricks"] == taken
    assert out["result"] == taken - 6 - level and out["violations"] == [] and out["unknown"] == 0
    ns = declarer in "NS"
    vulnerable = out["vulnerable"] in ("both", "NS" if ns else "EW")
    score = duplicate_score(parse_contract(contract), vulnerable, taken)
    assert out["score"] == ({"NS": score, "EW": -score} if ns else {"NS": -score, "EW": score})


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), trick=st.integers(0, 11), follower=st.integers(1, 3))
def test_a_planted_revoke_is_found_where_it_was_made(seed: int, trick: int, follower: int) -> None:
    tricks, _, planted = play(random.Random(seed), "4S", "S", plant=(trick, follower))
    out = score_log(as_log("4S", "S", tricks, 1))
    if planted is None:  # the follower could not revoke there (void, or nothing but the suit)
        assert out["violations"] == []
        return
    seat, at = planted
    led = suit_of(tricks[at - 1][0][1])
    proof = next(k + 1 for k in range(at, 13) for s, c in tricks[k] if s == seat and suit_of(c) == led)
    first = out["violations"][0]
    assert (first["seat"], first["trick"], first["proven_at"]) == (seat, at, proof)
    assert first["established"] is (at != 12)
    assert len(out["violations"]) == 1
    if at == 12:
        assert first["transferred"] == 0


def test_a_claim_ends_theplay() -> None:
    out = score_log(
        log("3NT", "S", "W:2C N:AC E:3C S:4C", "N:AH E:2H S:3H W:4H",
            claim={"declarer_tricks": 9, "after_trick": 2}, finished=True, board=2)
    )  # fmt: skip
    assert out["declarer_tricks"] == 9 and out["result"] == 0
    assert out["score"] == {"NS": 600, "EW": -600}  # board 2: N-S vulnerable


def test_a_finished_deal_names_the_card_its_inventory_leaves_for_an_unknown() -> None:
    tricks, winners, _ = play(random.Random(7), "3NT", "N")
    k, i = 5, 2
    seat, card = tricks[k][i]
    tricks[k][i] = (seat, "??")
    out = score_log(as_log("3NT", "N", tricks, 1))
    assert out["resolved"] == [{"trick": k + 1, "seat": seat, "index": 0, "card": card}]
    assert out["unknown"] == 0 and [t["winner"] for t in out["tricks"]] == winners
