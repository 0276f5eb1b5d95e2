"""YOLO dataset export: layout, label format, agreement with annotations, determinism, split."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from models.synth.dataset import MIN_VISIBLE, UnknownDesignError, make_dataset
from models.synth.designs import HELDOUT, HELDOUT_VAL, TRAIN
from tests.conftest import need_module
from tests.synth.conftest import needs_kde
from vision.labels import CARD_CLASSES


@pytest.fixture(scope="module")
def train_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ds")
    make_dataset(out, n=6, seed=3, split="train", imgsz=256, progress=False)
    return out


def test_layout_and_yaml(train_set: Path) -> None:
    for sub in ("images", "labels", "annotations"):
        assert len(list((train_set / sub / "train").iterdir())) == 6
    text = (train_set / "data.yaml").read_text()
    assert "train: images/train" in text and "val: images/val" in text and "test: images/heldout" in text
    names = [line.split(": ", 1)[1].strip("'") for line in text.splitlines() if line.startswith("  ")]
    assert names == list(CARD_CLASSES)
    yaml = need_module("yaml")
    data = yaml.safe_load(text)
    assert [data["names"][i] for i in range(54)] == list(CARD_CLASSES)


def test_labels_parse_and_agree_with_annotations(train_set: Path) -> None:
    import cv2

    total = 0
    for lab in sorted((train_set / "labels" / "train").glob("*.txt")):
        img = cv2.imread(str(train_set / "images" / "train" / (lab.stem + ".jpg")))
        assert img.shape == (256, 256, 3)
        ann = json.loads((train_set / "annotations" / "train" / (lab.stem + ".json")).read_text())
        assert ann["width"] == ann["height"] == 256 and ann["design"] in {d.name for d in TRAIN}
        lines = [ln.split() for ln in lab.read_text().splitlines()]
        for cls, cx, cy, w, h in lines:
            assert 0 <= int(cls) < 54
            cx, cy, w, h = map(float, (cx, cy, w, h))
            assert 0 < w <= 1 and 0 < h <= 1
            assert cx - w / 2 >= -1e-6 and cx + w / 2 <= 1 + 1e-6
            assert cy - h / 2 >= -1e-6 and cy + h / 2 <= 1 + 1e-6
        want = sorted(
            c["class_id"]
            for c in ann["cards"]
            if c["face_up"]
            for ix in c["corners"]
            if ix["visible"] >= MIN_VISIBLE
        )
        assert sorted(int(x[0]) for x in lines) == want
        total += len(lines)
    assert total > 0


def test_deterministic(tmp_path: Path, train_set: Path) -> None:
    make_dataset(tmp_path, n=6, seed=3, split="train", imgsz=256, progress=False, workers=2)
    for sub, ext in (("images", "jpg"), ("labels", "txt"), ("annotations", "json")):
        for f in sorted((train_set / sub / "train").glob(f"*.{ext}")):
            assert f.read_bytes() == (tmp_path / sub / "train" / f.name).read_bytes(), f.name


def test_heldout_uses_heldout_designs(tmp_path: Path) -> None:
    make_dataset(tmp_path, n=4, seed=1, split="heldout", imgsz=192, progress=False)
    held = {d.name for d in HELDOUT}
    for f in (tmp_path / "annotations" / "heldout").glob("*.json"):
        ann = json.loads(f.read_text())
        assert set(ann["designs"]) <= held
        assert {c["design"] for c in ann["cards"]} <= held


@needs_kde
def test_heldout_val_uses_only_selection_designs(tmp_path: Path) -> None:
    """The selection split renders its own unseen decks, with labels, and none of the test's."""
    make_dataset(tmp_path, n=6, seed=1, split="heldout_val", imgsz=192, progress=False)
    sel = {d.name for d in HELDOUT_VAL}
    anns = [json.loads(f.read_text()) for f in (tmp_path / "annotations" / "heldout_val").glob("*.json")]
    assert len(anns) == 6
    for ann in anns:
        assert set(ann["designs"]) <= sel
    labels = [f.read_text() for f in (tmp_path / "labels" / "heldout_val").glob("*.txt")]
    assert len(labels) == 6 and sum(len(t.splitlines()) for t in labels) > 0


