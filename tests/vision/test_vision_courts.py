"""The courts step (vision.courts): an enrolled deck's court cards named from the whole face when
the corner prints only the suit (guyenne-classic)."""

from pathlib import Path

import cv2
import numpy as np
import pytest

from models.synth.faces import load_faces
from vision.courts import CourtFaces, CourtFacesError, name_courts
from vision.detections import Detections
from vision.labels import CARD_CLASSES, class_id
from vision.reader import model_options

CARD_H = 180.0


@pytest.fixture(scope="module")
def guyenne():
    return load_faces("guyenne-classic")


@pytest.fixture(scope="module")
def enrolled(guyenne, tmp_path_factory):
    """The deck's faces as enrollment writes them (``CARD.png``), a little unlike the table's: a
    blur and another brightness, so the match is not pixel for pixel."""
    folder = tmp_path_factory.mktemp("deck") / "faces"
    folder.mkdir()
    for card in CARD_CLASSES:
        face = guyenne.faces[card][:, :, :3]
        face = cv2.GaussianBlur(face, (3, 3), 0)
        face = np.clip(face.astype(np.float32) * 0.9 + 12, 0, 255).astype(np.uint8)
        cv2.imwrite(str(folder / f"{card}.png"), face)
    return folder


def lay(guyenne, card, angle, centre=(400, 330), cover=None, size=(800, 660)):
    """An image with ``card`` turned by ``angle`` degrees (counter-clockwise) about ``centre`` at
    :data:`CARD_H`; returns it and both index boxes (axis-aligned) with their reading directions.
    ``cover``: another card laid over the right half of it."""
    face = guyenne.faces[card][:, :, :3]
    fh, fw = face.shape[:2]
    s = CARD_H / fh
    rot = cv2.getRotationMatrix2D((fw * s / 2, fh * s / 2), angle, 1.0)
    m = rot @ np.array([[s, 0, 0], [0, s, 0], [0, 0, 1]])
    m[:, 2] += np.array(centre) - np.array([fw * s / 2, fh * s / 2])
    image = np.full((size[1], size[0], 3), (60, 110, 40), np.uint8)
    warped = cv2.warpAffine(face, m, size)
    mask = cv2.warpAffine(np.full((fh, fw), 255, np.uint8), m, size) > 0
    image[mask] = warped[mask]
    if cover is not None:
        other = guyenne.faces[cover][:, :, :3]
        mo = m.copy()
        mo[:, 2] += m[:, :2] @ np.array([fw * 0.5, fh * 0.1])
        image = np.where(
            (cv2.warpAffine(np.full((fh, fw), 255, np.uint8), mo, size) > 0)[:, :, None],
            cv2.warpAffine(other, mo, size),
            image,
        )
    image = np.clip(image.astype(np.float32) + np.random.default_rng(0).normal(0, 4, image.shape), 0, 255)
    boxes, ups = [], []
    a = np.deg2rad(angle)
    up = np.array([-np.sin(a), -np.cos(a)])  # (0, -1) turned counter-clockwise on screen
    for corner, direction in (("tl", up), ("br", -up)):
        x1, y1, x2, y2 = guyenne.index_boxes(card)[corner]
        pts = np.array([[x1, y1, 1], [x2, y1, 1], [x2, y2, 1], [x1, y2, 1]]) @ m.T
        boxes.append([*pts.min(0), *pts.max(0)])
        ups.append(direction)
    return image.astype(np.uint8), np.array(boxes, np.float32), np.array(ups, np.float32)


def unsure_courts(n, suit):
    """Probabilities split evenly over one suit's jack, queen and king."""
    p = np.full((n, 55), 0.001, np.float32)
    for rank in "JQK":
        p[:, class_id(rank + suit)] = 0.3
    return p


@pytest.mark.parametrize("angle", [0, 35, 150, 260])
def test_each_court_is_named_from_its_face_at_any_angle_from_either_corner(guyenne, enrolled, angle):
    faces = CourtFaces.from_folder(enrolled)
    for trio in CourtFaces.court_trios():
        for card in trio:
            image, xyxy, up = lay(guyenne, card, angle)
            boxes = Detections(xyxy, np.ones(2, np.float32), np.zeros(2, np.int64), up=up)
            p = unsure_courts(2, card[-1])
            out = name_courts(image, boxes, p, faces, CARD_H * 0.96, 5.0)
            assert [CARD_CLASSES[k] for k in out.argmax(1)] == [card, card], (card, angle)
            assert (out[:, class_id(card)] >= 0.9 - 1e-6).all() and np.allclose(
                out.sum(1), p.sum(1), atol=0.05
            )


