"""Printed matter (unlabelled text negatives) for face tiles and scenes."""

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


def test_every_sheet_kind_is_paper_or_label_with_ink():
    for k, (kind, *_rest) in enumerate(printed.SHEETS):
        sheet = printed.printed_sheet(np.random.default_rng(k), kind, 200, 260, 10.0)
        assert sheet.shape == (260, 200, 3) and sheet.dtype == np.float32
        grey = sheet.mean(axis=2)
        ground = np.median(grey)  # paper (or a label's colour): most of the sheet
        assert (np.abs(grey - ground) > 40).sum() > 100, kind  # text or grid lines were drawn


def test_unknown_sheet_kind_is_refused():
    import pytest

    with pytest.raises(ValueError, match="unknown sheet kind"):
        printed.printed_sheet(np.random.default_rng(0), "poster", 50, 50, 5.0)


def test_lay_sheets_draws_through_the_table_view():
    # table mm -> image px at 2 px/mm: a 300 x 200 mm table fills a 600 x 400 image
    view = np.diag([2.0, 2.0, 1.0])
    canvas = np.full((400, 600, 3), 40.0, np.float32)
    printed.lay_sheets(canvas, view, (300.0, 200.0), np.random.default_rng(1), 2.0, [(150.0, 100.0)], 2)
    light = canvas.mean(axis=2) > 150  # paper (or a light label) landed somewhere
    assert 0 < light.sum() < light.size
    before = canvas.copy()
    printed.lay_sheets(canvas, view, (300.0, 200.0), np.random.default_rng(1), 2.0, [], 0)
    assert np.array_equal(before, canvas)  # count 0 draws nothing


def test_scene_sheets_are_off_by_default_and_unlabelled(monkeypatch):
    import models.synth.scene as scene

    kw = {"width": 320, "height": 320, "designs": ["proc0"], "mode": "table", "card_px": (60.0, 90.0)}
    plain = scene.render_scene(21, **kw)
    zero = scene.render_scene(21, printed=0.0, **kw)
    assert np.array_equal(plain.image, zero.image)  # printed 0: no extra random draw, same scene
    calls = []

    def spy(canvas, view, table_mm, rng, px_per_mm, near, count):
        calls.append(count)
        printed.lay_sheets(canvas, view, table_mm, rng, px_per_mm, near, count)

    monkeypatch.setattr(scene, "lay_sheets", spy)
    texty = [scene.render_scene(s, printed=1.0, **kw) for s in range(21, 24)]
    assert len(calls) == 3 and all(1 <= c <= 3 for c in calls)  # chance 1: every scene gets sheets
    for t in texty:  # labels are cards only
        assert t.cards and all(0 <= c.class_id < 54 for c in t.cards)