def test_heldout_val_proc_renders_only_its_random_decks_and_leaves_other_splits_alone(tmp_path: Path) -> None:
    """The second selection split: its own unseen random decks; appending it moved no split's seeds."""
    from models.synth.dataset import SPLITS, image_seed
    from models.synth.designs import HELDOUT_VAL_PROC

    make_dataset(tmp_path, n=4, seed=1, split="heldout_val_proc", imgsz=192, progress=False)
    sel = {d.name for d in HELDOUT_VAL_PROC}
    anns = [json.loads(f.read_text()) for f in (tmp_path / "annotations" / "heldout_val_proc").glob("*.json")]
    assert len(anns) == 4 and all(set(a["designs"]) <= sel for a in anns)
    assert SPLITS[:4] == ("train", "val", "heldout", "heldout_val")
    # the test split's render seeds as before the split was added: (seed, 2, i)
    assert image_seed(1, "heldout", 0) == int(np.random.SeedSequence([1, 2, 0]).generate_state(1)[0])


def test_unknown_split_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="heldout_val"):
        make_dataset(tmp_path, n=1, seed=1, split="test", imgsz=192, progress=False)


def test_designs_override_renders_only_those(tmp_path: Path) -> None:
    """Deck-enrollment data: one named design (here a held-out one) in a train split."""
    make_dataset(tmp_path, n=3, seed=2, split="train", imgsz=192, progress=False, designs=("plastic",))
    files = list((tmp_path / "annotations" / "train").glob("*.json"))
    assert len(files) == 3
    for f in files:
        ann = json.loads(f.read_text())
        assert ann["designs"] == ["plastic"]
        assert {c["design"] for c in ann["cards"]} == {"plastic"}


def test_designs_override_refuses_unknown_names(tmp_path: Path) -> None:
    with pytest.raises(UnknownDesignError, match="no-such-deck"):
        make_dataset(tmp_path, n=1, seed=0, split="train", progress=False, designs=("no-such-deck",))
    with pytest.raises(UnknownDesignError):
        make_dataset(tmp_path, n=1, seed=0, split="train", progress=False, designs=())
    assert not (tmp_path / "images").exists()


def test_cli(tmp_path: Path) -> None:
    from tractorcam_cli.main import app

    r = CliRunner().invoke(
        app,
        [
            "synth",
            "dataset",
            "--out",
            str(tmp_path),
            "--n",
            "2",
            "--seed",
            "5",
            "--split",
            "val",
            "--imgsz",
            "128",
        ],
    )
    assert r.exit_code == 0, r.output
    assert len(list((tmp_path / "images" / "val").glob("*.jpg"))) == 2
    bad = CliRunner().invoke(app, ["synth", "dataset", "--out", str(tmp_path), "--split", "test"])
    assert bad.exit_code == 2
    unknown = CliRunner().invoke(app, ["synth", "dataset", "--out", str(tmp_path), "--design", "nope"])
    assert unknown.exit_code == 2 and "nope" in unknown.output


def test_printed_share_is_a_chance(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="printed"):
        make_dataset(tmp_path, n=1, seed=0, split="val", imgsz=128, progress=False, printed=1.5)
    assert not (tmp_path / "images").exists()
    from tractorcam_cli.main import app

    bad = CliRunner().invoke(app, ["synth", "dataset", "--out", str(tmp_path), "--text-share", "2"])
    assert bad.exit_code == 2 and not (tmp_path / "images").exists()


def test_printed_sheets_keep_labels_of_cards_only(tmp_path: Path) -> None:
    make_dataset(tmp_path, n=2, seed=3, split="val", imgsz=160, progress=False, printed=1.0)
    for path in (tmp_path / "labels" / "val").glob("*.txt"):
        for line in path.read_text().splitlines():
            assert 0 <= int(line.split()[0]) < len(CARD_CLASSES)
    assert len(list((tmp_path / "images" / "val").glob("*.jpg"))) == 2
