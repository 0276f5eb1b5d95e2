"""Indices the classifier cannot name become cards written ``??``, or with the rank or suit it is
sure of (issue 39: a play's length is what was seen), unless a named index of the same best class
lies a card's distance away (then it is that card's other corner, already counted)."""

from __future__ import annotations

import numpy as np

from vision.detections import Detections
from vision.instances import InstanceConfig
from vision.labels import class_id
from vision.reader import UnknownCards, decide, partial_name, unknown_cards, unsure_probabilities

CONFIG = InstanceConfig(use_orientation=False, card_size_px=(60.0, 90.0))  # index pair ~ 100 px apart


def box(x: float, y: float) -> list[float]:
    return [x - 8, y - 12, x + 8, y + 12]


def test_an_unnamed_index_far_from_named_ones_is_an_unknown_card():
    named = Detections([box(100, 100)], [0.9], [class_id("AH")])
    unsure = Detections([box(400, 100)], [0.4], [class_id("5C")])
    cards = unknown_cards(named, unsure, CONFIG, UnknownCards())
    assert [(str(c.card), c.class_id, c.corners) for c in cards] == [("??", -1, 1)]


def test_the_other_corner_of_a_named_card_is_not_a_second_card():
    named = Detections([box(100, 100)], [0.9], [class_id("AH")])
    unsure = Detections([box(150, 185)], [0.4], [class_id("AH")])  # the same card's far corner
    assert unknown_cards(named, unsure, CONFIG, UnknownCards()) == []
    # ... but an unnamed index best read as another card at that distance is a card of its own
    unsure = Detections([box(150, 185)], [0.4], [class_id("7S")])
    assert [str(c.card) for c in unknown_cards(named, unsure, CONFIG, UnknownCards())] == ["??"]


def test_two_unnamed_corners_of_one_card_are_one_unknown_card():
    named = Detections([box(900, 900)], [0.9], [class_id("AH")])
    unsure = Detections([box(300, 300), box(350, 385)], [0.4, 0.35], [class_id("QC"), class_id("QC")])
    cards = unknown_cards(named, unsure, CONFIG, UnknownCards())
    assert [(str(c.card), c.corners) for c in cards] == [("??", 2)]


def probabilities(**mass: float) -> np.ndarray:
    """One box's 55 class probabilities (the last: not an index) with ``mass`` on the named cards."""
    p = np.full(55, 0.0, np.float32)
    for card, value in mass.items():
        p[class_id(card.removeprefix("_"))] = value
    p[54] = max(0.0, 1.0 - p.sum())
    return p


def test_what_the_classifier_is_sure_of_is_kept_rank_or_suit():
    """An unnamed index whose probability lies on one suit (a court corner printing only its suit
    sign) is ``?C``; on one rank, ``K?``; on the jokers, ``?J``; spread, ``??``. A card's two corners
    that disagree stay ``??``."""
    named = Detections([box(900, 900)], [0.9], [class_id("AH")])
    unsure = Detections(
        [box(100, 100), box(300, 100), box(500, 100), box(700, 100)],
        [0.45, 0.5, 0.55, 0.4],
        [class_id("KC"), class_id("KS"), class_id("SJ"), class_id("5C")],
    )
    rows = np.stack(
        [
            probabilities(KC=0.45, QC=0.3, JC=0.2),
            probabilities(KS=0.5, KC=0.45),
            probabilities(SJ=0.55, BJ=0.4),
            probabilities(_5C=0.4, _6H=0.3, _3D=0.25),
        ]
    )
    cards = unknown_cards(named, unsure, CONFIG, UnknownCards(), rows)
    assert sorted(str(c.card) for c in cards) == ["??", "?C", "?J", "K?"]
    assert all(c.class_id == -1 for c in cards)
    assert [str(c.card) for c in unknown_cards(named, unsure, CONFIG, UnknownCards(partial=None), rows)] == [
        "??"
    ] * 4
    # one card's two corners, one sure of clubs, the other of kings: nothing both agree on
    pair = Detections([box(300, 300), box(350, 385)], [0.45, 0.5], [class_id("KC"), class_id("KC")])
    both = np.stack([probabilities(KC=0.45, QC=0.3, JC=0.2), probabilities(KC=0.5, KS=0.45)])
    assert [str(c.card) for c in unknown_cards(named, pair, CONFIG, UnknownCards(), both)] == ["??"]


def test_the_unsure_boxes_probabilities_follow_the_decide_step():
    """:func:`unsure_probabilities` gives the rows of exactly the boxes :func:`decide` returns apart,
    in its order (background and surely named boxes left out)."""
    p = np.stack(
        [
            probabilities(AH=0.95),  # named
            probabilities(KC=0.45, QC=0.3, JC=0.2),  # unsure
            probabilities(),  # background
            probabilities(KS=0.5, KC=0.45),  # unsure
            probabilities(_5C=0.1),  # below the floor: background wins anyway
        ]
    )
    boxes = Detections([box(100 * k, 100) for k in range(5)], [0.9] * 5, [0] * 5)
    named, unsure = decide(boxes, p, conf=0.6, joker_conf=0.8, floor=0.25)
    rows = unsure_probabilities(p, 0.6, 0.8, 0.25)
    assert named.names == ["AH"] and unsure.names == ["KC", "KS"]
    assert rows.shape == (2, 55) and [partial_name(r, 0.9) for r in rows] == ["?C", "K?"]
