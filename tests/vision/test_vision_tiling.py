import numpy as np
import pytest

from vision.detections import Detections
from vision.detectors import DetectorConfig, UnknownDetectorType, create_detector
from vision.tiling import (
    TiledDetector,
    TilingConfig,
    TilingConfigError,
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
