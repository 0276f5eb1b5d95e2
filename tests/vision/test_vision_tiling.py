import numpy as np
import pytest

from vision.detections import Detections
from vision.detectors import DetectorConfig, UnknownDetectorType, create_detector
from vision.tiling import (
    TiledDetector,
    TilingConfig,
    TilingConfigError,
    focus_tiles,
    plan_tiles,
    pyramid_levels,
)


def test_auto_pyramid_doubles_up_to_twice_native():
    # whole image in one tile, then every doubling, up to 2x (small indices become big enough)
    levels = pyramid_levels(1280, 960, TilingConfig(tile=320))
    assert levels == pytest.approx([0.25, 0.5, 1.0, 2.0])
    assert pyramid_levels(300, 200, TilingConfig(tile=320)) == pytest.approx([320 / 300, 2.0])
    # without upscaling, up to native resolution; a small image is only looked at whole
    assert pyramid_levels(1280, 960, TilingConfig(tile=320, max_upscale=1.0)) == pytest.approx(
        [0.25, 0.5, 1.0]
    )
    assert pyramid_levels(300, 200, TilingConfig(tile=320, max_upscale=1.0)) == pytest.approx([320 / 300])


def test_tiles_cover_every_level_completely():
    cfg = TilingConfig(tile=320, overlap=0.25, max_upscale=1.0)
    tiles = plan_tiles(1000, 700, cfg)
    for scale in {t.scale for t in tiles}:
        level = [t for t in tiles if t.scale == scale]
        lw, lh = level[0].level_width, level[0].level_height
        covered = np.zeros((lh, lw), bool)
        for t in level:
            assert t.x1 - t.x0 <= 320 and t.y1 - t.y0 <= 320
            covered[t.y0 : t.y1, t.x0 : t.x1] = True
        assert covered.all()
    # native level 1000x700 with stride 240: x starts 0,240,480,680; y starts 0,240,380 → 12 tiles
    assert len([t for t in tiles if t.scale == 1.0]) == 12


def test_explicit_level_and_validation():
    assert pyramid_levels(2000, 1000, TilingConfig(levels=(0.5,))) == [0.5]
    with pytest.raises(TilingConfigError):
        TilingConfig(overlap=0.95)
    with pytest.raises(TilingConfigError):
        TilingConfig(levels=(0.0,))


def test_fake_detector_scripted_and_unknown_type():
    script = (Detections([[1, 1, 5, 5]], [0.9], [7]), Detections([[2, 2, 6, 6]], [0.1], [8]))
    fake = create_detector(DetectorConfig(type="fake", script=script, conf=0.5))
    img = np.zeros((50, 60, 3), np.uint8)
    assert fake.detect(img).class_id.tolist() == [7]
    assert len(fake.detect(img)) == 0  # below conf
    assert fake.detect(img).class_id.tolist() == [7]  # cycles
    assert fake.calls == [(60, 50)] * 3
    with pytest.raises(UnknownDetectorType):
        create_detector(DetectorConfig(type="nope"))


def test_tiled_detections_map_back_and_merge():
    # Every tile reports a box at tile pixels (100,100)-(120,130); image 640x480 at one level 1.0.
    script = (Detections([[100, 100, 120, 130]], [0.9], [5]),)
    fake = create_detector(DetectorConfig(type="fake", script=script, imgsz=320))
    tiled = TiledDetector(fake, TilingConfig(tile=320, overlap=0.5, levels=(1.0,)))
    out = tiled.detect(np.zeros((480, 640, 3), np.uint8))
    starts_x, starts_y = [0, 160, 320], [0, 160]
    expected = {(100 + x, 100 + y) for x in starts_x for y in starts_y}
    assert {(int(b[0]), int(b[1])) for b in out.xyxy} == expected
    assert len(fake.calls) == 6 and set(fake.calls) == {(320, 320)}