def test_the_art_settles_a_suit_the_corner_left_in_doubt(guyenne, enrolled):
    """The corner favours clubs' courts (a small pip: clubs or spades); the face is the jack of
    spades: named from its art, and the rest of the index's probability scaled to make room."""
    faces = CourtFaces.from_folder(enrolled)
    image, xyxy, up = lay(guyenne, "JS", 70)
    boxes = Detections(xyxy, np.ones(2, np.float32), np.zeros(2, np.int64), up=up)
    p = np.full((2, 55), 0.0, np.float32)
    for card in ("JC", "QC", "KC"):
        p[:, class_id(card)] = 0.15
    p[:, class_id("JS")] = 0.05
    p[:, 54] = 0.5  # background
    out = name_courts(image, boxes, p, faces, CARD_H, 5.0)
    assert [CARD_CLASSES[k] for k in out.argmax(1)] == ["JS", "JS"]
    assert np.allclose(out.sum(1), 1.0, atol=1e-5) and (out[:, 54] < 0.5).all()


def test_the_card_size_can_come_from_the_index_box(guyenne, enrolled):
    """Without the table's card size, the height is estimated from the index box and the pair
    ratio: a ratio that puts it near the truth names the card."""
    faces = CourtFaces.from_folder(enrolled)
    image, xyxy, up = lay(guyenne, "QD", 20)
    boxes = Detections(xyxy[:1], np.ones(1, np.float32), np.zeros(1, np.int64), up=up[:1])
    side = float(max(xyxy[0, 2] - xyxy[0, 0], xyxy[0, 3] - xyxy[0, 1]))
    ratio = CARD_H / side / (88 / 82)
    out = name_courts(image, boxes, unsure_courts(1, "D"), faces, None, ratio)
    assert CARD_CLASSES[int(out[0].argmax())] == "QD"


def test_a_half_covered_court_is_never_named_wrong(guyenne, enrolled):
    """A court card with another card over its right part: named right or left unsure, never wrong."""
    faces = CourtFaces.from_folder(enrolled)
    for card, cover in (("KH", "9S"), ("JC", "QS"), ("QS", "KC")):
        image, xyxy, up = lay(guyenne, card, 10, cover=cover)
        boxes = Detections(xyxy[:1], np.ones(1, np.float32), np.zeros(1, np.int64), up=up[:1])
        p = unsure_courts(1, card[-1])
        out = name_courts(image, boxes, p, faces, CARD_H, 5.0)
        assert np.array_equal(out, p) or CARD_CLASSES[int(out[0].argmax())] == card


def test_sure_readings_and_other_cards_are_left_alone(guyenne, enrolled):
    faces = CourtFaces.from_folder(enrolled)
    image, xyxy, up = lay(guyenne, "KS", 0)
    p = np.full((2, 55), 0.001, np.float32)
    p[0, class_id("QS")] = 0.95  # sure (wrong, but the corner's reading stands)
    p[1, class_id("9S")] = 0.6  # not a court card
    boxes = Detections(xyxy, np.ones(2, np.float32), np.zeros(2, np.int64), up=up)
    assert np.array_equal(name_courts(image, boxes, p, faces, CARD_H, 5.0), p)


@pytest.mark.parametrize("wrong", [None, "nan", "quarter"])
def test_a_court_whose_reading_direction_is_unknown_or_a_quarter_off_is_still_named(guyenne, enrolled, wrong):
    """A lone suit sign leaves the orientation head unsure: no direction, or one a quarter turn off."""
    faces = CourtFaces.from_folder(enrolled)
    image, xyxy, up = lay(guyenne, "KS", 25)
    if wrong == "nan":
        up = np.full((2, 2), np.nan, np.float32)
    elif wrong == "quarter":
        up = np.stack([up[:, 1], -up[:, 0]], 1)
    boxes = Detections(xyxy, np.ones(2, np.float32), np.zeros(2, np.int64), up=None if wrong is None else up)
    out = name_courts(image, boxes, unsure_courts(2, "S"), faces, CARD_H, 5.0)
    assert [CARD_CLASSES[k] for k in out.argmax(1)] == ["KS", "KS"]


def test_an_enrolled_folder_with_faces_turns_the_courts_step_on(tmp_path: Path, enrolled):
    (tmp_path / "classifier.onnx").write_bytes(b"")
    assert "court_faces" not in model_options(tmp_path)
    (tmp_path / "faces").symlink_to(enrolled)
    assert model_options(tmp_path)["court_faces"] == tmp_path / "faces"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CourtFacesError, match="KS.png|JS.png"):
        CourtFaces.from_folder(empty)
