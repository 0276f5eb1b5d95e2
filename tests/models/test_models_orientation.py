"""``tractorcam heads orientation``: reading-direction labels from the renderer, turned crops, training."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from models.classifier import CropDataError, CropSet
from models.cli import heads_app
from models.orientation import angle_bin, extract_oriented_crops, index_up, turned
from models.synth.dataset import make_dataset
from tests.conftest import need_module
from vision.orientation import BINS


def test_index_up_follows_the_face_and_br_reads_the_other_way() -> None:
    # an index box whose face top edge (TL -> TR) lies on the image's left: the card is turned 90°
    # counter-clockwise, so its glyphs' top points to -x
    quad = [[0, 10], [0, 0], [20, 0], [20, 10]]
    assert index_up(quad, "tl").tolist() == [-1.0, 0.0]
    assert index_up(quad, "br").tolist() == [1.0, -0.0]
    assert (angle_bin(index_up(quad, "tl")), angle_bin(index_up(quad, "br"))) == (4, 0)
    with pytest.raises(KeyError):
        index_up(quad, "tr")


def test_turning_a_crop_a_quarter_moves_its_label_two_sectors() -> None:
    x = np.zeros((1, 3, 6, 6), np.uint8)
    x[0, :, 0, 2:4] = 255  # a bar on the top edge: the crop reads upright (sector 2)
    t = turned(CropSet(x, np.array([2])))
    assert t.y.tolist() == [2, 4, 6, 0]
    rows, cols = np.nonzero(t.x[1, 0])  # turned counter-clockwise: the bar is on the left edge
    assert set(cols.tolist()) == {0} and set(rows.tolist()) == {2, 3}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("orient")
    make_dataset(root, n=2, seed=3, split="val", imgsz=320, progress=False)
    return root


def test_a_cards_two_indices_get_opposite_sectors(rendered: Path) -> None:
    """From the annotations alone: every card with both ``tl`` and ``br`` visible reads 180° apart."""
    checked = 0
    for ann in (rendered / "annotations" / "val").glob("*.json"):
        for card in json.loads(ann.read_text())["cards"]:
            ups = {
                c["corner"]: index_up(c["quad"], c["corner"])
                for c in card["corners"]
                if c["corner"] in ("tl", "br")
            }
            if len(ups) == 2:
                assert float(ups["tl"] @ ups["br"]) < -0.95
                checked += 1
    assert checked > 0


def test_crops_are_cut_for_visible_tl_and_br_indices_only(rendered: Path) -> None:
    data = extract_oriented_crops([(rendered, "val")], jitter=1, seed=0, size=24)
    expected = sum(
        1
        for ann in (rendered / "annotations" / "val").glob("*.json")
        for card in json.loads(ann.read_text())["cards"]
        if card["face_up"]
        for c in card["corners"]
        if c["corner"] in ("tl", "br") and c["visible"] >= 0.6
    )
    assert len(data.y) == expected > 0
    assert data.x.shape[1:] == (3, 24, 24) and set(data.y.tolist()) <= set(range(BINS))
    with pytest.raises(CropDataError):
        extract_oriented_crops([(rendered, "train")], jitter=1, seed=0)


def test_training_exports_a_head_with_eight_sectors(rendered: Path, tmp_path: Path) -> None:
    need_module("torch")
    from vision.heads import ORIENTATION, CropHead

    out = tmp_path / "o.onnx"
    src = f"{rendered}:val"
    args = [str(out), "--train", src, "--val", src, "--epochs", "1", "--threads", "1", "--width", "0.25"]
    result = CliRunner().invoke(heads_app, ["orientation", *args])
    assert result.exit_code == 0, result.output
    head = CropHead(out, ORIENTATION)
    p = head.probabilities(np.zeros((2, 3, head.size, head.size), np.float32))
    assert p.shape == (2, BINS) and np.allclose(p.sum(1), 1.0, atol=1e-5)