def test_tiled_scales_back_to_original_and_drops_cut_boxes():
    # Level 0.5 of a 1280x640 image = 640x320 → two tiles at x=0 and x=320 (overlap 0).
    script = (Detections([[10, 10, 30, 40], [300, 10, 320, 40]], [0.9, 0.8], [1, 2]),)
    fake = create_detector(DetectorConfig(type="fake", script=script))
    out = TiledDetector(fake, TilingConfig(tile=320, overlap=0.0, levels=(0.5,))).detect(
        np.zeros((640, 1280, 3), np.uint8)
    )
    # The box touching the first tile's right edge is dropped; in the last tile it is at the image border.
    got = sorted((int(c), tuple(int(v) for v in b)) for c, b in zip(out.class_id, out.xyxy, strict=True))
    assert got == [(1, (20, 20, 60, 80)), (1, (660, 20, 700, 80)), (2, (1240, 20, 1280, 80))]


def test_focus_tiles_are_the_focus_level_windows_over_found_boxes():
    found = Detections([[20, 20, 40, 40]], [0.9], [0])
    # no focus level, or nothing found: no focus tiles
    assert focus_tiles(640, 480, found, TilingConfig()) == []
    cfg = TilingConfig(tile=320, overlap=0.25, focus_upscale=1.0, focus_margin=0.0)
    assert focus_tiles(640, 480, Detections.empty(), cfg) == []
    # level 1.0 of 640x480: x starts 0, 240, 320; y starts 0, 160. The box lies in the first tile only.
    assert [(t.scale, t.x0, t.y0) for t in focus_tiles(640, 480, found, cfg)] == [(1.0, 0, 0)]
    # grown by 8 x its side (20 px → 160 px each way: x -140..200, y -140..200) it also reaches the
    # tiles starting at y 160
    wide = TilingConfig(tile=320, overlap=0.25, focus_upscale=1.0, focus_margin=8.0)
    assert [(t.x0, t.y0) for t in focus_tiles(640, 480, found, wide)] == [(0, 0), (0, 160)]
    # at 2x the box (40..80 level px) and the level is 1280x960
    two = TilingConfig(tile=320, overlap=0.25, focus_upscale=2.0, focus_margin=0.0)
    assert [(t.scale, t.x0, t.y0, t.level_width) for t in focus_tiles(640, 480, found, two)] == [
        (2.0, 0, 0, 1280)
    ]


def test_focus_level_runs_only_where_boxes_were_found_and_adds_its_boxes():
    # Level 0.5 of 640x480 is one 320x240 tile; it finds a box at tile px 10..20 (image 20..40). The
    # focus level 1.0 then runs only on the tile over that box, and what it finds there is merged in.
    script = (
        Detections([[10, 10, 20, 20]], [0.9], [0]),
        Detections([[100, 100, 120, 120]], [0.8], [0]),
    )
    fake = create_detector(DetectorConfig(type="fake", script=script, conf=0.0))
    cfg = TilingConfig(tile=320, overlap=0.25, levels=(0.5,), focus_upscale=1.0, focus_margin=0.0)
    out = TiledDetector(fake, cfg).detect(np.zeros((480, 640, 3), np.uint8))
    assert fake.calls == [(320, 240), (320, 320)]
    assert sorted(tuple(int(v) for v in b) for b in out.xyxy) == [(20, 20, 40, 40), (100, 100, 120, 120)]
    # nothing found at the regular levels: the focus level is not run at all
    empty = create_detector(DetectorConfig(type="fake", script=(Detections.empty(),), conf=0.0))
    assert len(TiledDetector(empty, cfg).detect(np.zeros((480, 640, 3), np.uint8))) == 0
    assert empty.calls == [(320, 240)]


def test_focus_settings_are_validated_and_doctests_pass():
    import doctest

    import vision.tiling

    with pytest.raises(TilingConfigError):
        TilingConfig(focus_upscale=0.0)
    with pytest.raises(TilingConfigError):
        TilingConfig(focus_margin=-1.0)
    result = doctest.testmod(vision.tiling)
    assert result.attempted >= 1 and result.failed == 0
