"""The localiser taught from labelled photos (models.deck_localiser): which boxes become
pseudo-boxes, how a photo is cut into labelled tiles, and that ``--model DIR`` localises with the
taught network."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from models.deck_localiser import LocaliserLearnError, pseudo_boxes, tile_labels, write_tiles
from vision.detections import Detections
from vision.labels import class_id


def test_a_box_is_labelled_in_tile_shares_and_a_cut_box_makes_the_tile_ambiguous() -> None:
    inside = np.array([[40, 80, 60, 120]], np.float32)
    labels, ambiguous = tile_labels(inside, (20, 40, 120, 240))
    assert not ambiguous
    assert labels == [pytest.approx((0.3, 0.3, 0.2, 0.2))]
    # half of the box lies outside the window: neither taught nor taught as background
    assert tile_labels(np.array([[110, 80, 130, 120]], np.float32), (20, 40, 120, 240)) == ([], True)
    # entirely outside: the window is plain background
    assert tile_labels(np.array([[200, 300, 220, 330]], np.float32), (20, 40, 120, 240)) == ([], False)
    # an index too large for this level (read at a coarser one)
    assert tile_labels(np.array([[0, 0, 150, 150]], np.float32), (0, 0, 320, 320)) == ([], True)


def test_tiles_are_written_with_their_indices_and_background_only_from_complete_photos(
    tmp_path: Path,
) -> None:
    image = np.full((640, 640, 3), 90, np.uint8)
    boxes = np.array([[100, 100, 124, 130]], np.float32)
    counts = write_tiles([(image, boxes, True)], tmp_path / "a", 320)
    labels = sorted((tmp_path / "a" / "labels" / "train").glob("*.txt"))
    assert counts["index_tiles"] >= 2  # seen at the whole-photo level and at the photo's own size
    assert counts["background_tiles"] <= counts["index_tiles"]
    assert sum(1 for p in labels if p.read_text()) == counts["index_tiles"]
    first = [p for p in labels if p.name.startswith("p")][0].read_text().split()
    assert first[0] == "0" and len(first) == 5
    assert "nc: 1" in (tmp_path / "a" / "data.yaml").read_text()
    # a photo with a card nobody found gives no background tile (its index may lie there)
    counts = write_tiles([(image, boxes, False)], tmp_path / "b", 320)
    assert counts["background_tiles"] == 0
    with pytest.raises(LocaliserLearnError, match="no index"):
        write_tiles([(image, np.zeros((0, 4), np.float32), True)], tmp_path / "c", 320)


def test_pseudo_boxes_are_the_proposals_named_as_the_photos_cards() -> None:
    boxes = Detections(
        np.array([[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10]], np.float32),
        np.array([0.9, 0.5, 0.08], np.float32),
        np.zeros(3, np.int64),
    )
    p = np.full((3, 55), 0.001, np.float32)
    p[0, class_id("7H")] = 0.9  # the photo's card
    p[1, class_id("7D")] = 0.9  # a card the photo does not hold
    p[2, class_id("7H")] = 0.7  # a weak box the learned classifier names as the photo's card

    class Classifier:
        def read(self, image: np.ndarray, b: Detections) -> tuple[Detections, np.ndarray]:
            return b, p[: len(b)]

    reader = SimpleNamespace(
        config=SimpleNamespace(detector=SimpleNamespace(det_conf=0.05), look="plain"),
        localise=lambda image: boxes,
        classifier=Classifier(),
    )
    got, ids = pseudo_boxes(reader, np.zeros((60, 60, 3), np.uint8), ["7H"])
    assert got.tolist() == [[0, 0, 10, 10], [40, 0, 50, 10]]
    assert ids.tolist() == [class_id("7H")] * 2


def test_a_deck_folder_with_a_taught_localiser_localises_with_it(tmp_path: Path) -> None:
    from vision.reader import model_options

    (tmp_path / "classifier.onnx").write_bytes(b"")
    assert "weights" not in model_options(tmp_path)
    (tmp_path / "localiser.onnx").write_bytes(b"")
    assert model_options(tmp_path)["weights"] == tmp_path / "localiser.onnx"
