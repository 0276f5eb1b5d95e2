"""Naming a card's two visible corners together (vision.pairnaming) and the geometry it pairs by
(vision.instances.diagonal_pairs): hand-made boxes, index boxes 20 px tall → expected distance 80 px."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.detections import Detections
from vision.instances import (
    InstanceConfig,
    count_cards,
    diagonal_pairs,
    expected_pair_distance,
    group_corners,
    on_diagonal,
)
from vision.labels import class_id, class_name
from vision.pairnaming import PairNaming, PairNamingError, name_pairs
from vision.settings import SHIPPED

UP, DOWN = [0.0, -1.0], [0.0, 1.0]
BR = (100 + 80 * 0.635, 100 + 80 * 0.772)  # a card's br index seen from its tl index at (100, 100)


def proposals(points):
    """Localiser proposals (class 0, no name yet) with reading directions: (x, y, up)."""
    boxes = [[x - 5, y - 10, x + 5, y + 10] for x, y, _ in points]
    return Detections(
        np.array(boxes, np.float32),
        np.full(len(points), 0.9, np.float32),
        np.zeros(len(points), np.int64),
        np.array([u for *_, u in points], np.float32),
    )


def readings(*rows):
    """(N, 55) probabilities: each row a dict card -> probability, the rest spread thinly."""
    p = np.full((len(rows), 55), 1e-4, np.float32)
    for r, row in enumerate(rows):
        for card, prob in row.items():
            p[r, class_id(card)] = prob
    return p


def names(det, p, naming=None):
    """The card names after pair naming, and the adjusted probabilities."""
    q = name_pairs(det, p, naming or PairNaming(), InstanceConfig())
    return [class_name(int(row.argmax())) for row in q], q


def test_a_misread_corner_takes_its_twins_name_and_the_card_counts_once():
    det = proposals([(100, 100, UP), (*BR, DOWN)])
    p = readings({"6H": 0.55, "8H": 0.4}, {"6H": 0.1, "8H": 0.85})
    got, q = names(det, p)
    assert got == ["8H", "8H"]
    joint = 0.4 * 0.85 / (0.4 * 0.85 + 0.55 * 0.1 + 50 * 1e-8)
    assert q[0, class_id("8H")] == pytest.approx(joint, rel=1e-3)
    assert p[0].argmax() == class_id("6H")  # the input is not changed
    named = Detections(det.xyxy, q.max(1), q.argmax(1), det.up)
    assert count_cards(group_corners(named)) == {"8H": 1}
    alone = Detections(det.xyxy, p.max(1), p.argmax(1), det.up)
    assert count_cards(group_corners(alone)) == {"6H": 1, "8H": 1}


def test_two_unsure_corners_together_reach_a_sure_name():
    # alone, neither reading reaches the shipped reader's conf; together they do
    det = proposals([(100, 100, UP), (*BR, DOWN)])
    p = readings({"QS": 0.38, "QC": 0.2, "KS": 0.2, "9S": 0.2}, {"QS": 0.38, "QC": 0.2, "QD": 0.2, "9C": 0.2})
    got, q = names(det, p)
    assert got == ["QS", "QS"]
    assert q[0].max() >= SHIPPED.conf > p[0].max()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"6H": 0.9, "8H": 0.09}, {"8H": 0.9, "6H": 0.09}),  # each sure of its own: joint 50/50
        ({"6H": 0.99, "8H": 0.001}, {"8H": 0.99, "6H": 0.001}),  # and each all but rules out the other
    ],
)
def test_two_cards_each_sure_of_their_own_keep_their_names(first, second):
    det = proposals([(100, 100, UP), (*BR, DOWN)])
    assert names(det, readings(first, second))[0] == ["6H", "8H"]


def test_the_floor_refuses_a_name_one_corner_all_but_rules_out():
    det = proposals([(100, 100, UP), (*BR, DOWN)])
    p = readings({"KS": 0.97, "KC": 0.02}, {"KC": 0.97, "KS": 0.001})
    assert names(det, p)[0] == ["KS", "KC"]
    assert names(det, p, PairNaming(floor=0.0, joint_conf=0.5))[0] == ["KC", "KC"]


@pytest.mark.parametrize(
    "second",
    [
        (*BR, UP),  # reads the same way: two cards of a fan
        (100, 100 + 80, DOWN),  # straight below: off the diagonal
        (100 + 2.7 * 80 * 0.635, 100 + 2.7 * 80 * 0.772, DOWN),  # on it, but too far
        (*BR, [math.nan, math.nan]),  # no reading direction
    ],
)
def test_corners_that_cannot_be_one_card_are_named_alone(second):
    det = proposals([(100, 100, UP), second])
    p = readings({"6H": 0.55, "8H": 0.4}, {"6H": 0.1, "8H": 0.85})
    assert names(det, p)[0] == ["6H", "8H"]


def test_without_directions_nothing_is_paired():
    det = proposals([(100, 100, UP), (*BR, DOWN)])
    det = Detections(det.xyxy, det.confidence, det.class_id)
    p = readings({"6H": 0.55, "8H": 0.4}, {"6H": 0.1, "8H": 0.85})
    np.testing.assert_array_equal(name_pairs(det, p, PairNaming(), InstanceConfig()), p)


def test_a_corner_joins_its_surest_pair_only():
    # the tl index at (100, 100) fits two br candidates; the surer joint reading wins, the other
    # candidate keeps its own name
    near = (BR[0] + 6, BR[1] + 6)
    det = proposals([(100, 100, UP), (*BR, DOWN), (*near, DOWN)])
    p = readings({"8H": 0.5, "6H": 0.45}, {"8H": 0.9}, {"6H": 0.5, "8H": 0.3, "9H": 0.2})
    assert names(det, p)[0] == ["8H", "8H", "6H"]


def test_jokers_and_background_get_nothing_from_a_joint_reading():
    det = proposals([(100, 100, UP), (*BR, DOWN)])
    p = readings({"7C": 0.5, "SJ": 0.2}, {"7C": 0.6})
    p[:, 54] = 0.1
    _, q = names(det, p)
    assert q[:, class_id("SJ")].max() == 0 and q[:, 54].max() == 0
    assert q[0].sum() == pytest.approx(1.0)


def test_bad_settings_and_shapes():
    with pytest.raises(PairNamingError, match="joint_conf"):
        PairNaming(joint_conf=0.0)
    with pytest.raises(PairNamingError, match="floor"):
        PairNaming(floor=1.0)
    with pytest.raises(PairNamingError, match="rows"):
        name_pairs(proposals([(100, 100, UP)]), readings({}, {}), PairNaming(), InstanceConfig())


def _pairs_one_by_one(det, config):
    """diagonal_pairs written pair by pair from the grouping's scalar pieces."""
    out = []
    below, above = config.diagonal_tolerance
    for i in range(len(det)):
        for j in range(i + 1, len(det)):
            u, w = det.up[i], det.up[j]
            if np.isnan(u).any() or np.isnan(w).any() or float(u @ w) >= 0:
                continue
            v = det.centers[j] - det.centers[i]
            if not on_diagonal(u, w, v, config.diagonal):
                continue
            ratio = float(np.linalg.norm(v)) / expected_pair_distance(det, i, j, config)
            if 1 - below <= ratio <= 1 + above:
                out.append((i, j))
    return out


angles = st.floats(0, 2 * math.pi)
points = st.tuples(st.floats(0, 300), st.floats(0, 300), st.floats(8, 30), angles, st.booleans())


@settings(max_examples=60, deadline=None)
@given(st.lists(points, min_size=0, max_size=9), st.booleans())
def test_diagonal_pairs_match_the_pair_by_pair_geometry(pts, calibrated):
    boxes = np.array([[x - s / 2, y - s / 2, x + s / 2, y + s / 2] for x, y, s, _, _ in pts], np.float32)
    up = np.array(
        [[math.cos(a), math.sin(a)] if known else [math.nan, math.nan] for *_, a, known in pts], np.float32
    )
    det = Detections(
        boxes.reshape(-1, 4), np.ones(len(pts), np.float32), np.zeros(len(pts), np.int64), up.reshape(-1, 2)
    )
    config = InstanceConfig(card_size_px=(63.0, 88.0) if calibrated else None)
    assert diagonal_pairs(det, config) == _pairs_one_by_one(det, config)
    assert diagonal_pairs(det, InstanceConfig(diagonal=None)) == []


@pytest.mark.parametrize("module", ["vision.instances", "vision.pairnaming"])
def test_module_doctests(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0
