"""Train the orientation head of :mod:`vision.orientation`: which way a corner index reads.

A card prints its index twice, the second turned 180° (``tl`` upright, ``br`` upside down), so the two
corners of one card read in opposite directions, while two identical cards fanned side by side read
the same way. The head names the reading direction of an index crop in one of :data:`BINS` sectors
(:data:`vision.orientation.BINS`); card grouping uses it to refuse pairing two corners that read the
same way (:mod:`vision.instances`).

Labels come from the renderer's annotations (``annotations/<split>/*.json``): an index's *up* is its
face's up for ``tl`` and the opposite for ``br``; ``tr`` / ``bl`` (four-index decks) are left out, since
which way their art prints them differs between decks. Every crop is also given turned by 90°, 180°
and 270° (the label turned with it), so all directions are seen equally often. The network and its
training are the index classifier's (:func:`models.classifier.train_classifier`).

    tractorcam heads orientation OUT.onnx --train DIR[:split] --val DIR[:split] --epochs 2
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import cast

import cv2
import numpy as np
import numpy.typing as npt

from models.classifier import CropDataError, CropSet, jitter_boxes, uint8_crops
from vision.crops import CROP_PAD, CROP_SIZE
from vision.orientation import BINS

#: Corners whose reading direction the renderer's labels fix: ``tl`` reads with the face, ``br`` against it.
UPRIGHT_CORNERS = {"tl": 1.0, "br": -1.0}
#: An index is used when at least this fraction of it is visible (the YOLO labels' threshold).
MIN_VISIBLE = 0.6


def index_up(quad: list[list[float]], corner: str) -> npt.NDArray[np.float64]:
    """Unit vector (image px, y down) pointing to the top of an index's glyphs.

    ``quad``: the index box's corners in face order TL, TR, BR, BL (image px). Raises ``KeyError`` for a
    corner other than ``tl`` / ``br``.

    >>> index_up([[0, 0], [10, 0], [10, 20], [0, 20]], "tl").tolist()   # upright: up is -y
    [0.0, -1.0]
    >>> index_up([[0, 0], [10, 0], [10, 20], [0, 20]], "br").tolist()
    [-0.0, 1.0]
    """
    q = np.asarray(quad, np.float64)
    up = ((q[0] + q[1]) - (q[3] + q[2])) / 2 * UPRIGHT_CORNERS[corner]
    n = float(np.linalg.norm(up))
    return np.asarray(up / n) if n > 0 else up


def angle_bin(up: npt.NDArray[np.float64]) -> int:
    """The sector of :data:`~vision.orientation.BINS` an up vector (image px, y down) points into;
    sector 0 is +x, counting counter-clockwise as seen on the image.

    >>> [angle_bin(np.array(v)) for v in ([1.0, 0.0], [0.0, -1.0], [-1.0, 0.0], [0.0, 1.0], [0.7, -0.7])]
    [0, 2, 4, 6, 1]
    """
    theta = math.atan2(-float(up[1]), float(up[0]))
    return int(round(theta / (2 * math.pi / BINS))) % BINS


def turned(data: CropSet) -> CropSet:
    """``data`` plus its crops turned by 90°, 180° and 270° counter-clockwise, labels turned along.

    >>> x = np.zeros((1, 3, 4, 4), np.uint8); x[0, :, 0, 1] = 255   # a dot near the top edge
    >>> t = turned(CropSet(x, np.array([2])))
    >>> t.y.tolist(), [np.argwhere(c[0])[0].tolist() for c in t.x]
    ([2, 4, 6, 0], [[0, 1], [2, 0], [3, 2], [1, 3]])
    """
    quarter = BINS // 4
    xs = [np.ascontiguousarray(np.rot90(data.x, k, axes=(2, 3))) for k in range(4)]
    ys = [(data.y + k * quarter) % BINS for k in range(4)]
    return CropSet(np.concatenate(xs), np.concatenate(ys))


def extract_oriented_crops(
    sources: list[tuple[Path, str]],
    jitter: int,
    seed: int,
    limit: int | None = None,
    size: int = CROP_SIZE,
    pad: float = CROP_PAD,
) -> CropSet:
    """Crops of every visible ``tl`` / ``br`` index of the rendered (dataset, split) sources, each
    ``jitter`` times with its box jittered like a detector's, labelled with its :func:`angle_bin`.

    Raises :class:`~models.classifier.CropDataError` when no crop could be cut.
    """
    rng = np.random.default_rng(seed)
    xs: list[npt.NDArray[np.uint8]] = []
    ys: list[npt.NDArray[np.int64]] = []
    for root, split in sources:
        for ann_path in sorted((root / "annotations" / split).glob("*.json"))[:limit]:
            images = list((root / "images" / split).glob(ann_path.stem + ".*"))
            read = cv2.imread(str(images[0])) if images else None
            if read is None:
                continue
            image = cast("npt.NDArray[np.uint8]", read)
            boxes, bins = [], []
            for card in json.loads(ann_path.read_text()).get("cards", []):
                if not card.get("face_up", True):
                    continue
                for ix in card.get("corners", []):
                    if ix["corner"] in UPRIGHT_CORNERS and float(ix["visible"]) >= MIN_VISIBLE:
                        boxes.append(ix["box"])
                        bins.append(angle_bin(index_up(ix["quad"], ix["corner"])))
            if not boxes:
                continue
            box_arr = np.array(boxes, np.float32)
            for _ in range(jitter):
                xs.append(uint8_crops(image, jitter_boxes(box_arr, rng, 0.12), size, pad))
                ys.append(np.array(bins, np.int64))
    if not xs:
        raise CropDataError(f"no labelled index crops in {sources}")
    return CropSet(np.concatenate(xs), np.concatenate(ys))
