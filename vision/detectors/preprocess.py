"""Letterboxing and YOLO output decoding shared by array-level backends (no torch)."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.detections import Detections


@dataclass(frozen=True)
class Letterbox:
    """How an image was fitted into the square network input: ``input = image * scale + (pad_x, pad_y)``."""

    scale: float
    pad_x: float
    pad_y: float

    def to_image(self, det: Detections) -> Detections:
        """Map detections from network-input pixels back to the original image."""
        return det.shifted(-self.pad_x, -self.pad_y).scaled(1.0 / self.scale)


def letterbox(image: npt.NDArray[np.uint8], size: int) -> tuple[npt.NDArray[np.uint8], Letterbox]:
    """Resize keeping aspect so the long side is ``size``, pad (grey 114, centred) to size×size."""
    h, w = image.shape[:2]
    scale = size / max(h, w)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    resized = cv2.resize(image, (nw, nh), interpolation=interp) if (nw, nh) != (w, h) else image
    out = np.full((size, size, 3), 114, np.uint8)
    px, py = (size - nw) // 2, (size - nh) // 2
    out[py : py + nh, px : px + nw] = resized
    return out, Letterbox(scale, float(px), float(py))


def to_blob(square_bgr: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """BGR uint8 HWC → RGB float32 NCHW in [0, 1]."""
    rgb = square_bgr[:, :, ::-1].astype(np.float32) / 255.0
    return np.ascontiguousarray(rgb.transpose(2, 0, 1)[None])


def decode_yolo(output: npt.NDArray[np.float32], conf: float, iou: float, max_det: int = 300) -> Detections:
    """Decode a YOLOv8/11 head output (1, 4 + nc, anchors): cx, cy, w, h then class scores."""
    pred = output[0].T  # (anchors, 4 + nc)
    scores = pred[:, 4:]
    cls = scores.argmax(1)
    best = scores[np.arange(len(cls)), cls]
    keep = best >= conf
    if not np.any(keep):
        return Detections.empty()
    p, cls, best = pred[keep], cls[keep], best[keep]
    cx, cy, w, h = p[:, 0], p[:, 1], p[:, 2], p[:, 3]
    xyxy = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1)
    det = Detections(xyxy, best, cls).with_nms(iou)
    return det[:max_det] if len(det) > max_det else det
