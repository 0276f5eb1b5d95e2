"""The crop step of the reader: the square windows around index boxes that the crop networks read
(:mod:`vision.heads`), as float32 NCHW BGR in [0, 1].

Every network reads the window it was trained with: :data:`CROP_PAD` of the box's long side around
the box (the suit head a wider one, stored in its file: :data:`PAD_KEY`), resized to the network's
input size (:data:`CROP_SIZE` by default); the upright head the same window turned so that the
index's glyphs stand upright (:func:`upright_crops`).
"""

from __future__ import annotations

import math
from typing import cast

import cv2
import numpy as np
import numpy.typing as npt

#: The crop size the networks are trained at by default; a network's own input size is read from
#: its ONNX file.
CROP_SIZE = 40
#: The window the networks are trained with: this share of the box's long side around the box.
CROP_PAD = 0.15
#: Metadata key of a network's ONNX file holding another window it was trained with (the suit head).
PAD_KEY = "crop_pad"


def crop_boxes(
    image: npt.NDArray[np.uint8], xyxy: npt.NDArray[np.float32], size: int = CROP_SIZE, pad: float = CROP_PAD
) -> npt.NDArray[np.float32]:
    """Square crops around boxes (padded by ``pad`` of the long side), as float32 NCHW BGR in [0, 1].

    A window that leaves the image keeps its square and its centre: the part outside repeats the
    image's edge pixels (as :func:`upright_crops` does), so an index at the border of a photo or of
    a table area is seen at its own proportions, where it lies in the window. Rows whose window
    holds less than 2 × 2 pixels of the image are zeros.

    >>> img = np.zeros((40, 40, 3), np.uint8); img[10:30, 0:4] = 255   # a bar at the image's left edge
    >>> crop = crop_boxes(img, np.array([[-10, 10, 10, 30]], np.float32), size=20, pad=0.0)[0, 0]
    >>> int(crop[10].sum())   # 10 columns outside the image (the edge repeated) + the bar's 4, not stretched
    14
    """
    h, w = image.shape[:2]
    out = np.zeros((len(xyxy), 3, size, size), np.float32)
    for k, (x1, y1, x2, y2) in enumerate(xyxy):
        cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
        half = max(x2 - x1, y2 - y1) * (0.5 + pad)
        left, top = int(np.floor(cx - half)), int(np.floor(cy - half))
        right, bottom = int(np.ceil(cx + half)), int(np.ceil(cy + half))
        a, b, c, d = max(0, left), max(0, top), min(w, right), min(h, bottom)
        if c - a < 2 or d - b < 2:
            continue
        window = image[b:d, a:c]
        if (a, b, c, d) != (left, top, right, bottom):
            border = (b - top, bottom - d, a - left, right - c)
            window = np.asarray(cv2.copyMakeBorder(window, *border, cv2.BORDER_REPLICATE), np.uint8)
        crop = cv2.resize(window, (size, size), interpolation=cv2.INTER_AREA)
        out[k] = crop.transpose(2, 0, 1).astype(np.float32) / 255.0
    return out


def shift_boxes(xyxy: npt.NDArray[np.float32], dx: float, dy: float) -> npt.NDArray[np.float32]:
    """Boxes moved by ``dx``, ``dy`` times their long side.

    >>> shift_boxes(np.array([[0, 0, 10, 20]], np.float32), 0.5, -0.25).tolist()
    [[10.0, -5.0, 20.0, 15.0]]
    """
    side = np.maximum(xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1])
    offset = np.stack([dx * side, dy * side, dx * side, dy * side], axis=1)
    return cast("npt.NDArray[np.float32]", (xyxy + offset).astype(np.float32))


def upright_crops(
    image: npt.NDArray[np.uint8],
    xyxy: npt.NDArray[np.float32],
    up: npt.NDArray[np.float32],
    size: int,
    pad: float = CROP_PAD,
    turn_deg: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float32]:
    """Square crops (the classifier's window: ``pad`` of the long side around each box) turned about
    the box centre so that ``up`` (image px, y down) points up, as float32 NCHW BGR in [0, 1]; the part
    of a window outside the image repeats its edge pixels; rows whose ``up`` is unknown (NaN) or
    whose window holds less than 2 × 2 pixels of the image are zeros. ``turn_deg`` adds a
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
            region = cast("npt.NDArray[np.uint8]", cv2.resize(region, small, interpolation=cv2.INTER_AREA))
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
