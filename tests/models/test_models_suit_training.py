"""``tractorcam heads classifier --target suit``: the suit head's crops, labels and exported file."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner, Result

from models.classifier import CropSet, extract_crops, suit_targets
from models.cli import heads_app
from tests.conftest import need_module
from vision.labels import SUITS, class_id

need_module("torch")
need_module("onnx")


def classifier(*args: str) -> Result:
    """``tractorcam heads classifier ARGS``."""
    return CliRunner().invoke(heads_app, ["classifier", *args])


def dataset(root: Path, cards: list[str]) -> None:
    """One 320 px image: a white 20 × 20 index per card on grey, in a row, with a blue square 30 px to
    its right (context that only a padded crop sees)."""
    (root / "images" / "train").mkdir(parents=True)
    (root / "labels" / "train").mkdir(parents=True)
    img = np.full((320, 320, 3), 128, np.uint8)
    lines = []
    for k, card in enumerate(cards):
        x, y = 30 + 70 * k, 100
        img[y : y + 20, x : x + 20] = 255
        img[y : y + 20, x + 30 : x + 40] = (255, 0, 0)
        lines.append(f"{class_id(card)} {(x + 10) / 320} {(y + 10) / 320} {20 / 320} {20 / 320}")
    cv2.imwrite(str(root / "images" / "train" / "a.png"), img)
    (root / "labels" / "train" / "a.txt").write_text("\n".join(lines) + "\n")


def test_suit_targets_follow_the_class_blocks() -> None:
    names = ["2S", "AS", "10H", "KD", "3C", "SJ", "BJ"]
    data = CropSet(
        np.zeros((len(names) + 1, 3, 4, 4), np.uint8), np.array([class_id(n) for n in names] + [54])
    )
    out = suit_targets(data)
    assert [SUITS[s] for s in out.y.tolist()] == ["S", "S", "H", "D", "C"]
    assert len(out.x) == 5


def test_pad_widens_the_crop_around_the_same_box(tmp_path: Path) -> None:
    dataset(tmp_path / "d", ["7C"])
    tight = extract_crops([(tmp_path / "d", "train")], jitter=1, seed=0, amount=0.0, size=32, pad=0.15)
    wide = extract_crops([(tmp_path / "d", "train")], jitter=1, seed=0, amount=0.0, size=32, pad=1.0)
    blue = lambda c: float((c.x[0, 0].astype(int) - c.x[0, 2]).clip(0).mean())  # noqa: E731
    assert blue(tight) == 0.0 and blue(wide) > 10.0  # a 10 × 20 blue strip in a 60 × 60 crop: ≈ 14


def test_training_a_suit_head_exports_four_suits_and_its_pad(tmp_path: Path) -> None:
    from vision.heads import SUIT, CropHead

    dataset(tmp_path / "d", ["7C", "QH", "2S", "JD"])
    out = tmp_path / "suit.onnx"
    src = f"{tmp_path / 'd'}:train"
    argv = [str(out), "--train", src, "--val", src, "--target", "suit", "--size", "24", "--pad", "0.8"]
    result = classifier(*argv, "--epochs", "1", "--jitter", "2", "--threads", "1")
    assert result.exit_code == 0, result.output
    head = CropHead(out, SUIT)
    assert head.pad == 0.8 and head.size == 24
    img = cv2.imread(str(tmp_path / "d" / "images" / "train" / "a.png"))
    q = head.box_probabilities(img, np.array([[30, 100, 50, 120]], np.float32))
    assert q.shape == (1, 4) and q.sum() == pytest.approx(1.0, abs=1e-5)


def test_suit_target_refuses_mined_crops(tmp_path: Path) -> None:
    argv = [
        str(tmp_path / "s.onnx"),
        "--train",
        "d",
        "--val",
        "d",
        "--target",
        "suit",
        "--mine",
        "m.onnx",
    ]
    result = classifier(*argv)
    assert result.exit_code == 2 and "labelled crops only" in result.stderr


def test_init_partial_takes_the_convolutions_of_a_card_classifier(tmp_path: Path) -> None:
    import torch

    from models.classifier import build_net

    dataset(tmp_path / "d", ["7C", "QH"])
    card = build_net(classes=55, size=40, width=0.5)
    torch.save(card.state_dict(), tmp_path / "card.pt")
    src = f"{tmp_path / 'd'}:train"
    argv = [str(tmp_path / "s.onnx"), "--train", src, "--val", src, "--target", "suit", "--size", "24"]
    argv += ["--width", "0.5", "--epochs", "1", "--threads", "1", "--lr", "1e-12"]
    result = classifier(*argv, "--init", str(tmp_path / "card.pt"), "--init-partial")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "init: " in out and "tensors from" in out
    suit = torch.load(tmp_path / "s.pt")
    # the first convolution is the card classifier's (the learning rate is too small to move it);
    # the last layer has 4 outputs, freshly made
    torch.testing.assert_close(suit["0.weight"], card.state_dict()["0.weight"])
    assert suit[list(suit)[-1]].shape == (4,)
    result = classifier(*argv, "--init", str(tmp_path / "card.pt"))  # without --init-partial: refused
    assert isinstance(result.exception, RuntimeError) and "size mismatch" in str(result.exception)
