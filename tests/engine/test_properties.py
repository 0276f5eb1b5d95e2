"""Property tests over simulated deals (hypothesis): legal games report nothing, points add up, an
injected violation is reported exactly once with the right seat, trick and ``proven_at``.

The expected ``proven_at`` of an injected revoke is computed here from first principles (the
first later trick in which the offender plays a card of the led suit class), not by the engine.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import RULE_SET_IDS, score_log
from engine.cards import parse_card
from engine.sim import simulate_deal

RULES = st.sampled_from(RULE_SET_IDS)
SEEDS = st.integers(min_value=0, max_value=2**31)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def is_trump(name: str, level: str, trump: str) -> bool:
    card = parse_card(name)
    rank_text = str(card)[:-1]
    return card.is_joker or rank_text == level or card.suit == trump


def suit_class(name: str, level: str, trump: str) -> str:
    return "T" if is_trump(name, level, trump) else str(parse_card(name).suit)


@SETTINGS
@given(rules=RULES, seed=SEEDS)
def test_legal_games_report_no_violation(rules: str, seed: int) -> None:
    log = simulate_deal(rules, seed)
    assert score_log(log)["violations"] == []


@SETTINGS
@given(rules=RULES, seed=SEEDS)
def test_all_points_sum_to_100_per_deck(rules: str, seed: int) -> None:
    log = simulate_deal(rules, seed)
    result = score_log(log)
    decks = {"national-1deck": 1, "national-2deck": 2, "challenge-2deck": 2}.get(rules, 3)
    in_tricks = sum(t["points"] for t in result["tricks"])
    assert in_tricks + result["bottom"]["points"] == 100 * decks
    # every card of every deck was dealt exactly once
    cards = [c for t in log["tricks"] for p in t["plays"] for c in p[1]] + log["bottom"]
    assert len(cards) == 54 * decks


@SETTINGS
@given(rules=RULES, seed=SEEDS)
def test_injected_revoke_reported_once_when_proven(rules: str, seed: int) -> None:
    log = simulate_deal(rules, seed, inject_revoke=True)
    injected = log["injected"]
    violations = score_log(log)["violations"]
    if not injected:
        assert violations == []
        return
    (inj,) = injected
    t = inj["trick"]
    trick = log["tricks"][t - 1]
    lead_cls = suit_class(trick["plays"][0][1][0], log["level"], log["trump"])
    expected_proof = next(
        k
        for k in range(t + 1, len(log["tricks"]) + 1)
        for seat, cards in log["tricks"][k - 1]["plays"]
        if seat == inj["seat"] and any(suit_class(c, log["level"], log["trump"]) == lead_cls for c in cards)
    )
    assert [(v["kind"], v["seat"], v["trick"], v["proven_at"]) for v in violations] == [
        ("revoke", inj["seat"], t, expected_proof)
    ]


@SETTINGS
@given(rules=RULES, seed=SEEDS)
def test_injected_failed_throw_reported_once(rules: str, seed: int) -> None:
    log = simulate_deal(rules, seed, inject_failed_throw=True)
    violations = score_log(log)["violations"]
    expected = [("failed_throw", i["seat"], i["trick"]) for i in log["injected"]]
    assert [(v["kind"], v["seat"], v["trick"]) for v in violations] == expected
    for v in violations:
        assert v["proven_at"] >= v["trick"]


@settings(max_examples=25, deadline=None)
@given(rules=RULES, seed=SEEDS, cut=st.integers(min_value=1, max_value=40))
def test_evidence_is_monotone_a_prefix_never_proves_more(rules: str, seed: int, cut: int) -> None:
    """A log cut after trick k reports exactly the violations proven by trick k."""
    log = simulate_deal(rules, seed, inject_revoke=True)
    full = score_log(log)["violations"]
    k = min(cut, len(log["tricks"]))
    part = dict(log, tricks=log["tricks"][:k], finished=False)
    got = score_log(part)["violations"]
    assert [(v["kind"], v["seat"], v["trick"], v["proven_at"]) for v in got] == [
        (v["kind"], v["seat"], v["trick"], v["proven_at"]) for v in full if v["proven_at"] <= k
    ]
