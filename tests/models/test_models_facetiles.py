from dataclasses import replace

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from models.facetiles import FaceTileSettings, compose_tile
from models.synth.cli import synth_app
from models.synth.faces import load_faces


def test_composed_tiles_have_in_tile_labels_of_the_drawn_cards():
    fs = load_faces("proc0")
    rng = np.random.default_rng(3)
    settings = FaceTileSettings(face_down_share=0.0, index_px=(30.0, 40.0))
    n_labels = 0
    for _ in range(5):
        image, labels = compose_tile(rng, [fs], settings)
        assert image.shape == (320, 320, 3) and image.dtype == np.uint8
        for cid, (x1, y1, x2, y2) in labels:
            assert 0 <= cid < 54
            assert 0 <= x1 < x2 <= 320 and 0 <= y1 < y2 <= 320
            # an index 30-40 px tall (rotation can widen the box up to ~1.5x)
            assert 20 <= max(x2 - x1, y2 - y1) <= 65
        n_labels += len(labels)
    assert n_labels >= 5


def _label_names(design: str, settings: FaceTileSettings, tiles: int = 12) -> list[str]:
    from vision.labels import class_name

    rng = np.random.default_rng(5)
    fs = load_faces(design)
    return [class_name(cid) for _ in range(tiles) for cid, _box in compose_tile(rng, [fs], settings)[1]]


def test_joker_share_sets_how_often_jokers_are_drawn():
    base = FaceTileSettings(face_down_share=0.0, index_px=(30.0, 40.0))
    only = _label_names("proc0", replace(base, joker_share=1.0))
    never = _label_names("proc0", replace(base, joker_share=0.0))
    half = _label_names("proc0", replace(base, joker_share=0.5), tiles=40)
    assert only and set(only) <= {"BJ", "SJ"} and {"BJ", "SJ"} <= set(only)
    assert never and not {"BJ", "SJ"} & set(never)
    share = sum(n in ("BJ", "SJ") for n in half) / len(half)
    assert 0.3 < share < 0.7


def test_joker_share_on_a_deck_without_jokers_draws_its_other_cards():
    names = _label_names(
        "anglo", FaceTileSettings(face_down_share=0.0, index_px=(30.0, 40.0), joker_share=1.0)
    )
    assert names and not {"BJ", "SJ"} & set(names)


def test_small_index_range_gives_small_labelled_boxes():
    # the held-out scenes hold many 9-16 px indices; tiles drawn at that range must label them so
    rng = np.random.default_rng(8)
    settings = FaceTileSettings(face_down_share=0.0, index_px=(9.0, 12.0))
    sides = [
        max(x2 - x1, y2 - y1)
        for _ in range(6)
        for _cid, (x1, y1, x2, y2) in compose_tile(rng, [load_faces("proc0")], settings)[1]
    ]
    assert sides and min(sides) >= 6 and max(sides) <= 20


def test_cli_index_px_reaches_the_settings(monkeypatch, tmp_path):
    import models.facetiles as ft
    import models.tiles

    seen = []
    monkeypatch.setattr(
        ft, "make_face_tiles", lambda out, split, n, names, seed, settings: seen.append(settings)
    )
    monkeypatch.setattr(models.tiles, "write_data_yaml", lambda out, splits: out / "data.yaml")
    runner = CliRunner()
    args = ["facetiles", str(tmp_path), "--train", "1", "--val", "1", "--designs", "kde"]
    result = runner.invoke(synth_app, [*args, "--index-px", "9", "22"])
    assert result.exit_code == 0, result.output
    assert [s.index_px for s in seen] == [(9.0, 22.0), (9.0, 22.0)]
    seen.clear()
    result = runner.invoke(synth_app, args)
    assert result.exit_code == 0, result.output
    assert [s.index_px for s in seen] == [(16.0, 64.0), (16.0, 64.0)]


@pytest.mark.parametrize("bad", [["12", "9"], ["2", "9"], ["9", "400"]])
def test_cli_refuses_a_bad_index_range(tmp_path, bad):
    result = CliRunner().invoke(synth_app, ["facetiles", str(tmp_path), "--index-px", *bad])
    assert result.exit_code == 2 and "--index-px" in result.stderr
    assert not (tmp_path / "data.yaml").exists()


def test_empty_tiles_show_no_card_face_and_carry_no_label():
    fs = load_faces("proc0")
    rng = np.random.default_rng(8)
    settings = FaceTileSettings(face_down_share=0.0, index_px=(30.0, 40.0), empty_share=1.0)
    for _ in range(6):
        image, labels = compose_tile(rng, [fs], settings)
        assert labels == [] and image.shape == (320, 320, 3)
    # the same settings without the empty share label cards on most tiles
    full = [compose_tile(rng, [fs], replace(settings, empty_share=0.0))[1] for _ in range(6)]
    assert sum(bool(labels) for labels in full) >= 4


def test_bare_surfaces_replace_the_table_and_keep_the_cards_labelled():
    fs = load_faces("proc0")
    settings = FaceTileSettings(face_down_share=0.0, index_px=(30.0, 40.0), bare_share=1.0)
    labelled = [compose_tile(np.random.default_rng(k), [fs], settings)[1] for k in range(6)]
    assert sum(bool(labels) for labels in labelled) >= 4
    table = compose_tile(np.random.default_rng(2), [fs], replace(settings, bare_share=0.0))[0]
    bare = compose_tile(np.random.default_rng(2), [fs], settings)[0]
    assert not np.array_equal(table, bare)


@pytest.mark.parametrize("kind", ["speckled", "terrazzo", "granite", "plain", "paper"])
def test_each_bare_surface_is_a_valid_image_and_seeded(kind):
    from models.synth.textures import bare_surface

    a = bare_surface(np.random.default_rng(4), 96, kind)
    b = bare_surface(np.random.default_rng(4), 96, kind)
    assert a.shape == (96, 96, 3) and a.dtype == np.float32
    assert a.min() >= 0 and a.max() <= 255
    assert np.array_equal(a, b)
    # dots, chips and crystals stand out of their surroundings; plain and paper do not
    grey = bare_surface(np.random.default_rng(1), 160, kind).mean(2)
    marks = float((np.abs(grey - cv2.GaussianBlur(grey, (0, 0), 4)) > 20).mean())
    assert (marks > 0.001) if kind in ("speckled", "terrazzo", "granite") else (marks < 0.001)


def test_an_unknown_bare_surface_is_refused():
    from models.synth.textures import bare_surface

    with pytest.raises(ValueError, match="bare surface"):
        bare_surface(np.random.default_rng(0), 32, "marble")
