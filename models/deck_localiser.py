"""The localiser taught a deck from labelled photos of it in play (``tractorcam enroll --labels``):
the shipped corner-index localiser fine-tuned on the learning photos with **pseudo-boxes**.

The labels name each photo's cards, not where they lie. The deck already learned from them (its
look, despeckle size and index classifier: :func:`models.enroll.learn_from_photos`) reads each
photo with the localiser's boxes taken from a low score (:data:`PSEUDO_DET_CONF`); a box the
learned classifier takes for one of the photo's cards with probability at least
:data:`PSEUDO_FLOOR` (:func:`models.enroll.label_boxes`: each card at most twice per copy) is an
index. The photos are then cut into the tiles the reader looks at (every level of its pyramid,
:mod:`vision.tiling`), in the look and despeckle the deck is read in, each tile labelled with the
indices in it, and the localiser is fine-tuned on them (:func:`models.train.finetune`). A tile
with no index is kept only from a photo whose every card was found, so that an index the reader
missed is not taught as background.

>>> tile_labels(np.array([[10, 10, 30, 40]], np.float32), (0, 0, 320, 320))
([(0.0625, 0.078125, 0.0625, 0.09375)], False)
>>> tile_labels(np.array([[10, 10, 30, 40], [300, 5, 340, 40]], np.float32), (0, 0, 320, 320))
([], True)
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

#: The localiser's score from which boxes are offered to the learned classifier for pseudo-boxes.
PSEUDO_DET_CONF = 0.05
#: The learned classifier's probability that makes a box one of the photo's cards.
PSEUDO_FLOOR = 0.5
#: An index box at a tile's level is taught when its longest side lies in this range (pixels):
#: smaller ones are read at a finer level, larger ones at a coarser one.
SIDE_RANGE = (6.0, 96.0)
#: The share of an index box that must lie in a tile for it to be taught there; a box less inside
#: (but inside at all) makes the tile ambiguous, and it is left out.
INSIDE = 0.6
#: Fine-tuning epochs over the tiles.
EPOCHS = 8


class LocaliserLearnError(ValueError):
    """Labelled photos the localiser cannot be taught from (one line)."""


def pseudo_boxes(
    reader: Any, image: npt.NDArray[np.uint8], cards: Sequence[str]
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """The index boxes (x1, y1, x2, y2, photo pixels) of ``image`` that ``reader`` (the learned
    deck, its localiser keeping boxes from :data:`PSEUDO_DET_CONF`) names as one of ``cards``, and
    the class each is named."""
    from models.enroll import label_boxes
    from vision.classifier import proposals
    from vision.look import apply_look

    d = reader.config.detector
    shown = apply_look(image, reader.config.look)
    boxes = proposals(reader.localise(shown), d.det_conf)
    if not len(boxes):
        return np.zeros((0, 4), np.float32), np.zeros(0, np.int64)
    boxes, p = reader.classifier.read(shown, boxes)
    labels = label_boxes(p, cards, floor=PSEUDO_FLOOR)
    return boxes.xyxy[labels >= 0].astype(np.float32), labels[labels >= 0]


def tile_labels(
    boxes: npt.NDArray[np.float32], window: tuple[int, int, int, int]
) -> tuple[list[tuple[float, float, float, float]], bool]:
    """The YOLO labels (centre x, centre y, width, height as shares of the window) of the level
    boxes inside ``window`` (x0, y0, x1, y1, level pixels), and whether the window is ambiguous
    (a box partly in it, or of a size not taught at this level: :data:`SIDE_RANGE`)."""
    x0, y0, x1, y1 = window
    w, h = x1 - x0, y1 - y0
    out: list[tuple[float, float, float, float]] = []
    for b in boxes:
        area = float((b[2] - b[0]) * (b[3] - b[1]))
        cx1, cy1 = max(b[0], x0), max(b[1], y0)
        cx2, cy2 = min(b[2], x1), min(b[3], y1)
        if cx2 <= cx1 or cy2 <= cy1 or area <= 0:
            continue
        share = float((cx2 - cx1) * (cy2 - cy1)) / area
        side = float(max(b[2] - b[0], b[3] - b[1]))
        if share < INSIDE or not SIDE_RANGE[0] <= side <= SIDE_RANGE[1]:
            return [], True
        cx1, cy1, cx2, cy2 = float(cx1), float(cy1), float(cx2), float(cy2)
        out.append((((cx1 + cx2) / 2 - x0) / w, ((cy1 + cy2) / 2 - y0) / h, (cx2 - cx1) / w, (cy2 - cy1) / h))
    return out, False


def write_tiles(
    shown: Sequence[tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32], bool]],
    out: Path,
    tile: int,
    seed: int = 0,
) -> dict[str, int]:
    """Cut each (image as the localiser sees it, its pseudo-boxes, whether every card was found)
    into the reader's tiles under ``out/images/train`` and ``out/labels/train``, with
    ``out/data.yaml`` (one class; the same tiles for validation); background tiles no more than
    the tiles with an index. Returns how many of each were written."""
    from vision.tiling import TilingConfig, plan_tiles

    rng = np.random.default_rng(seed)
    config = TilingConfig(tile=tile)
    (out / "images" / "train").mkdir(parents=True, exist_ok=True)
    (out / "labels" / "train").mkdir(parents=True, exist_ok=True)
    positive: list[tuple[npt.NDArray[np.uint8], list[tuple[float, float, float, float]]]] = []
    negative: list[npt.NDArray[np.uint8]] = []
    for image, boxes, complete in shown:
        h, w = image.shape[:2]
        scale, level = 0.0, image
        for t in plan_tiles(w, h, config):
            if t.scale != scale:
                interp = cv2.INTER_AREA if t.scale < 1 else cv2.INTER_LINEAR
                scale = t.scale
                level = np.asarray(
                    cv2.resize(image, (t.level_width, t.level_height), interpolation=interp), np.uint8
                )
            labels, ambiguous = tile_labels(boxes * t.scale, (t.x0, t.y0, t.x1, t.y1))
            crop = level[t.y0 : t.y1, t.x0 : t.x1]
            if ambiguous:
                continue
            if labels:
                positive.append((crop, labels))
            elif complete:
                negative.append(crop)
    if not positive:
        raise LocaliserLearnError("no index was found on the labelled photos to teach the localiser")
    keep = rng.permutation(len(negative))[: len(positive)]
    for k, (crop, labels) in enumerate(positive):
        cv2.imwrite(str(out / "images" / "train" / f"p{k:05d}.png"), crop)
        lines = "".join(f"0 {x:.6f} {y:.6f} {bw:.6f} {bh:.6f}\n" for x, y, bw, bh in labels)
        (out / "labels" / "train" / f"p{k:05d}.txt").write_text(lines)
    for k in keep:
        cv2.imwrite(str(out / "images" / "train" / f"n{k:05d}.png"), negative[k])
        (out / "labels" / "train" / f"n{k:05d}.txt").write_text("")
    (out / "data.yaml").write_text(
        f"path: {out.resolve()}\ntrain: images/train\nval: images/train\nnc: 1\nnames:\n  0: 'index'\n"
    )
    return {
        "index_tiles": len(positive),
        "background_tiles": len(keep),
        "indices": sum(len(x) for _, x in positive),
    }


def learn_localiser(
    photos: Sequence[tuple[npt.NDArray[np.uint8], Sequence[str]]],
    folder: Path,
    epochs: int = EPOCHS,
    *,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fine-tune the shipped localiser on ``photos`` with pseudo-boxes from the deck learned in
    ``folder`` (its ``classifier.onnx`` and ``deck.json``: :func:`models.enroll.learn_from_photos`
    first) and write ``folder/localiser.onnx``, which ``--model folder`` then localises with;
    returns what was done (also in ``folder/localiser.json``)."""
    from models.export import export_onnx
    from models.train import finetune
    from vision.labels import class_name
    from vision.look import apply_look, despeckle
    from vision.reader import CardReader, default_reader_config, model_options
    from vision.settings import CHECKPOINTS_DIR

    start = time.monotonic()
    options = {k: v for k, v in model_options(folder).items() if k != "weights"}
    reader = CardReader(default_reader_config("onnx", det_conf=PSEUDO_DET_CONF, **options))
    shown: list[tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32], bool]] = []
    found = wanted = 0
    for image, cards in photos:
        boxes, ids = pseudo_boxes(reader, image, cards)
        named = {class_name(int(i)) for i in ids}
        complete = set(cards) <= named
        found += len(set(cards) & named)
        wanted += len(set(cards))
        look = despeckle(apply_look(image, reader.config.look), reader.config.despeckle)
        shown.append((look, boxes, complete))
    log(f"  pseudo-boxes: {sum(len(b) for _, b, _ in shown)} indices, {found} of {wanted} cards found")
    tmp = Path(tempfile.mkdtemp(prefix="tractorcam-localiser-"))
    try:
        counts = write_tiles(shown, tmp / "data", reader.config.detector.imgsz)
        log(f"  tiles: {counts}")
        best = finetune(
            tmp / "data" / "data.yaml",
            CHECKPOINTS_DIR / "best.pt",
            epochs=epochs,
            imgsz=reader.config.detector.imgsz,
            name="deck",
            project=tmp / "runs",
        )
        export_onnx(best, folder / "localiser.onnx", imgsz=reader.config.detector.imgsz)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    record = {
        "photos": len(photos),
        "cards_found": found,
        "cards": wanted,
        **counts,
        "epochs": epochs,
        "minutes": round((time.monotonic() - start) / 60, 2),
    }
    (folder / "localiser.json").write_text(json.dumps(record, indent=1))
    return record
