"""Faces cut from labelled photos of a deck in play (models.photo_faces), on rendered photos whose
cards and corners are known: which outlines are cards, that the cut face stands upright and is
named among the photo's cards, and that the faces feed the crop bank and the localiser's tiles."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from models.deck_localiser import write_tiles
from models.photo_faces import (
    FACE_SIZE,
    PhotoFace,
    PhotoFacesError,
    card_quads,
    composed_tiles,
    cut_faces,
    face_bank,
    load_faces,
    save_faces,
)
from models.synth.faces import load_faces as design_faces
from vision.classifier import BACKGROUND
from vision.labels import class_id
from vision.reader import CardReader, default_reader_config


def _face(card: str) -> npt.NDArray[np.uint8]:
    face = design_faces("proc0").faces[card][..., :3]
    return np.asarray(cv2.resize(face, FACE_SIZE, interpolation=cv2.INTER_AREA), np.uint8)


def _lay(photo: npt.NDArray[np.uint8], face: npt.NDArray[np.uint8], quad: list[list[float]]) -> None:
    """``face`` drawn into ``photo`` with its top-left, top-right, bottom-right and bottom-left
    corners at ``quad``."""
    w, h = FACE_SIZE
    src = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    m = cv2.getPerspectiveTransform(src, np.array(quad, np.float32))
    warped = cv2.warpPerspective(face, m, photo.shape[1::-1], flags=cv2.INTER_LINEAR)
    mask = cv2.warpPerspective(np.full((h, w), 255, np.uint8), m, photo.shape[1::-1])
    photo[mask > 127] = warped[mask > 127]


#: A 7♥ lying on its side, seen a little from the side and stretched as the photos are: its
#: top-left corner lies at the right, top (the face turned a quarter clockwise).
SIDEWAYS = [[520.0, 120.0], [530.0, 330.0], [250.0, 345.0], [235.0, 110.0]]


def _photo() -> npt.NDArray[np.uint8]:
    photo = np.full((640, 640, 3), (40, 95, 45), np.uint8)  # green cloth
    _lay(photo, _face("7H"), SIDEWAYS)
    _lay(photo, _face("KS"), [[-60.0, 420.0], [120.0, 410.0], [130.0, 660.0], [-50.0, 670.0]])  # off the edge
    _lay(photo, _face("4C"), [[300.0, 400.0], [460.0, 410.0], [450.0, 630.0], [290.0, 620.0]])
    _lay(photo, _face("9D"), [[380.0, 380.0], [560.0, 420.0], [520.0, 630.0], [350.0, 600.0]])  # over the 4♣
    return photo


def test_only_a_card_lying_whole_and_apart_is_an_outline_and_its_corners_are_found() -> None:
    quads = card_quads(_photo())
    assert len(quads) == 1
    # clockwise from the corner nearest the photo's top-left: the card's top-right corner
    truth = np.array(SIDEWAYS, np.float32)[[3, 0, 1, 2]]
    assert np.abs(quads[0] - truth).max() < 6


def test_a_dark_card_on_a_light_surface_is_found_too() -> None:
    photo = np.full((480, 640, 3), 225, np.uint8)
    _lay(photo, 255 - _face("7H"), [[200.0, 100.0], [380.0, 110.0], [370.0, 380.0], [190.0, 370.0]])
    assert len(card_quads(photo)) == 1
    assert card_quads(np.full((480, 640, 3), 225, np.uint8)) == []


def test_the_cut_face_stands_upright_and_is_named_among_the_photos_cards() -> None:
    reader = CardReader(default_reader_config("onnx"))
    faces = cut_faces(reader, [(_photo(), ["7H", "KS", "4C", "9D"])], log=lambda _s: None)
    assert [f.card for f in faces] == ["7H"]
    truth = _face("7H").astype(np.float32)
    cut = faces[0].face.astype(np.float32)
    assert np.abs(cut - truth).mean() < 20  # the face as printed, not turned
    assert np.abs(np.rot90(cut, 2) - truth).mean() > np.abs(cut - truth).mean()
    # a card the labels do not list is not named, whatever it shows
    assert cut_faces(reader, [(_photo(), ["2S"])], log=lambda _s: None) == []


def test_faces_fill_the_crop_bank_and_the_localisers_tiles(tmp_path: Path) -> None:
    import torch

    faces = [
        PhotoFace("7H", _face("7H"), 0, 0.9),
        PhotoFace("7H", _face("7H"), 1, 0.8),
        PhotoFace("2S", _face("2S"), 1, 0.9),
    ]
    save_faces(tmp_path, faces)
    again = load_faces(tmp_path)
    assert sorted(f.card for f in again) == ["2S", "7H", "7H"]
    assert (tmp_path / "photo-faces.png").is_file()
    box = (4.0, 4.0, 30.0, 62.0)
    bank = face_bank(again, box, "plain")
    assert len(bank) == 3  # two copies of the 7♥, one 2♠; the other places left out
    x, y = bank.crops(256, torch.Generator().manual_seed(0))
    assert x.dtype == torch.uint8 and x.shape[0] == 256
    assert set(y.tolist()) == {class_id("7H"), class_id("2S"), BACKGROUND}
    with pytest.raises(PhotoFacesError):
        face_bank([], box, "plain")
    tiles = composed_tiles(again, box, 12, 320, seed=1)
    assert len(tiles) == 12 and sum(len(labels) for _, labels in tiles) > 0
    for image, labels in tiles:
        assert image.shape == (320, 320, 3)
        assert all(0 <= v <= 1 for b in labels for v in b)
    shown = [(np.full((640, 640, 3), 90, np.uint8), np.array([[100, 100, 124, 130]], np.float32), True)]
    counts = write_tiles(shown, tmp_path / "data", 320, composed=tiles)
    assert counts["composed_tiles"] == 12
    assert len(list((tmp_path / "data" / "images" / "train").glob("c*.png"))) == 12
