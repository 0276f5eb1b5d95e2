"""The design library and its one train / held-out split."""

from __future__ import annotations

import numpy as np
import pytest

from models.synth.designs import (
    AISLERIOT,
    ALL,
    BY_NAME,
    HELDOUT,
    HELDOUT_VAL,
    HELDOUT_VAL_PROC,
    KDE_TRAIN,
    KENNARD_TRAIN,
    PROCEDURAL,
    RANDOMISED,
    RANDOMISED_GLYPH,
    RANDOMISED_TTF,
    TRAIN,
    designs_for_split,
)
from models.synth.faces import CARDS, load_faces
from tests.synth.conftest import needs_aisleriot, needs_kde
from vision.labels import CARD_CLASSES


def test_split_is_disjoint_and_complete() -> None:
    train = {d.name for d in TRAIN}
    held = {d.name for d in HELDOUT}
    assert not train & held
    assert train | held == {d.name for d in ALL}
    groups = (
        ALL,
        RANDOMISED,
        RANDOMISED_TTF,
        RANDOMISED_GLYPH,
        KDE_TRAIN,
        KENNARD_TRAIN,
        HELDOUT_VAL,
        HELDOUT_VAL_PROC,
    )
    assert len(BY_NAME) == sum(len(g) for g in groups)


def test_selection_designs_are_unseen_and_not_the_test() -> None:
    """heldout_val (for choosing readers) shares no design, and no source file, with training or the test."""
    val = {d.name for d in HELDOUT_VAL}
    seen = {
        d.name for d in TRAIN + RANDOMISED + RANDOMISED_TTF + RANDOMISED_GLYPH + KDE_TRAIN + KENNARD_TRAIN
    }
    assert val and not val & seen and not val & {d.name for d in HELDOUT}
    proc = {d.name for d in HELDOUT_VAL_PROC}
    assert len(proc) == 40 and not proc & (seen | val | {d.name for d in HELDOUT})
    # random decks from the glyph-suit era: drawn by models.synth.randomised, not the hand-made 0-5
    from models.synth.randomised import GLYPH_SUITS_FROM

    assert all(d.kind == "procedural" and int(d.source) >= GLYPH_SUITS_FROM for d in HELDOUT_VAL_PROC)
    sources = [d.source for d in AISLERIOT + KDE_TRAIN + HELDOUT_VAL]
    assert len(sources) == len(set(sources))
    # KDE decks that aisleriot also draws (under another file name) are not used at all
    assert not {"svg-gm-paris", "svg-tigullio-international", "svg-nicu-ornamental", "svg-dondorf"} & {
        d.source.split("/")[0] for d in KDE_TRAIN + HELDOUT_VAL
    }


def test_heldout_share() -> None:
    held_a = [d for d in HELDOUT if d.kind == "aisleriot"]
    assert 0.15 <= len(held_a) / len(AISLERIOT) <= 0.3
    assert any(d.kind == "procedural" for d in HELDOUT)
    assert any(d.kind == "procedural" for d in TRAIN)
    skipped = {"swiss-xvii.svgz", "tarocco.svgz", "atlasnye_skat.svgz"}
    assert not skipped & {d.source for d in AISLERIOT}


def test_splits_by_name() -> None:
    assert designs_for_split("heldout") == HELDOUT
    assert designs_for_split("heldout_val") == HELDOUT_VAL
    assert designs_for_split("heldout_val_proc") == HELDOUT_VAL_PROC
    assert designs_for_split("train") == designs_for_split("val") == TRAIN
    with pytest.raises(ValueError):
        designs_for_split("test")


def test_module_doctests() -> None:
    import doctest

    import models.synth.designs

    result = doctest.testmod(models.synth.designs)
    assert result.attempted >= 1 and result.failed == 0


def test_card_names_are_detector_classes() -> None:
    assert sorted(CARDS) == sorted(CARD_CLASSES)


@pytest.mark.parametrize("design", PROCEDURAL, ids=lambda d: d.name)
def test_procedural_faces(design) -> None:
    fs = load_faces(design.name)
    w, h = fs.size
    assert all(f.shape == (h, w, 4) for f in fs.faces.values())
    x1, y1, x2, y2 = fs.index_box
    assert 0 <= x1 < x2 <= w / 2 and 0 <= y1 < y2 <= h / 2
    boxes = fs.index_boxes()
    assert set(boxes) == {"tl", "br"}
    # the bottom-right index is the top-left one turned 180°: same pixels
    for card in ("10H", "AS", "QC", "BJ"):
        f = fs.faces[card][:, :, :3].astype(int)
        bx = [int(round(v)) for v in boxes["tl"]]
        br = [int(round(v)) for v in boxes["br"]]
        tl = f[bx[1] : bx[3], bx[0] : bx[2]]
        rot = f[::-1, ::-1][h - br[3] : h - br[1], w - br[2] : w - br[0]]
        assert tl.shape == rot.shape
        assert np.abs(tl - rot).mean() < 12
        assert tl.std() > 20  # there is ink in the index box


