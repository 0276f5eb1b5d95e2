"""Train the upright head of :mod:`vision.upright`: the 54 cards from index crops turned upright.

Crops come from YOLO-layout datasets (scenes of :mod:`models.synth.dataset`, face tiles of
:mod:`models.facetiles`): every labelled index, ``jitter`` times with its box jittered like a
detector's, turned upright by the direction the committed orientation head reads in it (the
direction the reader will have, errors included; boxes it is unsure of are left out), plus a small
random turn (``angle_jitter`` degrees) for the head's residual error. The network and its training
are the index classifier's (:func:`models.classifier.train_classifier`, 54 classes, no background).

    python -m models.upright OUT.onnx --train DIR[:split] ... --val DIR[:split] ... --epochs 6

Crops cut once can be kept and reused (the orientation head reads every box, which costs minutes
per round of data): ``--save-crops R.npz --epochs 0`` writes the training crops and stops, and
``--extra-crops R.npz ...`` adds such files to the training crops of a later run.
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
    load_crops,
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


def _fits(crops: CropSet) -> bool:
    """Whether a loaded crop set can join the crops :func:`extract_upright_crops` cuts by default."""
    return crops.x.shape[1:] == (3, CROP_SIZE, CROP_SIZE) and int(crops.y.max(initial=0)) < CARDS


def main(argv: list[str] | None = None) -> None:
    """Command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--train", nargs="*", default=[], help="DIR[:split] of YOLO-layout datasets")
    p.add_argument("--val", nargs="*", default=[], help="DIR[:split]; the first one picks the best epoch")
    p.add_argument(
        "--save-crops", type=Path, help=".npz: write the --train crops here (then stop if --epochs 0)"
    )
    p.add_argument(
        "--extra-crops", nargs="+", type=Path, default=[], help=".npz crop sets (--save-crops files) to add"
    )
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
    a = p.parse_args(argv)
    if not a.train and not a.extra_crops:
        p.error("nothing to train on: pass --train and/or --extra-crops")
    if a.epochs > 0 and not a.val:
        p.error("training needs --val (its first source picks the best epoch)")
    if a.save_crops is not None and not a.train:
        p.error("--save-crops writes the crops of --train")
    turn = a.orientation_head or default_orientation_head()
    if turn is None:
        p.error("no orientation head: pass --orientation-head")
    head = OrientationHead(Path(turn), threads=1)
    t0 = time.time()
    parts = [load_crops(f) for f in a.extra_crops]
    misfits = [f for f, c in zip(a.extra_crops, parts, strict=True) if not _fits(c)]
    if misfits:  # checked before the (minutes of) cutting, not after
        p.error(f"{misfits}: crops must be (3, {CROP_SIZE}, {CROP_SIZE}) with labels < {CARDS}")
    if a.train:
        cut = extract_upright_crops(_sources(a.train), head, a.jitter, a.seed, a.angle_jitter, a.limit)
        print(f"crops cut: {len(cut.y)} ({time.time() - t0:.0f}s)", flush=True)
        if a.save_crops is not None:
            np.savez(a.save_crops, x=cut.x, y=cut.y)
        parts.append(cut)
    if a.epochs == 0:
        return
    train = (
        parts[0]
        if len(parts) == 1
        else CropSet(np.concatenate([c.x for c in parts]), np.concatenate([c.y for c in parts]))
    )
    val = [(s, extract_upright_crops(_sources([s]), head, 0, a.seed + 1, 0.0, a.val_limit)) for s in a.val]
    sizes = ", ".join(f"{k} {len(v.y)}" for k, v in val)
    print(f"crops: train {len(train.y)}, {sizes} ({time.time() - t0:.0f}s)", flush=True)
    result = train_classifier(
        train, val, a.epochs, a.out, a.seed, lr=a.lr, threads=a.threads, width=a.width, classes=CARDS
    )
    print(result)


if __name__ == "__main__":
    main()
