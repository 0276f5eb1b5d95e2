"""Indices the classifier cannot name become cards written ``??`` (issue 39: a play's length is
what was seen), unless a named index of the same best class lies a card's distance away (then it is
that card's other corner, already counted)."""

from __future__ import annotations

from vision.detections import Detections
from vision.instances import InstanceConfig
from vision.labels import class_id
from vision.reader import UnknownCards, unknown_cards

CONFIG = InstanceConfig(use_orientation=False, card_size_px=(60.0, 90.0))  # index pair ~ 100 px apart


def box(x: float, y: float) -> list[float]:
    return [x - 8, y - 12, x + 8, y + 12]


def test_an_unnamed_index_far_from_named_ones_is_an_unknown_card():
    named = Detections([box(100, 100)], [0.9], [class_id("AH")])
    unsure = Detections([box(400, 100)], [0.4], [class_id("5C")])
    cards = unknown_cards(named, unsure, CONFIG, UnknownCards())
    assert [(c.card, c.class_id, c.corners) for c in cards] == [("??", -1, 1)]


def test_the_other_corner_of_a_named_card_is_not_a_second_card():
    named = Detections([box(100, 100)], [0.9], [class_id("AH")])
    unsure = Detections([box(150, 185)], [0.4], [class_id("AH")])  # the same card's far corner
    assert unknown_cards(named, unsure, CONFIG, UnknownCards()) == []
    # ... but an unnamed index best read as another card at that distance is a card of its own
    unsure = Detections([box(150, 185)], [0.4], [class_id("7S")])
    assert [c.card for c in unknown_cards(named, unsure, CONFIG, UnknownCards())] == ["??"]


def test_two_unnamed_corners_of_one_card_are_one_unknown_card():
    named = Detections([box(900, 900)], [0.9], [class_id("AH")])
    unsure = Detections([box(300, 300), box(350, 385)], [0.4, 0.35], [class_id("QC"), class_id("QC")])
    cards = unknown_cards(named, unsure, CONFIG, UnknownCards())
    assert [(c.card, c.corners) for c in cards] == [("??", 2)]
