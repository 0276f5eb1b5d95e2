"""The suit head: a second reading of a *wider* crop, folded into the index classifier's.

Hand-built ONNX models on crop channel means: the index classifier sees a tight green crop and leans
to 7S over 7C; the suit head sees the blue surroundings as well and says clubs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import need_module
from tests.vision.test_vision_classifier import named
from vision.classifier import IndexClassifier
from vision.crops import PAD_KEY
from vision.detections import Detections
from vision.detectors import DetectorConfig
from vision.heads import SUIT, ClassifierNotFoundError, CropHead, HeadError, fuse, suit_columns
from vision.labels import SUITS, class_id

onnx = need_module("onnx")
from tests.vision.test_vision_classifier import linear_model as channel_means_model  # noqa: E402


def linear_model(path: Path, w: np.ndarray, pad: float | None) -> Path:
    """logits = (crop channel means) @ ``w``; ``pad`` in the metadata unless None."""
    return channel_means_model(path, w, None if pad is None else {PAD_KEY: repr(pad)})


def index_classifier(path: Path) -> Path:
    """Green crops: 7S (logit 10 × green) a little above 7C (9 × green)."""
    w = np.zeros((3, 54), np.float32)
    w[1, class_id("7S")] = 10.0
    w[1, class_id("7C")] = 9.0
    return linear_model(path, w, pad=0.15)


def suit_head(path: Path, pad: float | None = 1.0) -> Path:
    """Blue in the crop → clubs (logit 12 × blue); otherwise even."""
    w = np.zeros((3, 4), np.float32)
    w[0, SUITS.index("C")] = 12.0
    return linear_model(path, w, pad=pad)


def scene() -> tuple[np.ndarray, np.ndarray]:
    """A 20 × 20 box on a green 48 × 48 patch inside a blue card: the index crop (pad 0.15: 46 px) is
    all green; only a wider one (pad 1.0: 60 px) sees the blue."""
    img = np.zeros((200, 200, 3), np.uint8)
    img[40:160, 40:160] = (255, 0, 0)
    img[76:124, 76:124] = (0, 255, 0)
    return img, np.array([[90, 90, 110, 110]], np.float32)


def test_the_wide_crop_turns_the_reading_to_clubs(tmp_path: Path) -> None:
    img, boxes = scene()
    plain = IndexClassifier(index_classifier(tmp_path / "c.onnx"))
    p = plain.box_probabilities(img, boxes)
    assert p.argmax(1).tolist() == [class_id("7S")]
    head = CropHead(suit_head(tmp_path / "s.onnx"), SUIT)
    assert head.pad == 1.0
    q = head.box_probabilities(img, boxes)
    assert q.argmax(1).tolist() == [SUITS.index("C")] and q[0].sum() == pytest.approx(1.0, abs=1e-5)
    fused = IndexClassifier(index_classifier(tmp_path / "c.onnx"), suit_head=head)
    assert fused.box_probabilities(img, boxes).argmax(1).tolist() == [class_id("7C")]


def test_a_head_trained_on_a_tight_crop_sees_no_context(tmp_path: Path) -> None:
    """The pad comes from the model's metadata: at 0.15 the crop is all green, the head is unsure."""
    img, boxes = scene()
    head = CropHead(suit_head(tmp_path / "s.onnx", pad=0.15), SUIT)
    q = head.box_probabilities(img, boxes)
    np.testing.assert_allclose(q[0], 0.25, atol=0.02)
    fused = IndexClassifier(index_classifier(tmp_path / "c.onnx"), suit_head=head)
    assert fused.box_probabilities(img, boxes).argmax(1).tolist() == [class_id("7S")]


def test_the_detector_config_names_the_suit_head(tmp_path: Path) -> None:
    img, boxes = scene()
    script = (Detections(boxes, [0.9], [0]),)
    common = dict(type="fake", script=script, classifier=index_classifier(tmp_path / "c.onnx"), conf=0.3)
    assert named(DetectorConfig(**common, suit_head=suit_head(tmp_path / "s.onnx")), img).names == ["7C"]
    assert named(DetectorConfig(**common), img).names == ["7S"]
    # weight 0 leaves the classifier's reading as it is
    zero = DetectorConfig(**common, suit_head=tmp_path / "s.onnx", suit_weight=0.0)
    assert named(zero, img).names == ["7S"]


def test_bad_suit_heads_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ClassifierNotFoundError):
        CropHead(tmp_path / "none.onnx", SUIT)
    with pytest.raises(HeadError, match=PAD_KEY):
        CropHead(suit_head(tmp_path / "nopad.onnx", pad=None), SUIT)
    with pytest.raises(HeadError, match="4 suits"):
        CropHead(index_classifier(tmp_path / "c.onnx"), SUIT)


def test_fusing_keeps_jokers_background_and_the_total() -> None:
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(55), 200).astype(np.float32)
    q = rng.dirichlet(np.ones(4), 200).astype(np.float32)
    for weight in (0.5, 1.0, 2.0):
        f = fuse(p, suit_columns(q), weight)
        np.testing.assert_allclose(f[:, 52:], p[:, 52:], rtol=1e-6)
        np.testing.assert_allclose(f.sum(1), 1.0, atol=1e-5)
        # within a suit the ranks keep their order; across suits the head's favourite gains
        for suit in range(4):
            block = slice(13 * suit, 13 * suit + 13)
            ratio = f[:, block] / p[:, block]
            np.testing.assert_allclose(ratio, np.repeat(ratio[:, :1], 13, axis=1), rtol=1e-4)
    best = q.argmax(1)
    share = lambda a: np.array([a[i, 13 * s : 13 * s + 13].sum() for i, s in enumerate(best)])  # noqa: E731
    assert (share(fuse(p, suit_columns(q), 1.0)) >= share(p) - 1e-6).all()
    np.testing.assert_array_equal(fuse(p, suit_columns(q), 0.0), p)


def test_write_crop_pad_round_trips_through_onnx_runtime(tmp_path: Path) -> None:
    from models.classifier import write_crop_pad

    path = suit_head(tmp_path / "s.onnx", pad=None)
    write_crop_pad(path, 0.75)
    write_crop_pad(path, 1.25)  # rewriting replaces, never duplicates
    assert CropHead(path, SUIT).pad == 1.25
    assert [m.key for m in onnx.load(str(path)).metadata_props].count(PAD_KEY) == 1
