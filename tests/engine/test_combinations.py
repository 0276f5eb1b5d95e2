"""Combination reading (牌型) and tractor adjacency, from the seeds' definitions."""

from __future__ import annotations

import pytest

from engine.cards import parse_cards
from engine.combos import counts_of, decompose
from engine.context import TRUMP, trump_context


def shapes(cards: str, level: int, trump: str | None, cls: int) -> list[tuple[int, int]]:
    ctx = trump_context(level, trump)
    return [c.shape for c in decompose(counts_of(parse_cards(cards.split())), ctx, cls)]


SPADES, HEARTS = 0, 1


def test_gap_tractor_across_level_seed004_9977_at_level_8() -> None:
    """Seed 004 (二)3: 打8时的9977为拖拉机; seed 002 art. 10.4: level 5 → 66 and 44 are a tractor."""
    assert shapes("9S 9S 7S 7S", 8, "H", SPADES) == [(2, 2)]
    assert shapes("6C 6C 4C 4C", 5, "H", 3) == [(2, 2)]


def test_plain_adjacent_pairs_are_a_tractor_but_gap_is_not() -> None:
    assert shapes("9S 9S 10S 10S", 2, "H", SPADES) == [(2, 2)]
    assert shapes("9S 9S JS JS", 2, "H", SPADES) == [(2, 1), (2, 1)]


def test_aa22_is_never_a_tractor_seed004() -> None:
    """Seed 004: AA22在任何情况下不构成拖拉机 (no wrap-around)."""
    assert shapes("AS AS 2S 2S", 5, "H", SPADES) == [(2, 1), (2, 1)]
    assert shapes("AH AH 2H 2H", 5, "H", TRUMP) == [(2, 1), (2, 1)]


def test_trump_chain_joker_pairs_and_trump_level_pair_seed004() -> None:
    """Seed 004 (二)3: 对大王与对小王, 对小王与对主级牌, 对主级牌与对副级牌, 对副级牌与主花色的对A."""
    assert shapes("BJ BJ SJ SJ", 5, "H", TRUMP) == [(2, 2)]
    assert shapes("SJ SJ 5H 5H", 5, "H", TRUMP) == [(2, 2)]
    assert shapes("5H 5H 5S 5S", 5, "H", TRUMP) == [(2, 2)]
    assert shapes("5C 5C AH AH", 5, "H", TRUMP) == [(2, 2)]
    assert shapes("BJ BJ SJ SJ 5H 5H 5D 5D AH AH KH KH", 5, "H", TRUMP) == [(2, 6)]


def test_two_off_suit_level_pairs_are_not_a_tractor_seed001_art6() -> None:
    """Seed 001 art. 6.4: 不同副牌花色级牌所构成的对子…不能组合成拖拉机."""
    assert shapes("5S 5S 5D 5D", 5, "H", TRUMP) == [(2, 1), (2, 1)]


def test_sj_pair_is_not_adjacent_to_off_suit_level_pair_when_trump_suit_exists() -> None:
    assert shapes("SJ SJ 5S 5S", 5, "H", TRUMP) == [(2, 1), (2, 1)]


def test_no_trump_sj_pair_and_any_level_pair_seed004() -> None:
    """Seed 004: 打无主时，对小王与任何对级牌构成拖拉机."""
    assert shapes("SJ SJ 7C 7C", 7, None, TRUMP) == [(2, 2)]
    assert shapes("SJ SJ 7D 7D", 7, None, TRUMP) == [(2, 2)]
    assert shapes("7C 7C 7D 7D", 7, None, TRUMP) == [(2, 1), (2, 1)]


def test_triples_and_triple_tractors_three_decks_seed002_art10() -> None:
    """Seed 002 art. 10.3/10.5: 刻子 and 连刻 (3 decks)."""
    assert shapes("8S 8S 8S", 2, "H", SPADES) == [(3, 1)]
    assert shapes("8S 8S 8S 9S 9S 9S", 2, "H", SPADES) == [(3, 2)]
    assert shapes("BJ BJ BJ SJ SJ SJ 2H 2H 2H", 2, "H", TRUMP) == [(3, 3)]


def test_throw_reads_biggest_components_first() -> None:
    """Seed 002 art. 11 example: A A K Q Q 10 10 9 9 in a plain suit (2 decks)."""
    got = shapes("AS AS KS QS QS 10S 10S 9S 9S", 2, "H", SPADES)
    assert got == [(2, 2), (2, 1), (2, 1), (1, 1)]


@pytest.mark.parametrize("level", [2, 14])
def test_level_at_the_ends_of_the_rank_order(level: int) -> None:
    # level 2: 3 is the lowest plain position; level A: K is the top plain position
    ctx = trump_context(level, "S")
    keys = [ctx.key(c) for c in parse_cards(["3H", "KH"])]
    assert keys == ([0, 10] if level == 2 else [1, 11])
