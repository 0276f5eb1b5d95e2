import cv2
import numpy as np

from models.tiles import TileSettings, cut_tile, make_tiles, read_yolo_labels, write_data_yaml


def test_cut_tile_clips_and_drops_mostly_outside():
    boxes = np.array([[110, 110, 130, 150], [90, 100, 110, 140], [-15, 0, 5, 40]], np.float32)
    lines = cut_tile(boxes, np.array([3, 4, 5]), 100, 100, 320, min_visible=0.6)
    # box 0 fully inside: centre (20, 30) → (0.0625, 0.09375); box 1 half inside (dropped); box 2 outside.
    assert lines == ["3 0.062500 0.093750 0.062500 0.125000"]


def test_read_labels_to_pixels(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("7 0.5 0.25 0.1 0.2\n")
    cls, boxes = read_yolo_labels(p, 200, 100)
    assert cls.tolist() == [7]
    np.testing.assert_allclose(boxes, [[90, 15, 110, 35]])
    assert len(read_yolo_labels(tmp_path / "none.txt", 10, 10)[0]) == 0


def test_make_tiles_end_to_end(tmp_path):
    src = tmp_path / "src"
    (src / "images" / "train").mkdir(parents=True)
    (src / "labels" / "train").mkdir(parents=True)
    cv2.imwrite(str(src / "images" / "train" / "s0.jpg"), np.full((640, 640, 3), 90, np.uint8))
    (src / "labels" / "train" / "s0.txt").write_text("10 0.5 0.5 0.05 0.1\n")  # 32x64 px index
    n = make_tiles(src, "train", tmp_path / "out", TileSettings(tiles_per_image=3, random_tile_share=0.0))
    assert n == 3
    for k in range(3):
        img = cv2.imread(str(tmp_path / "out" / "images" / "train" / f"s0_{k}.jpg"))
        assert img.shape == (320, 320, 3)
        (line,) = (tmp_path / "out" / "labels" / "train" / f"s0_{k}.txt").read_text().splitlines()
        h = float(line.split()[4]) * 320
        assert line.startswith("10 ") and 16 * 0.99 <= h <= 64 * 1.01  # index height within the target range
    yaml = write_data_yaml(tmp_path / "out", {"train": "train", "val": "train"}).read_text()
    assert "train: images/train" in yaml and "  53: BJ" in yaml


def test_negative_boxes_avoid_indices():
    from models.classifier import negative_boxes
    from vision.detections import box_iou

    boxes = np.array([[100, 100, 130, 150], [200, 50, 230, 100]], np.float32)
    neg = negative_boxes(boxes, 320, 320, 20, np.random.default_rng(0))
    assert len(neg) >= 10
    assert box_iou(neg, boxes).max() < 0.1
    assert (neg[:, 0] >= 0).all() and (neg[:, 3] <= 320 + 1e-3).all()


def test_tiles_command_cuts_val_at_its_own_rate_and_lists_extra_training_folders(tmp_path):
    from typer.testing import CliRunner

    from models.synth.cli import synth_app

    src = tmp_path / "src"
    for split in ("train", "val"):
        (src / "images" / split).mkdir(parents=True)
        (src / "labels" / split).mkdir(parents=True)
        cv2.imwrite(str(src / "images" / split / "s0.jpg"), np.full((640, 640, 3), 90, np.uint8))
        (src / "labels" / split / "s0.txt").write_text("10 0.5 0.5 0.05 0.1\n")
    extra = tmp_path / "faces" / "images" / "train"
    extra.mkdir(parents=True)
    argv = ["tiles", str(src), str(tmp_path / "out"), "--per-image", "3", "--val-per-image", "1"]
    result = CliRunner().invoke(synth_app, [*argv, "--extra-train", str(extra)])
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "out" / "images" / "train").glob("*.jpg"))) == 3
    assert len(list((tmp_path / "out" / "images" / "val").glob("*.jpg"))) == 1
    yaml = (tmp_path / "out" / "data.yaml").read_text()
    assert f"  - images/train\n  - {extra.resolve()}\n" in yaml