def _ink_share_inside(face: np.ndarray, box: tuple[float, float, float, float]) -> float:
    """Share of the dark ink in the face's top-left region (inside the card's frame) lying in box."""
    h, w = face.shape[:2]
    region = face[int(0.04 * h) : int(0.4 * h), int(0.04 * w) : int(0.3 * w), :3].astype(int)
    ys, xs = np.nonzero(region.mean(axis=2) < 128)
    ys, xs = ys + int(0.04 * h), xs + int(0.04 * w)
    x1, y1, x2, y2 = box
    inside = (xs >= x1 - 1) & (xs <= x2 + 1) & (ys >= y1 - 1) & (ys <= y2 + 1)
    return float(inside.mean()) if len(xs) else 0.0


@pytest.mark.parametrize("design", PROCEDURAL, ids=lambda d: d.name)
def test_joker_boxes_cover_the_joker_mark(design) -> None:
    # procedural jokers print JOKER downwards, far below the rank + suit box of the other cards:
    # their labels use the word's own box, the suit cards keep the design's box
    fs = load_faces(design.name)
    assert fs.index_boxes("AS") == fs.index_boxes() == fs.index_boxes(None)
    for card in ("SJ", "BJ"):
        own = fs.index_boxes(card)["tl"]
        assert own != fs.index_box
        assert _ink_share_inside(fs.faces[card], own) > 0.95
        # the design's box cuts the word off and is mostly blank card
        assert _ink_share_inside(fs.faces[card], fs.index_box) < 0.9
        area = lambda b: (b[2] - b[0]) * (b[3] - b[1])  # noqa: E731
        assert area(own) < 0.6 * area(fs.index_box)
        w, h = fs.size
        assert fs.index_boxes(card)["br"] == pytest.approx((w - own[2], h - own[3], w - own[0], h - own[1]))


def _saturation(face: np.ndarray) -> float:
    import cv2

    hsv = cv2.cvtColor(face[:, :, :3], cv2.COLOR_BGR2HSV)
    return float(hsv[:, :, 1][face[:, :, 3] > 200].mean())


@needs_aisleriot
@pytest.mark.parametrize("name", ["tigullio", "anglo_modern", "neoclassical", "paris", "orell"])
def test_aisleriot_faces_and_jokers(name: str) -> None:
    fs = load_faces(name)
    w, h = fs.size
    assert len(fs.faces) == 54 and fs.back.shape == (h, w, 4)
    # the big joker is the coloured one
    assert _saturation(fs.faces["BJ"]) > _saturation(fs.faces["SJ"]) + 5
    # red suits are red, black suits are not, in the index box
    x1, y1, x2, y2 = (int(round(v)) for v in fs.index_box)
    red = fs.faces["7H"][y1:y2, x1:x2, :3].astype(int)
    black = fs.faces["7S"][y1:y2, x1:x2, :3].astype(int)
    assert (red[:, :, 2] - red[:, :, 0]).max() > 80
    assert (black[:, :, 2] - black[:, :, 0]).max() < 60
    # the index box catches the printed rank: there is ink there on every suit card
    for card in fs.cards()[:52]:
        crop = fs.faces[card][y1:y2, x1:x2, :3]
        assert crop.std() > 15, card


@needs_aisleriot
@pytest.mark.parametrize("name", ["tigullio", "anglo_modern", "gnomangelo", "orell", "bellot"])
def test_aisleriot_joker_marks_are_found(name: str) -> None:
    # each of these jokers prints a star, an emblem or JOKER in its top-left corner
    fs = load_faces(name)
    w, h = fs.size
    for card in ("SJ", "BJ"):
        x1, y1, x2, y2 = fs.card_boxes[card]
        assert 0 <= x1 < x2 <= 0.35 * w and 0 <= y1 < y2 <= 0.42 * h
        crop = fs.faces[card][int(y1) : int(y2), int(x1) : int(x2), :3]
        assert crop.std() > 20  # ink, not blank card
        dx1, dy1, dx2, dy2 = fs.index_box
        assert (x2 - x1) * (y2 - y1) < (dx2 - dx1) * (dy2 - dy1)  # a mark, not the rank + suit box


@needs_kde
@pytest.mark.parametrize("design", KDE_TRAIN + HELDOUT_VAL, ids=lambda d: d.name)
def test_kde_faces(design) -> None:
    fs = load_faces(design.name)
    w, h = fs.size
    assert len(fs.faces) == 54 and fs.back.shape == (h, w, 4)
    assert 0.65 < w / h < 0.8  # a playing card, not a whole sheet
    assert fs.cards() == CARDS[:52]  # no jokers face up
    # all 52 faces differ from each other and from the back
    flat = {fs.faces[c].tobytes() for c in CARDS[:52]} | {fs.back.tobytes()}
    assert len(flat) == 53
    x1, y1, x2, y2 = (int(round(v)) for v in fs.index_box)
    assert x2 - x1 < 0.3 * w and y2 - y1 < 0.4 * h
    red = fs.faces["7H"][y1:y2, x1:x2, :3].astype(int)
    black = fs.faces["7S"][y1:y2, x1:x2, :3].astype(int)
    assert (red[:, :, 2] - red[:, :, 0]).max() > 80
    assert (black[:, :, 2] - black[:, :, 0]).max() < 60
    for card in fs.cards():
        assert fs.faces[card][y1:y2, x1:x2, :3].std() > 15, card
