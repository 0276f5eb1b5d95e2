"""The upright head (vision.heads.UPRIGHT): crops turned by the reading direction, folding its reading in."""

import math

import numpy as np
import pytest

from tests.vision.test_vision_classifier import colour_classifier, half_classifier, linear_model
from vision.classifier import IndexClassifier
from vision.crops import upright_crops
from vision.heads import UPRIGHT, ClassifierNotFoundError, CropHead, HeadError, fuse
from vision.labels import class_id


def glyph(angle_deg):
    """A 200 × 200 image with one 40 × 40 "index" at (80, 80)–(120, 120): blue over its top half
    (as its glyphs read), the whole turned ``angle_deg`` counter-clockwise about the index
    centre; returns the image and the index's up vector."""
    import cv2

    img = np.zeros((200, 200, 3), np.uint8)
    img[80:100, 80:120] = (255, 0, 0)
    m = cv2.getRotationMatrix2D((100.0, 100.0), angle_deg, 1.0)
    img = cv2.warpAffine(img, m, (200, 200), flags=cv2.INTER_NEAREST)
    t = math.radians(90 + angle_deg)
    return img, np.array([[math.cos(t), -math.sin(t)]], np.float32)


BOX = np.array([[80, 80, 120, 120]], np.float32)


@pytest.mark.parametrize("angle", [0, 35, 90, 180, 250])
def test_a_turned_index_comes_out_upright(angle):
    img, up = glyph(angle)
    (crop,) = upright_crops(img, BOX, up, size=32, pad=0.0)
    blue = crop[0]
    assert blue[:12].mean() > 0.6 and blue[-12:].mean() < 0.05  # blue on top, nothing below


def test_unknown_direction_and_a_window_off_the_image_give_empty_crops():
    img, _ = glyph(0)
    crops = upright_crops(
        img,
        np.array([[80, 80, 120, 120], [400, 400, 440, 440]], np.float32),
        np.array([[np.nan, np.nan], [0.0, -1.0]], np.float32),
        size=16,
    )
    assert crops.shape == (2, 3, 16, 16) and not crops.any()


def test_a_large_box_is_shrunk_before_turning():
    img = np.zeros((800, 800, 3), np.uint8)
    img[200:260, 200:600] = (255, 0, 0)  # the top band of a 400-px index
    (crop,) = upright_crops(
        img, np.array([[200, 200, 600, 600]], np.float32), np.array([[0.0, -1.0]]), 20, 0.0
    )
    assert crop[0, :2].mean() > 0.8 and crop[0, 5:].max() < 0.05


def test_fusing_a_uniform_reading_changes_nothing_and_background_keeps_its_share():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(55), 4).astype(np.float32)
    np.testing.assert_allclose(fuse(p, np.full((4, 54), 1 / 54, np.float32), 1.0), p, rtol=1e-5)
    q = rng.dirichlet(np.ones(54), 4).astype(np.float32)
    f = fuse(p, q, 0.7)
    np.testing.assert_allclose(f[:, 54], p[:, 54], rtol=1e-6)
    np.testing.assert_allclose(f.sum(1), 1.0, rtol=1e-5)
    assert fuse(p, q, 0.0) is p


def test_the_head_reads_the_turned_crop_and_unknown_directions_stay_uniform(tmp_path):
    head = CropHead(half_classifier(tmp_path / "u.onnx"), UPRIGHT)  # blue on top: 7H, blue below: KS
    img, up = glyph(90)  # the bar on the index's left as seen: a plain crop is neither
    q = head.box_probabilities(img, np.repeat(BOX, 2, 0), np.concatenate([up, [[np.nan, np.nan]]]))
    assert q[0].argmax() == class_id("7H") and q[0].max() > 0.5
    np.testing.assert_allclose(q[1], 1 / 54)
    # told the opposite direction, the head reads the bar below
    assert head.box_probabilities(img, BOX, -up)[0].argmax() == class_id("KS")


def test_the_classifier_folds_the_upright_reading_in(tmp_path):
    """The classifier hesitates (a blue crop reads 7H or KS alike); the upright head settles it."""
    w = np.zeros((3, 54), np.float32)
    w[0, class_id("7H")] = w[0, class_id("KS")] = 10.0
    plain = IndexClassifier(linear_model(tmp_path / "c.onnx", w))
    img, up = glyph(90)
    p = plain.box_probabilities(img, BOX, up)
    assert p[0, class_id("7H")] == pytest.approx(p[0, class_id("KS")], rel=1e-4)
    head = CropHead(half_classifier(tmp_path / "u.onnx"), UPRIGHT)
    both = IndexClassifier(linear_model(tmp_path / "c.onnx", w), upright_head=head, upright_weight=1.0)
    q = both.box_probabilities(img, BOX, up)
    assert q[0, class_id("7H")] > 0.9
    # without directions the upright head is not consulted
    np.testing.assert_allclose(both.box_probabilities(img, BOX), p, rtol=1e-5)


def test_bad_upright_head_files(tmp_path):
    with pytest.raises(ClassifierNotFoundError, match="upright head"):
        CropHead(tmp_path / "missing.onnx", UPRIGHT)
    with pytest.raises(HeadError, match="54"):
        CropHead(linear_model(tmp_path / "four.onnx", np.zeros((3, 4), np.float32)), UPRIGHT)
    assert colour_classifier(tmp_path / "c.onnx").is_file()
