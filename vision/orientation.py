"""Which way a corner index reads, from the orientation head's sectors (:data:`vision.heads.ORIENTATION`).

A card prints its index in two opposite corners, the second turned 180°; two identical cards fanned side
by side show theirs turned the same way. The head reads an index crop (the classifier's crop) and names
its reading direction in one of :data:`BINS` sectors; :func:`up_vectors` turns that into a unit vector
(image px, y down, towards the top of the glyphs) and a strength, and card grouping
(:func:`vision.instances.group_corners`) refuses to pair two corners that read the same way.
Trained by ``tractorcam heads orientation``.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import numpy.typing as npt

from vision.settings import SHIPPED

#: Sectors of the reading direction: sector k is centred on k × 360° / BINS counter-clockwise from +x
#: as seen on the image (sector 2 of 8: upright).
BINS = 8


def up_vectors(
    p: npt.NDArray[np.float32], min_strength: float = SHIPPED.orientation_head.min_strength
) -> npt.NDArray[np.float32]:
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
    return cast("npt.NDArray[np.float32]", out.astype(np.float32))
