"""Hard examples for the index classifier, mined with a trained detector.

The classifier must name the detector's boxes and reject its false ones. Random background crops
(:func:`models.classifier.negative_boxes`) rarely look like what the detector mistakes for an index:
court-card artwork, a lone pip, a neighbour's half-covered index. Running the detector on the training
images gives exactly those: every box scoring ≥ ``det_conf`` whose IoU with every labelled index is
below ``negative_iou`` becomes a *background* crop, and every box matching a label (IoU ≥
``positive_iou``) becomes a crop of that label's card with the detector's own box shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

import cv2
import numpy as np
import numpy.typing as npt

from models.classifier import CropDataError, CropSet, uint8_crops
from models.tiles import IMAGE_SUFFIXES, read_yolo_labels
from vision.classifier import BACKGROUND
from vision.crops import CROP_PAD, CROP_SIZE
from vision.detections import box_iou
from vision.detectors.base import DetectorConfig, create_detector
from vision.tiling import TiledDetector, TilingConfig


def mine_crops(
    detector_onnx: Path,
    sources: list[tuple[Path, str]],
    seed: int,
    size: int = CROP_SIZE,
    det_conf: float = 0.01,
    negative_iou: float = 0.3,
    positive_iou: float = 0.5,
    limit: int | None = None,
    tiling: TilingConfig | None = None,
    shard: tuple[int, int] = (0, 1),
) -> CropSet:
    """Crops of the detector's boxes on the (dataset, split) images, labelled from the YOLO labels.

    The detector runs over the same pyramid of tiles as at inference (``tiling``, default automatic),
    so the mined boxes include what it proposes on upscaled and downscaled levels. ``shard`` ``(k, n)``
    mines only every n-th of the (limited) images from the k-th, so n processes can share the work.
    """
    k, n = shard
    if not 0 <= k < n:
        raise ValueError(f"shard must be (k, n) with 0 <= k < n, got {shard}")
    net = create_detector(DetectorConfig(type="onnx", weights=Path(detector_onnx), conf=det_conf))
    detector = TiledDetector(net, tiling or TilingConfig(tile=net.config.imgsz))
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for root, split in sources:
        images = sorted(p for p in (root / "images" / split).glob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
        if limit is not None:
            images = list(rng.permutation(np.array(images, dtype=object))[:limit])
        for path in images[k::n]:
            read = cv2.imread(str(path))
            if read is None:
                continue
            image = cast("npt.NDArray[np.uint8]", read)
            h, w = image.shape[:2]
            cls, boxes = read_yolo_labels(root / "labels" / split / (path.stem + ".txt"), w, h)
            mined = mine_image(detector, image, cls, boxes, size, negative_iou, positive_iou)
            if mined is not None:
                xs.append(mined.x)
                ys.append(mined.y)
    if not xs:
        raise CropDataError(f"the detector found no boxes in {sources}")
    return CropSet(np.concatenate(xs), np.concatenate(ys))


def mine_image(
    detector: TiledDetector,
    image: npt.NDArray[np.uint8],
    cls: npt.NDArray[np.int64],
    boxes: npt.NDArray[np.float32],
    size: int = CROP_SIZE,
    negative_iou: float = 0.3,
    positive_iou: float = 0.5,
    pad: float = CROP_PAD,
) -> CropSet | None:
    """Crops of the detector's boxes on one labelled image (``cls``, pixel ``boxes``), cut with the
    window ``pad``: a box on a label (IoU ≥ ``positive_iou``) is that label's card, one off every
    label (IoU < ``negative_iou``) background, one in between is left out; None when nothing is
    kept."""
    det = detector.detect(image).with_nms(0.5, class_agnostic=True)
    if len(det) == 0:
        return None
    if len(cls):
        iou = box_iou(det.xyxy, np.asarray(boxes, np.float32))
        best, match = iou.max(1), iou.argmax(1)
    else:
        best, match = np.zeros(len(det)), np.zeros(len(det), np.int64)
    label = np.where(best >= positive_iou, cls[match] if len(cls) else BACKGROUND, -1)
    label[best < negative_iou] = BACKGROUND
    keep = label >= 0
    if not keep.any():
        return None
    return CropSet(uint8_crops(image, det.xyxy[keep], size, pad), label[keep].astype(np.int64))


def keep_background(crops: CropSet, n: int, seed: int) -> CropSet:
    """All named crops plus at most ``n`` background crops picked at random (seeded), in their order.

    Mining at a low score finds far more stray boxes than indices (≈ 12 : 1); this keeps the
    classifier's crop mix from drowning in background.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    bg = np.flatnonzero(crops.y == BACKGROUND)
    if len(bg) <= n:
        return crops
    drop = np.random.default_rng(seed).permutation(bg)[n:]
    keep = np.ones(len(crops.y), bool)
    keep[drop] = False
    return CropSet(crops.x[keep], crops.y[keep])
