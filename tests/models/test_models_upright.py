"""``tractorcam heads upright``: upright crops of the labelled indices, and training the head."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner, Result

from models.classifier import CropDataError
from models.cli import heads_app
from models.synth.dataset import make_dataset
from models.tiles import read_yolo_labels
from models.upright import extract_upright_crops
from tests.conftest import need_module
from vision.detectors.base import default_orientation_head
from vision.heads import ORIENTATION, UPRIGHT, CropHead

CARDS = UPRIGHT.outputs[0]


@pytest.fixture(autouse=True)
def committed_orientation_head() -> None:
    """The orientation head is committed: its absence is a failure, never a skip."""
    assert default_orientation_head() is not None, "the committed orientation head is missing"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("upright")
    make_dataset(root, n=2, seed=3, split="val", imgsz=320, progress=False)
    return root


@pytest.fixture(scope="module")
def head() -> CropHead:
    path = default_orientation_head()
    assert path is not None, "the committed orientation head is missing"
    return CropHead(path, ORIENTATION, threads=1)


def upright(*args: str) -> Result:
    """``tractorcam heads upright ARGS``."""
    return CliRunner().invoke(heads_app, ["upright", *args])


def labels(root: Path) -> np.ndarray:
    import cv2

    out = []
    for img in sorted((root / "images" / "val").glob("*")):
        h, w = cv2.imread(str(img)).shape[:2]
        out.append(read_yolo_labels(root / "labels" / "val" / (img.stem + ".txt"), w, h)[0])
    return np.concatenate(out)


def test_every_label_whose_direction_the_head_reads_gives_a_crop(rendered: Path, head: CropHead) -> None:
    data = extract_upright_crops([(rendered, "val")], head, jitter=0, seed=0, size=24)
    truth = labels(rendered)
    # the committed head reads almost every rendered index; the unsure ones are left out
    assert 0.8 * len(truth) <= len(data.y) <= len(truth)
    assert set(data.y.tolist()) <= set(truth.tolist())
    assert data.x.shape[1:] == (3, 24, 24) and data.x.dtype == np.uint8 and data.x.any()
    twice = extract_upright_crops([(rendered, "val")], head, jitter=2, seed=0, size=24)
    assert len(twice.y) >= 1.8 * len(data.y)
    with pytest.raises(CropDataError):
        extract_upright_crops([(rendered, "train")], head, jitter=1, seed=0)


def test_training_exports_a_head_with_54_cards(rendered: Path, tmp_path: Path) -> None:
    need_module("torch")
    out = tmp_path / "u.onnx"
    src = f"{rendered}:val"
    argv = [
        str(out),
        "--train",
        src,
        "--val",
        src,
        "--val-limit",
        "1",
        "--epochs",
        "1",
        "--threads",
        "1",
    ]
    argv += ["--width", "0.25"]
    result = upright(*argv)
    assert result.exit_code == 0, result.output
    head = CropHead(out, UPRIGHT)
    q = head.box_probabilities(
        np.zeros((100, 100, 3), np.uint8), np.array([[40, 40, 60, 60]], np.float32), np.array([[0.0, -1.0]])
    )
    assert q.shape == (1, CARDS) and np.allclose(q.sum(1), 1.0, atol=1e-5)


def test_crops_saved_once_train_a_later_run_and_misfits_are_refused(rendered: Path, tmp_path: Path) -> None:
    need_module("torch")
    src = f"{rendered}:val"
    saved = tmp_path / "r.npz"
    result = upright(
        str(tmp_path / "unused.onnx"), "--train", src, "--save-crops", str(saved), "--epochs", "0"
    )
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "unused.onnx").exists()  # --epochs 0 only cuts and saves
    with np.load(saved) as z:
        assert z["x"].dtype == np.uint8 and len(z["x"]) == len(z["y"]) >= 0.8 * 2 * len(labels(rendered))
    out = tmp_path / "u.onnx"
    common = ["--val", src, "--val-limit", "1", "--epochs", "1", "--threads", "1", "--width", "0.25"]
    result = upright(str(out), "--extra-crops", str(saved), *common)
    assert result.exit_code == 0, result.output
    assert CropHead(out, UPRIGHT).box_probabilities(
        np.zeros((64, 64, 3), np.uint8), np.array([[20, 20, 40, 40]], np.float32), np.array([[0.0, -1.0]])
    ).shape == (1, CARDS)
    background = tmp_path / "bg.npz"  # a classifier's crops: label 54 is its background, not a card
    np.savez(background, x=np.zeros((2, 3, 40, 40), np.uint8), y=np.array([3, CARDS]))
    for bad, why in (
        (["--extra-crops", str(background), *common], "crops must be"),
        (["--extra-crops", str(saved)], "training needs --val"),
        ([], "nothing to train on"),
    ):
        result = upright(str(tmp_path / "v.onnx"), *bad)
        assert result.exit_code == 2 and why in result.stderr, result.output
