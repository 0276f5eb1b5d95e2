"""Train the upright head (:data:`vision.heads.UPRIGHT`): the 54 cards from index crops turned upright.

Crops come from YOLO-layout datasets (scenes of :mod:`models.synth.dataset`, face tiles of
:mod:`models.facetiles`): every labelled index, ``jitter`` times with its box jittered like a
detector's, turned upright by the direction the committed orientation head reads in it (the
direction the reader will have, errors included; boxes it is unsure of are left out), plus a small
random turn (``angle_jitter`` degrees) for the head's residual error. The network and its training
are the index classifier's (:func:`models.classifier.train_classifier`, 54 classes, no background).

    tractorcam heads upright OUT.onnx --train DIR[:split] --val DIR[:split] --epochs 6

Crops cut once can be kept and reused (the orientation head reads every box, which costs minutes
per round of data): ``--save-crops R.npz --epochs 0`` writes the training crops and stops, and
``--extra-crops R.npz`` (repeated for more) adds such files to the training crops of a later run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from models.classifier import (
    CropDataError,
    CropSet,
    jitter_boxes,
    labelled_images,
    to_uint8,
)
from vision.crops import CROP_PAD, CROP_SIZE, upright_crops
from vision.heads import UPRIGHT, CropHead
from vision.orientation import up_vectors

#: The upright head names the 54 cards (no background: it reads boxes the classifier reads too).
CARDS = UPRIGHT.outputs[0]


def extract_upright_crops(
    sources: list[tuple[Path, str]],
    head: CropHead,
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
            up = up_vectors(head.box_probabilities(image, xyxy))
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
