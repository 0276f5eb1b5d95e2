"""Printed matter (unlabelled text negatives) for face tiles."""

import doctest

import numpy as np

import models.synth.printed as printed
from models.facetiles import FaceTileSettings, compose_tile
from models.synth.faces import load_faces
from models.synth.printed import lay_printed, printed_patch


def test_module_doctest():
    result = doctest.testmod(printed)
    assert result.attempted >= 1 and result.failed == 0


def test_patch_is_light_paper_with_dark_ink():
    patch = printed_patch(np.random.default_rng(3), letter_px=20.0)
    opaque = patch[:, :, 3] == 255
    assert opaque.sum() > 400
    grey = patch[:, :, :3][opaque].mean(axis=1)
    assert np.median(grey) > 200  # mostly paper
    assert (grey < 120).sum() > 30  # with ink on it


def test_lay_printed_changes_only_where_the_patch_lands():
    rng = np.random.default_rng(4)
    canvas = np.full((200, 200, 3), 60.0, np.float32)
    lay_printed(canvas, rng, 16.0)
    changed = np.abs(canvas - 60.0).max(axis=2) > 1
    assert 0 < changed.sum() < changed.size
    assert canvas.shape == (200, 200, 3) and canvas.dtype == np.float32


def test_text_tiles_label_cards_only_and_draw_text():
    fs = load_faces("proc0")
    plain = FaceTileSettings(face_down_share=0.0, index_px=(30.0, 40.0))
    texty = FaceTileSettings(face_down_share=0.0, index_px=(30.0, 40.0), text_share=1.0)
    a = [compose_tile(np.random.default_rng(s), [fs], plain) for s in range(6)]
    b = [compose_tile(np.random.default_rng(s), [fs], texty) for s in range(6)]
    for _image, labels in b:
        assert all(0 <= cid < 54 for cid, _box in labels)
    # the same seed gives a different tile once text is drawn (the text_share draw comes first)
    assert any(not np.array_equal(x[0], y[0]) for x, y in zip(a, b, strict=True))
    # text_share 0 is the default: no extra random draws, identical tiles
    zero = FaceTileSettings(face_down_share=0.0, index_px=(30.0, 40.0), text_share=0.0)
    c = compose_tile(np.random.default_rng(0), [fs], zero)
    assert np.array_equal(c[0], a[0][0]) and c[1] == a[0][1]
