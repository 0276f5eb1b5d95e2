"""The joker head: a reading of a *wide* window (is this box a joker's mark, and which joker),
folded into every box's reading.

Hand-built ONNX models on crop channel means: the index classifier sees a tight green crop and
leans to 10♣ over the small joker; the joker head sees the red picture around the mark as well and
says small joker.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import need_module
from tests.vision.test_vision_classifier import named
from vision.classifier import BACKGROUND, IndexClassifier
from vision.crops import PAD_KEY
from vision.detections import Detections
from vision.detectors import DetectorConfig
from vision.heads import JOKER, JOKER_HEAD_LABELS, CropHead, HeadError, fuse, joker_columns
from vision.labels import class_id

need_module("onnx")
from tests.vision.test_vision_suit_head import linear_model  # noqa: E402


def index_classifier(path: Path) -> Path:
    """Green crops: 10C (logit 10 × green) a little above SJ (9 × green); 55 outputs."""
    w = np.zeros((3, 55), np.float32)
    w[1, class_id("10C")] = 10.0
    w[1, class_id("SJ")] = 9.0
    return linear_model(path, w, pad=0.15)


def joker_head(path: Path, pad: float | None = 1.5) -> Path:
    """Red in the window → small joker (logit 12 × red); otherwise even."""
    w = np.zeros((3, 3), np.float32)
    w[2, 1] = 12.0
    return linear_model(path, w, pad=pad)


def scene() -> tuple[np.ndarray, np.ndarray]:
    """A 20 × 20 box on a green 48 × 48 patch inside a red picture: the index crop (pad 0.15: 26 px)
    is all green; the joker head's window (pad 1.5: 80 px) sees the red."""
    img = np.zeros((240, 240, 3), np.uint8)
    img[40:200, 40:200] = (0, 0, 255)
    img[96:144, 96:144] = (0, 255, 0)
    return img, np.array([[110, 110, 130, 130]], np.float32)


def test_the_wide_window_turns_the_reading_to_the_small_joker(tmp_path: Path) -> None:
    img, boxes = scene()
    plain = IndexClassifier(index_classifier(tmp_path / "c.onnx"))
    assert plain.box_probabilities(img, boxes).argmax(1).tolist() == [class_id("10C")]
    head = CropHead(joker_head(tmp_path / "j.onnx"), JOKER)
    assert head.pad == 1.5
    q = head.box_probabilities(img, boxes)
    assert q.argmax(1).tolist() == [1] and q[0].sum() == pytest.approx(1.0, abs=1e-5)
    fused = IndexClassifier(index_classifier(tmp_path / "c.onnx"), joker_head=head)
    p = fused.box_probabilities(img, boxes)
    assert p.argmax(1).tolist() == [class_id("SJ")] and p[0].sum() == pytest.approx(1.0, abs=1e-5)


def test_a_joker_head_that_sees_no_picture_changes_nothing(tmp_path: Path) -> None:
    """At the classifier's own window the head sees only green and reads all three alike, which
    folds in nothing."""
    img, boxes = scene()
    head = CropHead(joker_head(tmp_path / "j.onnx", pad=0.15), JOKER)
    np.testing.assert_allclose(head.box_probabilities(img, boxes)[0], 1 / 3, atol=0.01)
    plain = IndexClassifier(index_classifier(tmp_path / "c.onnx")).box_probabilities(img, boxes)
    fused = IndexClassifier(index_classifier(tmp_path / "c.onnx"), joker_head=head).box_probabilities(
        img, boxes
    )
    np.testing.assert_allclose(fused, plain, atol=1e-4)


def test_the_detector_config_names_the_joker_head(tmp_path: Path) -> None:
    img, boxes = scene()
    script = (Detections(boxes, [0.9], [0]),)
    common = dict(type="fake", script=script, classifier=index_classifier(tmp_path / "c.onnx"), conf=0.3)
    assert named(DetectorConfig(**common, joker_head=joker_head(tmp_path / "j.onnx")), img).names == ["SJ"]
    assert named(DetectorConfig(**common), img).names == ["10C"]
    zero = DetectorConfig(**common, joker_head=tmp_path / "j.onnx", joker_weight=0.0)
    assert named(zero, img).names == ["10C"]
    # the localiser alone never carries the heads
    assert DetectorConfig(**common, joker_head=tmp_path / "j.onnx").localiser_only().joker_head is None


def test_bad_joker_heads_are_refused(tmp_path: Path) -> None:
    with pytest.raises(HeadError, match=PAD_KEY):
        CropHead(joker_head(tmp_path / "nopad.onnx", pad=None), JOKER)
    with pytest.raises(HeadError, match="small joker"):
        CropHead(index_classifier(tmp_path / "c.onnx"), JOKER)


def test_folding_a_joker_reading_keeps_the_odds_between_other_cards() -> None:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(55), 200).astype(np.float32)
    q = rng.dirichlet(np.ones(3), 200).astype(np.float32)
    jokers = [class_id("SJ"), class_id("BJ")]
    others = [c for c in range(55) if c not in jokers]
    assert JOKER_HEAD_LABELS[others].tolist() == [0] * 53 and JOKER_HEAD_LABELS[jokers].tolist() == [1, 2]
    assert BACKGROUND in others
    for weight in (0.5, 1.0):
        f = fuse(p, joker_columns(q), weight)
        np.testing.assert_allclose(f.sum(1), 1.0, atol=1e-5)
        ratio = f[:, others] / p[:, others]
        np.testing.assert_allclose(ratio, np.repeat(ratio[:, :1], len(others), axis=1), rtol=1e-4)
        # the jokers move against the rest as the head's odds say: (f_SJ / f_rest) = (p_SJ / p_rest) (q1 / q0)^w
        rest_f, rest_p = f[:, others].sum(1), p[:, others].sum(1)
        expected = (p[:, jokers[0]] / rest_p) * (q[:, 1] / q[:, 0]) ** weight
        np.testing.assert_allclose(f[:, jokers[0]] / rest_f, expected, rtol=1e-3)


def test_a_classifier_without_a_background_output_takes_the_joker_reading_too(tmp_path: Path) -> None:
    img, boxes = scene()
    w = np.zeros((3, 54), np.float32)
    w[1, class_id("10C")], w[1, class_id("SJ")] = 10.0, 9.0
    fused = IndexClassifier(
        linear_model(tmp_path / "c54.onnx", w, pad=0.15),
        joker_head=CropHead(joker_head(tmp_path / "j.onnx"), JOKER),
    )
    p = fused.box_probabilities(img, boxes)
    assert p.shape == (1, 54) and p.argmax(1).tolist() == [class_id("SJ")]
