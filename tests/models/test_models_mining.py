"""Hard-example mining: a detector's boxes on labelled images become labelled or background crops."""

import cv2
import numpy as np
import pytest

from models.classifier import CropDataError, CropSet
from models.mining import keep_background, mine_crops
from tests.conftest import need_module
from vision.classifier import BACKGROUND
from vision.labels import class_id
from vision.tiling import TilingConfig

need_module("onnx")
from tests.vision.test_vision_onnx_backend import head_model  # noqa: E402


def dataset(root, boxes_yolo):
    (root / "images" / "train").mkdir(parents=True)
    (root / "labels" / "train").mkdir(parents=True)
    img = np.full((320, 320, 3), 200, np.uint8)
    cv2.imwrite(str(root / "images" / "train" / "a.png"), img)
    lines = [f"{c} {x} {y} {w} {h}" for c, x, y, w, h in boxes_yolo]
    (root / "labels" / "train" / "a.txt").write_text("\n".join(lines) + "\n")


def test_matched_boxes_take_the_label_and_stray_boxes_are_background(tmp_path):
    qh = class_id("QH")
    # one labelled index centred at (100, 100), 20 x 40 px
    dataset(tmp_path / "d", [(qh, 100 / 320, 100 / 320, 20 / 320, 40 / 320)])
    det = head_model(
        tmp_path / "det.onnx",
        [
            (101, 101, 20, 40, 0, 0.9),  # on the label (IoU ~0.9): a QH crop
            (250, 250, 20, 40, 0, 0.5),  # nowhere near a label: background
            (100, 115, 20, 40, 0, 0.4),  # half on the label (IoU ~0.45): ambiguous, dropped
            (40, 250, 20, 40, 0, 0.001),  # below det_conf: ignored
        ],
        classes=1,
    )
    one_tile = TilingConfig(levels=(1.0,))
    crops = mine_crops(det, [(tmp_path / "d", "train")], seed=0, size=40, tiling=one_tile)
    assert sorted(crops.y.tolist()) == sorted([qh, BACKGROUND])
    assert crops.x.shape == (2, 3, 40, 40) and crops.x.dtype == np.uint8


def test_no_boxes_at_all_is_an_error(tmp_path):
    dataset(tmp_path / "d", [(0, 0.5, 0.5, 0.1, 0.1)])
    det = head_model(tmp_path / "det.onnx", [(160, 160, 20, 40, 0, 0.001)], classes=1)
    with pytest.raises(CropDataError):
        mine_crops(det, [(tmp_path / "d", "train")], seed=0)


def test_keep_background_keeps_every_named_crop_and_n_background():
    y = np.array([BACKGROUND, 3, BACKGROUND, BACKGROUND, 7, BACKGROUND, 3], np.int64)
    x = np.arange(len(y), dtype=np.uint8).reshape(-1, 1, 1, 1).repeat(2, axis=1)
    out = keep_background(CropSet(x, y), 2, seed=0)
    assert sorted(out.y.tolist()) == sorted([3, 7, 3, BACKGROUND, BACKGROUND])
    # crops stay with their labels and in their order
    assert all(int(y[int(i)]) == int(c) for i, c in zip(out.x[:, 0, 0, 0], out.y, strict=True))
    assert list(out.x[:, 0, 0, 0]) == sorted(out.x[:, 0, 0, 0])
    assert len(keep_background(CropSet(x, y), 10, seed=0).y) == len(y)  # fewer than n: all kept
    with pytest.raises(ValueError):
        keep_background(CropSet(x, y), -1, seed=0)


def test_saved_crop_sets_load_back_and_bad_files_are_refused(tmp_path):
    from models.classifier import load_crops

    x = np.random.default_rng(0).integers(0, 255, (5, 3, 8, 8), dtype=np.uint8)
    y = np.array([1, BACKGROUND, 3, 3, 0])
    np.savez(tmp_path / "m.npz", x=x, y=y)
    got = load_crops(tmp_path / "m.npz")
    assert np.array_equal(got.x, x) and got.y.tolist() == y.tolist() and got.y.dtype == np.int64
    with pytest.raises(CropDataError, match="not found"):
        load_crops(tmp_path / "missing.npz")
    np.savez(tmp_path / "short.npz", x=x, y=y[:3])
    with pytest.raises(CropDataError, match="one label per crop"):
        load_crops(tmp_path / "short.npz")
    np.savez(tmp_path / "nox.npz", y=y)
    with pytest.raises(CropDataError, match="arrays x and y"):
        load_crops(tmp_path / "nox.npz")
