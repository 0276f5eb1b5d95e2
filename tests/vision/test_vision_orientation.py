"""The orientation head and how card grouping uses it: one card's two indices read in opposite
directions, two identical fanned cards read alike.

Hand-built ONNX heads on crop channel means (like the suit head's tests): a red crop reads upright
(sector 2), a blue one upside down (sector 6), a green one gives no direction.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import need_module
from vision.classifier import IndexClassifier
from vision.detections import Detections, DetectionsShapeError
from vision.heads import ORIENTATION, ClassifierNotFoundError, CropHead, HeadError
from vision.instances import InstanceConfig, group_corners, opposite
from vision.labels import class_id
from vision.orientation import BINS, up_vectors

onnx = need_module("onnx")
from tests.vision.test_vision_classifier import channel_classifier, linear_model  # noqa: E402

UP, DOWN, UNKNOWN = [0.0, -1.0], [0.0, 1.0], [np.nan, np.nan]


def colour_head(path: Path) -> Path:
    """Red (BGR channel 2) → sector 2 (upright); blue (channel 0) → sector 6 (upside down)."""
    w = np.zeros((3, BINS), np.float32)
    w[2, 2] = 30.0
    w[0, 6] = 30.0
    return linear_model(path, w)


def test_up_vectors_point_into_their_sector_with_y_down() -> None:
    p = np.zeros((4, BINS), np.float32)
    p[0, 0] = p[1, 6] = 1.0  # +x; sector 6 = 270° counter-clockwise = down on the image (+y)
    p[2, 2] = p[2, 3] = 0.5  # halfway between 90° and 135°: 112.5°
    p[3] = 1.0 / BINS  # no direction
    v = up_vectors(p)
    assert v[0] == pytest.approx([1.0, 0.0], abs=1e-6)
    assert v[1] == pytest.approx([0.0, 1.0], abs=1e-6)
    assert v[2] == pytest.approx([-0.38268, -0.92388], abs=1e-4)  # (cos 112.5°, -sin 112.5°)
    assert np.isnan(v[3]).all()


def test_a_weak_reading_is_unknown_below_the_strength() -> None:
    p = np.zeros((1, BINS), np.float32)
    p[0, 2] = p[0, 6] = 0.4  # up and down cancel: mean length 0.2
    p[0, 0] = 0.2  # leaves 0.2 towards +x
    assert np.isnan(up_vectors(p, 0.5)).all()
    assert up_vectors(p, 0.1)[0] == pytest.approx([1.0, 0.0], abs=1e-6)


def test_the_head_refuses_a_missing_file_and_a_model_without_eight_sectors(tmp_path: Path) -> None:
    with pytest.raises(ClassifierNotFoundError, match="orientation head"):
        CropHead(tmp_path / "none.onnx", ORIENTATION)
    with pytest.raises(HeadError, match="8 sectors"):
        CropHead(linear_model(tmp_path / "four.onnx", np.ones((3, 4), np.float32)), ORIENTATION)


def pair(up_a: list[float], up_b: list[float]) -> Detections:
    """Two 7H indices (20 px) 84 px apart: exactly the expected distance of one card's two corners."""
    xyxy = [[100, 100, 120, 120], [100, 184, 120, 204]]
    return Detections(xyxy, [0.9, 0.9], [class_id("7H")] * 2, [up_a, up_b])


@pytest.mark.parametrize(
    ("up_a", "up_b", "cards"),
    [(UP, DOWN, 1), (UP, UP, 2), ([0.7071, -0.7071], [0.7071, -0.7071], 2), (UP, UNKNOWN, 1)],
)
def test_corners_pair_only_when_they_read_in_opposite_directions(up_a, up_b, cards) -> None:
    assert len(group_corners(pair(up_a, up_b))) == cards


def test_orientation_can_be_switched_off_and_is_ignored_when_absent() -> None:
    assert len(group_corners(pair(UP, UP), InstanceConfig(use_orientation=False))) == 1
    assert len(group_corners(pair(UP, UP).with_up(None))) == 1


def test_opposite_needs_more_than_a_right_angle() -> None:
    assert opposite(np.array(UP), np.array([-0.1, 0.995]))
    assert not opposite(np.array(UP), np.array([1.0, 0.0]))  # 90°: not opposite


def test_detections_keep_up_through_subsets_and_moves_and_fill_unknown_on_concat() -> None:
    d = pair(UP, DOWN)
    assert d[[1]].up.tolist() == [DOWN]
    assert d.filter_confidence(0.5).shifted(5, 5).scaled(2.0).up.tolist() == [UP, DOWN]
    plain = Detections([[0, 0, 1, 1]], [0.5], [3])
    joined = Detections.concat([d, plain])
    assert joined.up[:2].tolist() == [UP, DOWN] and np.isnan(joined.up[2]).all()
    assert Detections.concat([plain, plain]).up is None
    with pytest.raises(DetectionsShapeError, match="up"):
        Detections([[0, 0, 1, 1]], [0.5], [3], [UP, DOWN])


def scene() -> tuple[np.ndarray, Detections]:
    """A red box and a blue box, 84 px apart, both read as 7H by a classifier that names every crop 7H."""
    img = np.zeros((300, 300, 3), np.uint8)
    img[100:120, 100:120] = (0, 0, 255)
    img[184:204, 100:120] = (255, 0, 0)
    boxes = Detections([[100, 100, 120, 120], [100, 184, 120, 204]], [0.9, 0.8], [0, 0])
    return img, boxes


def seven_of_hearts(path: Path) -> Path:
    return channel_classifier(path, {0: "7H", 1: "7H", 2: "7H"})


def test_the_classifier_gives_named_boxes_their_reading_direction(tmp_path: Path) -> None:
    img, boxes = scene()
    head = CropHead(colour_head(tmp_path / "o.onnx"), ORIENTATION)
    named = IndexClassifier(seven_of_hearts(tmp_path / "c.onnx"), orientation_head=head).name_boxes(
        img, boxes, det_conf=0.1, conf=0.1
    )
    assert named.names == ["7H", "7H"]
    assert named.up == pytest.approx(np.array([UP, DOWN]), abs=1e-3)
    assert len(group_corners(named)) == 1  # opposite readings: one card
    at = IndexClassifier(seven_of_hearts(tmp_path / "c.onnx"), orientation_head=head).name_boxes_at(
        img, boxes, [0.1, 0.85], conf=0.1
    )
    assert at[0.1].up == pytest.approx(np.array([UP, DOWN]), abs=1e-3)
    assert at[0.85].up == pytest.approx(np.array([UP]), abs=1e-3)


def test_without_a_head_named_boxes_have_no_direction(tmp_path: Path) -> None:
    img, boxes = scene()
    named = IndexClassifier(seven_of_hearts(tmp_path / "c.onnx")).name_boxes(img, boxes, 0.1, 0.1)
    assert named.up is None
