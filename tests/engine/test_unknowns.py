"""Unknown cards (deal-log.md, "Unknown cards"): hiding cards of a real deal (the simulator's, with
revokes and failed throws injected) may open values, never change one printed as known, never add a
violation, and every bound holds the true value; the inventory settles what it can."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import DealLogError, score_log
from engine.cards import UnknownCard, UnknownCardError, parse_any, parse_card
from engine.sim import simulate_deal

RULES = ["national-1deck", "national-2deck", "national-3deck", "zhku-3deck", "challenge-2deck"]


def hide(card: str, how: int) -> str:
    """What a camera might write of ``card``: nothing, its rank, its suit, or 'a joker'."""
    c = parse_card(card)
    if c.is_joker:
        return "?J" if how % 2 else "??"
    return ["??", str(c)[:-1] + "?", "?" + str(c)[-1]][how % 3]


def places(log: dict[str, Any]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = [
        (t, p, i)
        for t, trick in enumerate(log["tricks"])
        for p, play in enumerate(trick["plays"])
        for i in range(len(play[1]))
    ]
    out += [("bottom", i) for i in range(len(log.get("bottom") or []))]
    return out


def hidden(
    log: dict[str, Any], picks: list[tuple[int, int]]
) -> tuple[dict[str, Any], dict[tuple[Any, ...], str]]:
    """``log`` with the cards at the picked places hidden; the hidden cards by place."""
    out = copy.deepcopy(log)
    spots = places(out)
    truth: dict[tuple[Any, ...], str] = {}
    for index, how in picks:
        where = spots[index % len(spots)]
        if where in truth:
            continue
        if where[0] == "bottom":
            cards = out["bottom"]
            slot = where[1]
        else:
            t, p, slot = where
            cards = out["tricks"][t]["plays"][p][1]
            if len(out["tricks"][t]["plays"][p]) > 2:  # a declared split names the cards: drop it
                del out["tricks"][t]["plays"][p][2:]
        truth[where] = cards[slot]
        cards[slot] = hide(cards[slot], how)
    return out, truth


def contains(bounds: list[int], value: int) -> bool:
    return bounds[0] <= value <= bounds[1]


def check_against(full: dict[str, Any], part: dict[str, Any], *, finished: bool) -> None:
    """Known values equal the truth, bounds hold it, no violation is added."""
    for whole, seen in zip(full["tricks"], part["tricks"], strict=True):
        if seen.get("winner") is not None:
            assert seen["winner"] == whole["winner"]
        if seen["points"] is not None:
            assert seen["points"] == whole["points"]
        else:
            assert contains(seen["points_range"], whole["points"])
    for key in ("captured", "defender_total"):
        if part[key] is not None:
            assert part[key] == full[key], key
        else:
            assert contains(part[f"{key}_range"], full[key]), key
    if finished:
        if part["outcome"] is not None:
            assert part["outcome"] == full["outcome"]
        else:
            assert full["outcome"] in part["outcome_possible"]
        for key in ("points", "awarded"):
            if part["bottom"][key] is not None:
                assert part["bottom"][key] == full["bottom"][key]
            else:
                assert contains(part["bottom"][f"{key}_range"], full["bottom"][key])
        if part["bottom"]["multiplier"] is not None:
            assert part["bottom"]["multiplier"] == full["bottom"]["multiplier"]
        else:
            assert full["bottom"]["multiplier"] in part["bottom"]["multiplier_possible"]
    proven = {(v["kind"], v["seat"], v["trick"]) for v in full["violations"]}
    assert {(v["kind"], v["seat"], v["trick"]) for v in part["violations"]} <= proven


deals = st.builds(
    lambda rules, seed, inject: simulate_deal(
        rules, seed=seed, inject_revoke=inject == "revoke", inject_failed_throw=inject == "throw"
    ),
    st.sampled_from(RULES),
    st.integers(0, 10_000),
    st.sampled_from(["none", "revoke", "throw"]),
)
picks = st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 5)), min_size=1, max_size=8)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log=deals, picks=picks, cut=st.one_of(st.none(), st.integers(1, 30)))
def test_hiding_cards_opens_values_but_never_changes_or_adds_one(log, picks, cut):
    if cut is not None and cut < len(log["tricks"]):  # a deal still going on: unfinished
        log = dict(log, tricks=log["tricks"][:cut], finished=False)
        log.pop("bottom", None)
    full = score_log(log)
    part_log, truth = hidden(log, picks)
    part = score_log(part_log)
    check_against(full, part, finished=log["finished"])
    assert part["unknown"] <= len(truth)
    for r in part.get("resolved", []):
        where = ("bottom", r["index"]) if r.get("bottom") else (r["trick"] - 1, None, r["index"])
        matches = [card for w, card in truth.items() if w[0] == where[0] and w[-1] == r["index"]]
        assert r["card"] in matches


@settings(max_examples=40, deadline=None)
@given(log=deals, pick=st.integers(0, 10**6), how=st.integers(0, 5))
def test_the_inventory_recovers_one_hidden_card_of_a_finished_deal(log, pick, how):
    full = score_log(log)
    part_log, truth = hidden(log, [(pick, how)])
    part = score_log(part_log)
    ((where, card),) = truth.items()
    assert part["unknown"] == 0 and len(part["resolved"]) == 1
    r = part["resolved"][0]
    assert r["card"] == card and r["index"] == where[-1]
    if where[0] != "bottom":
        assert r["trick"] == where[0] + 1
    # A card the inventory settles counts as named for every value (violations aside: never proof).
    strip = lambda out: {k: v for k, v in out.items() if k not in ("violations", "resolved")}  # noqa: E731
    assert strip(part) == strip(full)


def test_an_unknown_card_is_never_the_proof_of_a_revoke():
    """E discards 7C on a heart lead and later shows a heart: a revoke; written '?H' or settled by
    the inventory, the later heart proves nothing."""
    log = {
        "rules": "national-2deck",
        "level": "2",
        "trump": "S",
        "dealer": "S",
        "tricks": [
            {"plays": [["S", ["6H"]], ["E", ["7C"]], ["N", ["AH"]], ["W", ["8H"]]]},
            {"plays": [["N", ["9H"]], ["W", ["JH"]], ["S", ["QH"]], ["E", ["7H"]]]},
        ],
    }
    assert [v["kind"] for v in score_log(log)["violations"]] == ["revoke"]
    for written in ("?H", "7?", "??"):
        part = copy.deepcopy(log)
        part["tricks"][1]["plays"][3][1] = [written]
        assert score_log(part)["violations"] == [], written
    # E's discard unknown: it could have been a heart, so nothing is proven either.
    part = copy.deepcopy(log)
    part["tricks"][0]["plays"][1][1] = ["??"]
    assert score_log(part)["violations"] == []
    # ... but '?C' cannot be a heart: still a revoke.
    part["tricks"][0]["plays"][1][1] = ["?C"]
    assert [(v["kind"], v["seat"], v["trick"]) for v in score_log(part)["violations"]] == [("revoke", "E", 1)]


def test_a_play_keeps_its_length_and_card_count_still_applies():
    log = {
        "rules": "national-2deck",
        "level": "2",
        "trump": "S",
        "dealer": "S",
        "tricks": [{"plays": [["S", ["AH", "AH"]], ["E", ["QH", "??"]], ["N", ["??"]], ["W", ["3H", "4H"]]]}],
    }
    out = score_log(log)
    assert [(v["kind"], v["seat"]) for v in out["violations"]] == [("card_count", "N")]
    assert out["unknown"] == 2


def test_the_order_of_leaders_settles_a_winner_and_refuses_an_impossible_one():
    """E's unknown card must have won trick 1 (E leads trick 2): the winner is printed, and the
    points are known when every card that wins is worth the same; if no card E's could be wins,
    the log is refused, naming the trick."""
    log = {
        "rules": "national-2deck",
        "level": "2",
        "trump": "NT",
        "dealer": "S",
        "tricks": [
            {"plays": [["S", ["KH"]], ["E", ["?H"]], ["N", ["3H"]], ["W", ["4H"]]]},
            {"plays": [["E", ["5D"]]]},
        ],
    }
    out = score_log(log)
    # Only AH or 2H (a level card: trump) beats KH; both are worth nothing: the points are known.
    assert out["tricks"][0]["winner"] == "E" and out["tricks"][0]["points"] == 10
    log["tricks"][0]["plays"][1][1] = ["Q?"]  # in no-trump a queen never takes KH
    with pytest.raises(DealLogError, match=r"trick 2, play 1 \(E\): E led, but no reading"):
        score_log(log)


def test_parse_and_print_unknown_cards():
    assert [str(parse_any(t)) for t in ("??", "j?", "T?", "?h", "?j", "10?")] == [
        "??",
        "J?",
        "10?",
        "?H",
        "?J",
        "10?",
    ]
    assert isinstance(parse_any("?S"), UnknownCard) and parse_any("QS") == parse_card("QS")
    for bad in ("?X", "Z?", "???", "?", "J??"):
        with pytest.raises(UnknownCardError):
            parse_any(bad)
    log = {
        "rules": "national-1deck",
        "level": "2",
        "trump": "NT",
        "dealer": "S",
        "tricks": [{"plays": [["S", ["??"]], ["E", ["j?"]]]}],
    }
    from engine.deal_log import parse_deal_log

    assert parse_deal_log(log).to_json()["tricks"] == [{"plays": [["S", ["??"]], ["E", ["J?"]]]}]
    assert json.dumps(score_log(log))  # JSON-ready


def test_too_many_unknown_jokers_are_refused():
    log = {
        "rules": "national-1deck",
        "level": "2",
        "trump": "NT",
        "dealer": "S",
        "tricks": [{"plays": [["S", ["BJ"]], ["E", ["?J"]], ["N", ["?J"]], ["W", ["3H"]]]}],
    }
    with pytest.raises(DealLogError, match="cannot all be cards the log leaves over"):
        score_log(log)


def test_a_leader_whose_win_needs_points_the_deck_does_not_leave_is_refused() -> None:
    """A finished two-deck log as the table service decoded it from a reading with two misread cards
    (tests/engine/cases). N's and S's cards in trick 20 are its only unknown cards, so they are the
    two cards the deal leaves over, 8S and 10C (10 points). E leads trick 21, so they must let E's
    6C win trick 20 (clubs trump), which only readings without points do. No completion fits both:
    the engine refuses the leader (what the table service repairs) instead of failing an assertion."""
    import json
    from pathlib import Path

    from engine.deal_log import LeaderError

    log = json.loads((Path(__file__).parent / "cases" / "leader_needs_points_left_over.log.json").read_text())
    with pytest.raises(
        LeaderError, match="trick 21, play 1 \\(E\\).*cards the deal leaves over cannot"
    ) as err:
        score_log(log)
    assert err.value.trick == 21
