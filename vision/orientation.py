"""Orientation head: which way a corner index reads (ONNX Runtime, no torch).

A card prints its index in two opposite corners, the second turned 180°; two identical cards fanned side
by side show theirs turned the same way. The head reads an index crop (the classifier's crop) and names
its reading direction in one of :data:`BINS` sectors; :func:`up_vectors` turns that into a unit vector
(image px, y down, towards the top of the glyphs) and a strength, and card grouping
(:func:`vision.instances.group_corners`) refuses to pair two corners that read the same way.
Trained by ``tractorcam heads orientation``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from vision.classifier import _open_session, _softmax, crop_boxes

#: Sectors of the reading direction: sector k is centred on k × 360° / BINS counter-clockwise from +x
#: as seen on the image (sector 2 of 8: upright).
BINS = 8
#: An up vector is only used when the head's probability-weighted mean direction is at least this long
#: (1: all mass in one sector; a flat guess is near 0); weaker readings are unknown (NaN).
MIN_STRENGTH = 0.5


class OrientationHeadError(ValueError):
    """An orientation-head ONNX file that does not output :data:`BINS` sectors."""


def up_vectors(p: npt.NDArray[np.float32], min_strength: float = MIN_STRENGTH) -> npt.NDArray[np.float32]:
    """Sector probabilities (N, :data:`BINS`) → unit up vectors (N, 2), image px with y down; rows
    whose mean direction is shorter than ``min_strength`` are NaN (unknown).

    >>> p = np.zeros((2, BINS), np.float32); p[0, 2] = 1.0; p[1] = 1.0 / BINS
    >>> v = up_vectors(p)
    >>> [round(float(x), 3) for x in v[0]], bool(np.isnan(v[1]).all())
    ([0.0, -1.0], True)
    """
    theta = np.arange(BINS) * (2 * np.pi / BINS)
    units = np.stack([np.cos(theta), -np.sin(theta)], 1)  # y down
    mean = p.astype(np.float64) @ units
    norm = np.linalg.norm(mean, axis=1, keepdims=True)
    out = mean / np.maximum(norm, 1e-12)
    out[norm[:, 0] < min_strength] = np.nan
    return out.astype(np.float32)


class OrientationHead:
    """ONNX orientation head: index crops → (N, :data:`BINS`) sector probabilities.

    Raises :class:`~vision.classifier.ClassifierNotFoundError` for a missing file and
    :class:`OrientationHeadError` for a model with another number of outputs.
    """

    def __init__(self, path: Path, threads: int = 0, min_strength: float = MIN_STRENGTH) -> None:
        self.session, self.input_name, self.size = _open_session(path, threads, "orientation head")
        if self.session.get_outputs()[0].shape[-1] != BINS:
            raise OrientationHeadError(f"{path}: an orientation head outputs {BINS} sectors")
        self.min_strength = min_strength

    def probabilities(self, crops: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Sector probabilities of crops (N, 3, size, size), float32 in [0, 1]."""
        if len(crops) == 0:
            return np.zeros((0, BINS), np.float32)
        (logits,) = self.session.run(None, {self.input_name: crops})
        return _softmax(logits)

    def box_up_vectors(
        self, image: npt.NDArray[np.uint8], xyxy: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        """Up vectors (N, 2) of the index boxes of ``image`` (NaN rows: unsure, :func:`up_vectors`)."""
        if len(xyxy) == 0:
            return np.zeros((0, 2), np.float32)
        return up_vectors(self.probabilities(crop_boxes(image, xyxy, self.size)), self.min_strength)
