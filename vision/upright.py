"""Upright head: names a corner index from a crop turned so that its glyphs stand upright (ONNX
Runtime, no torch).

The index classifier (:mod:`vision.classifier`) reads crops at any rotation: it must learn every
glyph at every angle, and a small index of an unseen deck often comes out as another card. The
orientation head (:mod:`vision.orientation`) already reads which way each index reads, right within
45° for 99 % of the selection splits' corners. The upright head reads each box's crop turned by that
direction (:func:`upright_crops`), so it sees every glyph the same way up, and names it among the 54
cards; :func:`fuse_cards` folds its reading into the classifier's with a weight: a second, differently
posed reading of the same pixels. A box without a known direction gets no upright reading (uniform,
which folds in nothing). Trained by ``tractorcam heads upright``; measured in docs/experiments/reader-history.md
(where also: the 6 ↔ 9 confusions of one unseen deck, whose bottom index
turns the rank but not the suit mark, stay).
"""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from vision.classifier import CROP_PAD, _open_session, _softmax, fold_in

#: The head names the 54 cards (no background: it reads boxes the classifier reads too).
CARDS = 54


class UprightHeadError(ValueError):
    """An upright-head ONNX file that does not output :data:`CARDS` classes."""


def upright_crops(
    image: npt.NDArray[np.uint8],
    xyxy: npt.NDArray[np.float32],
    up: npt.NDArray[np.float32],
    size: int,
    pad: float = CROP_PAD,
    turn_deg: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float32]:
    """Square crops (the classifier's window: ``pad`` of the long side around each box) turned about
    the box centre so that ``up`` (image px, y down) points up, as float32 NCHW BGR in [0, 1]; rows
    whose ``up`` is unknown (NaN) or whose window leaves the image are zeros. ``turn_deg`` adds a
    turn per box (degrees counter-clockwise; training jitter). Large boxes are shrunk with area
    averaging before the turn.

    >>> img = np.zeros((60, 60, 3), np.uint8); img[20:40, 36:40] = 255   # a bar on the box's right
    >>> box = np.array([[20, 20, 40, 40]], np.float32)
    >>> crop = upright_crops(img, box, np.array([[1.0, 0.0]], np.float32), size=20, pad=0.0)[0, 0]
    >>> bool(crop[:3].mean() > 0.5 and crop[-3:].mean() < 0.1)   # "up" was +x: the bar is now on top
    True
    """
    h, w = image.shape[:2]
    out = np.zeros((len(xyxy), 3, size, size), np.float32)
    for k, ((x1, y1, x2, y2), u) in enumerate(zip(xyxy, up, strict=True)):
        if not np.isfinite(u).all():
            continue
        cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
        side = max(x2 - x1, y2 - y1) * (1 + 2 * pad)
        reach = side * 0.75  # the turned square's corners lie within side / sqrt(2) of its centre
        a, b = int(max(0, math.floor(cx - reach))), int(max(0, math.floor(cy - reach)))
        c, d = int(min(w, math.ceil(cx + reach))), int(min(h, math.ceil(cy + reach)))
        if c - a < 2 or d - b < 2 or side <= 0:
            continue
        region = image[b:d, a:c]
        scale = size / side
        rcx, rcy = cx - a, cy - b
        if scale < 1:
            small = (max(2, round((c - a) * scale)), max(2, round((d - b) * scale)))
            region = cv2.resize(region, small, interpolation=cv2.INTER_AREA)
            rcx, rcy = rcx * small[0] / (c - a), rcy * small[1] / (d - b)
            scale = 1.0
        angle = 90.0 - math.degrees(math.atan2(-float(u[1]), float(u[0])))
        if turn_deg is not None:
            angle += float(turn_deg[k])
        m = cv2.getRotationMatrix2D((float(rcx), float(rcy)), angle, scale)
        m[0, 2] += size / 2 - rcx
        m[1, 2] += size / 2 - rcy
        crop = cv2.warpAffine(
            region, m, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        out[k] = crop.transpose(2, 0, 1).astype(np.float32) / 255.0
    return out


def fuse_cards(
    p: npt.NDArray[np.float32], q: npt.NDArray[np.float32], weight: float
) -> npt.NDArray[np.float32]:
    """Card probabilities ``p`` (N, 54 or 55) with the upright head's ``q`` (N, 54) folded in: each
    card's share multiplied by its ``q`` to the power ``weight`` and renormalised *within the 54
    cards*, so background keeps its probability; a uniform ``q`` changes nothing.

    >>> p = np.zeros((1, 55), np.float32); p[0, 4], p[0, 7], p[0, 54] = 0.5, 0.3, 0.2   # 6S or 9S?
    >>> q = np.full((1, 54), 0.1 / 52, np.float32); q[0, 4], q[0, 7] = 0.05, 0.85   # upright: 9S
    >>> f = fuse_cards(p, q, 1.0)
    >>> [round(float(f[0, k]), 3) for k in (4, 7, 54)]
    [0.071, 0.729, 0.2]
    """
    if weight == 0 or len(p) == 0:
        return p
    return fold_in(p, np.power(np.maximum(q, 1e-6), weight))


class UprightHead:
    """ONNX upright head: upright index crops → (N, :data:`CARDS`) card probabilities.

    Raises :class:`~vision.classifier.ClassifierNotFoundError` for a missing file and
    :class:`UprightHeadError` for a model with another number of outputs.
    """

    def __init__(self, path: Path, threads: int = 0, pad: float = CROP_PAD) -> None:
        self.session, self.input_name, self.size = _open_session(path, threads, "upright head")
        if self.session.get_outputs()[0].shape[-1] != CARDS:
            raise UprightHeadError(f"{path}: an upright head outputs {CARDS} cards")
        self.pad = pad

    def box_probabilities(
        self, image: npt.NDArray[np.uint8], xyxy: npt.NDArray[np.float32], up: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        """Card probabilities (N, 54) of the boxes read upright; rows with an unknown ``up`` are
        uniform."""
        q = np.full((len(xyxy), CARDS), 1 / CARDS, np.float32)
        known = np.isfinite(up).all(1)
        if known.any():
            crops = upright_crops(image, xyxy[known], up[known], self.size, self.pad)
            (logits,) = self.session.run(None, {self.input_name: crops})
            q[known] = _softmax(logits)
        return q
