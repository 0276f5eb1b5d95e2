"""Corner grouping on hand-made geometry: index boxes 20 px tall → expected pair distance 80 px."""

import numpy as np
import pytest

from vision.detections import Detections
from vision.instances import InstanceConfig, InstanceConfigError, count_cards, group_corners
from vision.labels import class_id


def corner(cx, cy, size=20):
    return [cx - size / 4, cy - size / 2, cx + size / 4, cy + size / 2]


def make(corners):
    boxes = [corner(x, y) for _, x, y in corners]
    return Detections(
        np.array(boxes, np.float32), np.full(len(corners), 0.9), [class_id(c) for c, _, _ in corners]
    )


def test_two_corners_of_one_card_count_once():
    # 80 px apart along a diagonal (48, 64): one card.
    cards = group_corners(make([("7H", 100, 100), ("7H", 148, 164)]))
    assert [(str(c.card), c.corners) for c in cards] == [("7H", 2)]
    assert cards[0].box == pytest.approx((95, 90, 153, 174))


def test_identical_cards_side_by_side_count_twice():
    # Two 7H from two decks, 25 px apart (a fan): too close to be one card.
    cards = group_corners(make([("7H", 100, 100), ("7H", 125, 100)]))
    assert count_cards(cards) == {"7H": 2}


def test_two_full_identical_cards_count_twice():
    dets = make([("KS", 100, 100), ("KS", 148, 164), ("KS", 300, 100), ("KS", 348, 164)])
    cards = group_corners(dets)
    assert count_cards(cards) == {"KS": 2}
    assert all(c.corners == 2 for c in cards)


def test_three_decks_fanned_one_corner_each():
    dets = make([("BJ", 100, 100), ("BJ", 120, 102), ("BJ", 140, 104)])
    assert count_cards(group_corners(dets)) == {"BJ": 3}


def make_sized(corners):
    boxes = [corner(x, y, size) for _, x, y, size in corners]
    return Detections(
        np.array(boxes, np.float32), np.full(len(corners), 0.9), [class_id(c) for c, *_ in corners]
    )


def test_joker_corners_pair_at_the_suit_cards_scale():
    # a joker's star is 8 px where the suit indices are 20 px: its two corners are still 80 px apart
    # (the card size), which its own box size (8 px x 4.2 = 34 px) would call two jokers
    dets = make_sized([("SJ", 100, 100, 8), ("SJ", 148, 164, 8), ("5D", 300, 100, 20)])
    assert count_cards(group_corners(dets)) == {"SJ": 1, "5D": 1}
    # two jokers of a pair played side by side stay two
    pair = make_sized([("BJ", 100, 100, 8), ("BJ", 125, 100, 8), ("5D", 300, 100, 20)])
    assert count_cards(group_corners(pair)) == {"BJ": 2, "5D": 1}
    # a suit card is still measured by its own boxes (the jokers do not set the scale)
    mixed = make_sized([("9C", 100, 100, 20), ("9C", 148, 164, 20), ("SJ", 300, 300, 8)])
    assert count_cards(group_corners(mixed)) == {"9C": 1, "SJ": 1}


def test_jokers_alone_use_their_own_mark_at_the_joker_ratio():
    # no suit card in view: 12-px marks x 7.0 = 84 px expected
    alone = make_sized([("BJ", 100, 100, 12), ("BJ", 150, 165, 12)])
    assert count_cards(group_corners(alone)) == {"BJ": 1}
    # the suit-card ratio (4.2 x 12 = 50 px) would have split it; a fan of two stays two
    fan = make_sized([("BJ", 100, 100, 12), ("BJ", 125, 100, 12)])
    assert count_cards(group_corners(fan)) == {"BJ": 2}


def test_different_classes_never_pair():
    cards = group_corners(make([("7H", 100, 100), ("7D", 148, 164)]))
    assert count_cards(cards) == {"7H": 1, "7D": 1}


def test_known_card_size_overrides_index_estimate():
    # Card 100 x 140 px: expected distance hypot(100*(1-12/63), 140*(1-26/88)) ≈ 124.4.
    dets = make([("2C", 0, 0), ("2C", 80.9, 98.6)])
    assert count_cards(group_corners(dets)) == {"2C": 2}  # 80 px rule: 127 px is too far
    cfg = InstanceConfig(card_size_px=(100.0, 140.0))
    assert [c.corners for c in group_corners(dets, cfg)] == [2]


def test_far_apart_same_class_stay_separate():
    assert count_cards(group_corners(make([("AS", 0, 0), ("AS", 500, 500)]))) == {"AS": 2}


@pytest.mark.parametrize("tolerance", [(0.0, 0.5), (1.0, 0.5), (0.4, 0.0), (-0.1, 0.5)])
def test_bad_config(tolerance):
    with pytest.raises(InstanceConfigError, match="below"):
        InstanceConfig(tolerance=tolerance)


