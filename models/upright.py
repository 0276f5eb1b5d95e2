"""Train the upright head of :mod:`vision.upright`: the 54 cards from index crops turned upright.

Crops come from YOLO-layout datasets (scenes of :mod:`models.synth.dataset`, face tiles of
:mod:`models.facetiles`): every labelled index, ``jitter`` times with its box jittered like a
detector's, turned upright by the direction the committed orientation head reads in it (the
direction the reader will have, errors included; boxes it is unsure of are left out), plus a small
random turn (``angle_jitter`` degrees) for the head's residual error. The network and its training
are the index classifier's (:func:`models.classifier.train_classifier`, 54 classes, no background).

    python -m models.upright OUT.onnx --train DIR[:split] ... --val DIR[:split] ... --epochs 6
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from models.classifier import (
    CropDataError,
    CropSet,
    _sources,
    jitter_boxes,
    labelled_images,
    to_uint8,
    train_classifier,
)
from vision.classifier import CROP_PAD, CROP_SIZE
from vision.detectors.base import default_orientation_head
from vision.orientation import OrientationHead
from vision.upright import CARDS, upright_crops


def extract_upright_crops(
    sources: list[tuple[Path, str]],
    head: OrientationHead,
    jitter: int,
    seed: int,
    angle_jitter: float = 8.0,
    limit: int | None = None,
    size: int = CROP_SIZE,
    pad: float = CROP_PAD,
) -> CropSet:
    """Upright crops (uint8) of every label of the (dataset, split) sources and their class ids.
    ``jitter`` 0: each label once at its own box, no turn jitter (validation sets).

    Raises :class:`~models.classifier.CropDataError` when no crop could be cut.
    """
    rng = np.random.default_rng(seed)
    xs: list[npt.NDArray[np.uint8]] = []
    ys: list[npt.NDArray[np.int64]] = []
    for image, cls, boxes in labelled_images(sources, limit):
        for _ in range(max(jitter, 1)):
            xyxy = jitter_boxes(boxes, rng, 0.12) if jitter else boxes
            up = head.box_up_vectors(image, xyxy)
            known = np.isfinite(up).all(1)
            if not known.any():
                continue
            turn = rng.uniform(-angle_jitter, angle_jitter, int(known.sum())) if jitter else None
            xs.append(to_uint8(upright_crops(image, xyxy[known], up[known], size, pad, turn)))
            ys.append(cls[known])
    if not xs:
        raise CropDataError(f"no labelled index crops in {sources}")
    return CropSet(np.concatenate(xs), np.concatenate(ys))


def main() -> None:
    """Command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--train", nargs="+", required=True, help="DIR[:split] of YOLO-layout datasets")
    p.add_argument("--val", nargs="+", required=True, help="DIR[:split]; the first one picks the best epoch")
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--jitter", type=int, default=2, help="jittered copies of each labelled index")
    p.add_argument("--angle-jitter", type=float, default=8.0, help="random turn, degrees either way")
    p.add_argument("--limit", type=int, help="at most this many images per training source")
    p.add_argument("--val-limit", type=int, help="at most this many images per --val source")
    p.add_argument("--orientation-head", type=Path, help="default: the committed one")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: all cores)")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--width", type=float, default=1.0, help="channel multiplier of the network")
    a = p.parse_args()
    turn = a.orientation_head or default_orientation_head()
    if turn is None:
        p.error("no orientation head: pass --orientation-head")
    head = OrientationHead(Path(turn), threads=1)
    t0 = time.time()
    train = extract_upright_crops(_sources(a.train), head, a.jitter, a.seed, a.angle_jitter, a.limit)
    val = [(s, extract_upright_crops(_sources([s]), head, 0, a.seed + 1, 0.0, a.val_limit)) for s in a.val]
    sizes = ", ".join(f"{k} {len(v.y)}" for k, v in val)
    print(f"crops: train {len(train.y)}, {sizes} ({time.time() - t0:.0f}s)", flush=True)
    result = train_classifier(
        train, val, a.epochs, a.out, a.seed, lr=a.lr, threads=a.threads, width=a.width, classes=CARDS
    )
    print(result)


if __name__ == "__main__":
    main()
