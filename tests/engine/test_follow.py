"""Follow obligations (seed 002 art. 13, seed 001 art. 11.2), checked with full hands through the
simulator's check/can/do API and through the evidence model."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.cards import parse_cards
from engine.context import trump_context
from engine.rules import get_rule_set
from engine.seats import Seat
from engine.sim import DealState, IllegalPlayError


def state(rules: str, level: int, trump: str | None, lead: str, follower_hand: str) -> DealState:
    """S has led ``lead``; E (to play) holds ``follower_hand``."""
    rs = get_rule_set(rules)
    ctx = trump_context(level, trump)
    lead_cards = parse_cards(lead.split())
    hands = {
        Seat.S: Counter(c.code for c in lead_cards),
        Seat.E: Counter(c.code for c in parse_cards(follower_hand.split())),
        Seat.N: Counter(),
        Seat.W: Counter(),
    }
    st = DealState(rs, ctx, Seat.S, hands, ())
    st.play(Seat.S, lead_cards, check=False)
    return st


def legal(st: DealState, cards: str) -> bool:
    return st.can_play(Seat.E, parse_cards(cards.split()))


def test_single_lead_must_follow_suit_seed002_art13() -> None:
    st = state("national-2deck", 2, "H", "AS", "3S 4C")
    assert legal(st, "3S")
    assert not legal(st, "4C")


def test_void_follower_may_discard_or_ruff() -> None:
    st = state("national-2deck", 2, "H", "AS", "3H 4C")
    assert legal(st, "4C") and legal(st, "3H")


def test_pair_lead_must_be_followed_by_a_pair_seed002_art13() -> None:
    st = state("national-2deck", 2, "H", "AS AS", "9S 9S 3S 4S")
    assert legal(st, "9S 9S")
    assert not legal(st, "3S 4S")


def test_pair_lead_pair_split_from_triple_seed002_art13() -> None:
    """无对子有刻子时应从刻子中拆出对子跟出 (3 decks)."""
    st = state("national-3deck", 2, "H", "AS AS", "9S 9S 9S 3S")
    assert legal(st, "9S 9S")
    assert not legal(st, "9S 3S")


def test_pair_lead_without_pairs_any_two_of_the_suit_then_discards() -> None:
    st = state("national-2deck", 2, "H", "AS AS", "9S 3S 4C")
    assert legal(st, "9S 3S")
    assert not legal(st, "9S 4C")
    st = state("national-2deck", 2, "H", "AS AS", "9S 4C 5C")
    assert legal(st, "9S 4C") and not legal(st, "4C 5C")


def test_triple_lead_fallback_triple_then_pair_plus_single_seed002_art13() -> None:
    """无刻子时跟一对子加一单张."""
    st = state("national-3deck", 2, "H", "AS AS AS", "9S 9S 9S 3S 3S 4S")
    assert legal(st, "9S 9S 9S") and not legal(st, "3S 3S 4S")
    st = state("national-3deck", 2, "H", "AS AS AS", "9S 9S 3S 4S 5S")
    assert legal(st, "9S 9S 5S") and not legal(st, "3S 4S 5S")


def test_tractor_lead_fallback_tractor_then_pairs_seed002_art13() -> None:
    """有连对必须跟连对…无连对时跟两个对子，无两个对子时跟一个对子加两个单张."""
    lead = "AS AS KS KS"
    st = state("national-2deck", 2, "H", lead, "9S 9S 10S 10S 5S 5S 3S")
    assert legal(st, "9S 9S 10S 10S")
    assert not legal(st, "9S 9S 5S 5S")
    st = state("national-2deck", 2, "H", lead, "9S 9S 5S 5S 3S 4S")
    assert legal(st, "9S 9S 5S 5S") and not legal(st, "9S 9S 3S 4S")
    st = state("national-2deck", 2, "H", lead, "9S 9S 3S 4S 6S")
    assert legal(st, "9S 9S 3S 6S") and legal(st, "9S 9S 4S 6S")
    assert not legal(st, "3S 4S 6S 9S")


def test_tractor_lead_shorter_tractor_rule_differs_between_rule_sets() -> None:
    """Seed 001 art. 11.2(2) orders 多对拖 before 少对拖 before 对子: against a 3-pair tractor a
    zhku follower holding a 2-pair tractor must play it; seed 002 only asks for pairs."""
    lead = "AS AS KS KS QS QS"
    hand = "7S 7S 8S 8S 10S 10S 4S 4S"
    nat = state("national-3deck", 2, "H", lead, hand)
    assert legal(nat, "7S 7S 10S 10S 4S 4S")
    zhku = state("zhku-3deck", 2, "H", lead, hand)
    assert legal(zhku, "7S 7S 8S 8S 10S 10S")
    assert not legal(zhku, "7S 7S 10S 10S 4S 4S")


def test_triple_tractor_fallback_order_seed002_art13() -> None:
    """连刻 → 两个刻子 → 一刻一对一单 → 一刻三单 → 连对加两张 → 两个对子加两张 → 一对加四张."""
    lead = "AS AS AS KS KS KS"
    # two triples (not adjacent) beat anything else
    st = state("national-3deck", 2, "H", lead, "9S 9S 9S 5S 5S 5S 7S 7S")
    assert legal(st, "9S 9S 9S 5S 5S 5S") and not legal(st, "9S 9S 9S 7S 7S 5S")
    # one triple: triple + pair + single
    st = state("national-3deck", 2, "H", lead, "9S 9S 9S 6S 6S 3S 4S")
    assert legal(st, "9S 9S 9S 6S 6S 3S") and not legal(st, "9S 9S 9S 3S 4S 6S")
    # triple + singles comes before a pair tractor (national)
    st = state("national-3deck", 2, "H", lead, "9S 9S 9S 6S 6S 7S 7S")
    assert legal(st, "9S 9S 9S 6S 6S 7S")
    assert not legal(st, "6S 6S 7S 7S 9S 9S")
    # no triple: pair tractor + any 2 before two pairs + 2 (连对加两张牌)
    st = state("national-3deck", 2, "H", lead, "6S 6S 7S 7S 10S 10S 3S 4S")
    assert legal(st, "6S 6S 7S 7S 3S 4S") and legal(st, "6S 6S 7S 7S 10S 10S")
    assert not legal(st, "6S 6S 10S 10S 3S 4S")
    # no pair tractor: two pairs + 2, then one pair + 4
    st = state("national-3deck", 2, "H", lead, "6S 6S 9S 9S QS QS 3S 4S")
    assert legal(st, "6S 6S QS QS 3S 4S") and not legal(st, "6S 6S 3S 4S 9S QS")
    st = state("national-3deck", 2, "H", lead, "6S 6S 9S 3S 4S 5S")
    assert legal(st, "6S 6S 9S 3S 4S 5S")


def test_zhku_triple_tractor_prefers_pair_tractor_over_triple_seed001() -> None:
    """Seed 001 art. 11.2(2): 多刻拖、少刻拖、多对拖、少对拖、刻子、对子、单张."""
    lead = "AS AS AS KS KS KS"
    st = state("zhku-3deck", 2, "H", lead, "9S 9S 9S 6S 6S 7S 7S")
    assert legal(st, "6S 6S 7S 7S 9S 9S")
    assert not legal(st, "9S 9S 9S 6S 6S 7S")


def test_throw_is_followed_component_by_component() -> None:
    """Seed 002 art. 13: 领出为甩牌时…按照上述不同组合的跟牌方法分别跟牌."""
    lead = "AS AS KS"  # pair + single
    st = state("national-2deck", 2, "H", lead, "9S 9S 3S 4S")
    assert legal(st, "9S 9S 3S") and not legal(st, "9S 3S 4S")


def test_short_suit_must_play_all_of_it() -> None:
    st = state("national-2deck", 2, "H", "AS AS KS KS", "9S 3C 4C 5C 6C")
    assert legal(st, "9S 3C 4C 5C")
    assert not legal(st, "3C 4C 5C 6C")


def test_verify_play_names_the_reason() -> None:
    st = state("national-2deck", 2, "H", "AS AS", "9S 9S 3S 4S")
    with pytest.raises(IllegalPlayError, match="shape"):
        st.verify_play(Seat.E, parse_cards(["3S", "4S"]))
    with pytest.raises(IllegalPlayError, match="does not hold"):
        st.verify_play(Seat.E, parse_cards(["QS", "QS"]))