def test_json_entry():
    (card,) = group_corners(make([("10C", 50, 50)]))
    assert card.to_json() == {"card": "10C", "score": 0.9, "box": [45.0, 40.0, 55.0, 60.0]}


def test_four_index_card_counts_once():
    # Index 20 px → expected diagonal 84 px. Corners of one card at (0,0), (60,0), (0,59), (60,59):
    # diagonals 84 px cross at the same midpoint.
    dets = make([("QD", 0, 0), ("QD", 60, 0), ("QD", 0, 59), ("QD", 60, 59)])
    cards = group_corners(dets)
    assert [(str(c.card), c.corners) for c in cards] == [("QD", 4)]
    assert count_cards(group_corners(dets, InstanceConfig(merge_four_index=False))) == {"QD": 2}


@pytest.mark.parametrize(
    ("dx", "cards"),
    [
        (51.0, 1),  # a four-index deck's tl and tr indices, a card's width apart: 0.64 x 80 px
        (44.0, 2),  # 0.55 x: below the band (a fan of two identical cards stays two)
        (116.0, 1),  # 1.45 x: a partly hidden index's small box under-estimates the distance
        (128.0, 2),  # 1.6 x: above the band
    ],
)
def test_pair_band_is_wider_below_and_above_than_35_percent(dx, cards):
    assert count_cards(group_corners(make([("QD", 100, 100), ("QD", 100 + dx, 100)]))) == {"QD": cards}
    narrow = InstanceConfig(tolerance=(0.35, 0.35))  # the sixteenth session's band splits all four
    assert count_cards(group_corners(make([("QD", 100, 100), ("QD", 100 + dx, 100)]), narrow)) == {"QD": 2}


UP, DOWN = [0.0, -1.0], [0.0, 1.0]
DISTANCE_ONLY = InstanceConfig(diagonal=None)


def make_read(corners):
    """``make`` with reading directions: (card, x, y, up)."""
    det = make([(c, x, y) for c, x, y, _ in corners])
    return det.with_up(np.array([u for *_, u in corners], np.float32))


def at(ratio, side=1.0):
    """Where a card's br index lies from its tl index at (100, 100), ``ratio`` x the expected 80 px
    along the diagonal (39 degrees from straight down; ``side`` -1 for the tr-bl diagonal)."""
    return 100 + side * ratio * 80 * 0.635, 100 + ratio * 80 * 0.772


@pytest.mark.parametrize(("ratio", "side"), [(1.0, 1), (1.8, 1), (2.3, 1), (0.45, 1), (1.8, -1)])
def test_on_the_diagonal_a_small_or_large_index_for_its_card_still_pairs(ratio, side):
    x, y = at(ratio, side)
    card = [("QD", 100, 100, UP), ("QD", x, y, DOWN)]
    assert count_cards(group_corners(make_read(card))) == {"QD": 1}
    # the distance band alone splits all but the first
    assert count_cards(group_corners(make_read(card), DISTANCE_ONLY)) == {"QD": 1 if ratio == 1.0 else 2}


def test_off_the_diagonal_the_distance_band_stays():
    # 1.8 x the expected distance straight below: not where a card's other index lies
    column = [("7H", 100, 100, UP), ("7H", 100, 100 + 1.8 * 80, DOWN)]
    assert count_cards(group_corners(make_read(column))) == {"7H": 2}
    # within the band, off the diagonal (a four-index deck's side pair) still pairs
    side = [("7H", 100, 100, UP), ("7H", 151, 100, DOWN)]
    assert count_cards(group_corners(make_read(side))) == {"7H": 1}
    # too far even on the diagonal, or reading the same way: two cards
    x, y = at(2.7)
    assert count_cards(group_corners(make_read([("7H", 100, 100, UP), ("7H", x, y, DOWN)]))) == {"7H": 2}
    x, y = at(1.8)
    assert count_cards(group_corners(make_read([("7H", 100, 100, UP), ("7H", x, y, UP)]))) == {"7H": 2}


def test_unknown_directions_and_jokers_keep_the_distance_band():
    nan = [float("nan"), float("nan")]
    x, y = at(1.8)
    assert count_cards(group_corners(make_read([("7H", 100, 100, UP), ("7H", x, y, nan)]))) == {"7H": 2}
    # a joker mark alone: its own scale (7 x its 20 px box), 1.8 x that along the diagonal
    det = make_read([("BJ", 100, 100, UP), ("BJ", 100 + 1.8 * 140 * 0.635, 100 + 1.8 * 140 * 0.772, DOWN)])
    assert count_cards(group_corners(det)) == {"BJ": 2}


@pytest.mark.parametrize("diagonal", [(60.0, 10.0), (-5.0, 40.0), (10.0, 95.0)])
def test_bad_diagonal_window(diagonal):
    with pytest.raises(InstanceConfigError, match="diagonal"):
        InstanceConfig(diagonal=diagonal)
    with pytest.raises(InstanceConfigError, match="diagonal_tolerance"):
        InstanceConfig(diagonal_tolerance=(1.2, 0.5))
