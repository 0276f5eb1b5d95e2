"""Multi-scale tiled inference: corner indices are small on a whole-table photo, so the image is
looked at as a pyramid of levels (resized copies), each cut into overlapping ``tile``-sized windows
that are fed to the detector at its native input size. Detections are mapped back to the original
image and merged with class-wise NMS.

With ``levels=None`` the pyramid is automatic: the whole image fitted into one tile, then every
doubling up to ``max_upscale`` × the native resolution, so an index of any size is seen at some
level near the size the model was trained on. A calibrated pipeline passes one explicit level.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from vision.detections import Detections
from vision.detectors.base import Detector
from vision.settings import SHIPPED


class TilingConfigError(ValueError):
    """Inconsistent tiling settings (tile size, overlap, levels)."""


@dataclass(frozen=True)
class TilingConfig:
    """Settings of the pyramid and the tiles.

    ``levels``: explicit resize factors of the original image (``None`` = automatic pyramid);
    ``agnostic_iou``: after class-wise NMS, boxes of different classes overlapping this much are one
    index read differently at two levels; the most confident is kept.
    ``edge_margin``: detections this close (px) to a tile border that is not an image border are
    dropped as likely cut (the overlapping neighbour tile sees them whole).
    """

    tile: int = SHIPPED.tiling.tile
    overlap: float = SHIPPED.tiling.overlap
    levels: tuple[float, ...] | None = SHIPPED.tiling.levels
    max_upscale: float = (
        SHIPPED.tiling.max_upscale
    )  # indices under ~20 px are found far better at 2x (docs/vision.md)
    nms_iou: float = SHIPPED.tiling.nms_iou
    agnostic_iou: float = SHIPPED.tiling.agnostic_iou
    edge_margin: float = SHIPPED.tiling.edge_margin

    def __post_init__(self) -> None:
        if self.tile < 32:
            raise TilingConfigError(f"tile must be >= 32 px, got {self.tile}")
        if not 0 <= self.overlap < 0.9:
            raise TilingConfigError(f"overlap must be in [0, 0.9), got {self.overlap}")
        if self.levels is not None and (not self.levels or min(self.levels) <= 0):
            raise TilingConfigError(f"levels must be positive resize factors, got {self.levels}")


@dataclass(frozen=True)
class Tile:
    """One window: ``scale`` is the level's resize factor; x0..x1, y0..y1 are in level pixels."""

    scale: float
    x0: int
    y0: int
    x1: int
    y1: int
    level_width: int
    level_height: int


def pyramid_levels(width: int, height: int, config: TilingConfig) -> list[float]:
    """Resize factors of the automatic pyramid (or the configured ones)."""
    if config.levels is not None:
        return list(config.levels)
    long_side = max(width, height)
    base = config.tile / long_side
    levels = [base]
    top = config.max_upscale
    s = base * 2
    while s < top * 0.999:
        levels.append(s)
        s *= 2
    if top > base * 1.25 and all(abs(top - x) / top > 0.25 for x in levels):
        levels.append(top)
    return levels


def _starts(length: int, tile: int, stride: int) -> list[int]:
    if length <= tile:
        return [0]
    starts = list(range(0, length - tile, stride))
    starts.append(length - tile)
    return sorted(set(starts))


def level_tiles(width: int, height: int, scale: float, config: TilingConfig) -> list[Tile]:
    """The windows of one level (resize factor ``scale``) of an image of ``width`` × ``height``."""
    stride = max(1, int(round(config.tile * (1 - config.overlap))))
    lw, lh = max(1, round(width * scale)), max(1, round(height * scale))
    return [
        Tile(scale, x, y, min(x + config.tile, lw), min(y + config.tile, lh), lw, lh)
        for y in _starts(lh, config.tile, stride)
        for x in _starts(lw, config.tile, stride)
    ]


def plan_tiles(width: int, height: int, config: TilingConfig) -> list[Tile]:
    """All windows of all levels for an image of ``width`` × ``height``."""
    return [
        t
        for scale in pyramid_levels(width, height, config)
        for t in level_tiles(width, height, scale, config)
    ]


def _drop_cut(det: Detections, tile: Tile, margin: float) -> Detections:
    """Drop boxes touching an interior border of ``tile`` (tile coordinates)."""
    if len(det) == 0:
        return det
    w, h = tile.x1 - tile.x0, tile.y1 - tile.y0
    bad = np.zeros(len(det), bool)
    if tile.x0 > 0:
        bad |= det.xyxy[:, 0] < margin
    if tile.y0 > 0:
        bad |= det.xyxy[:, 1] < margin
    if tile.x1 < tile.level_width:
        bad |= det.xyxy[:, 2] > w - margin
    if tile.y1 < tile.level_height:
        bad |= det.xyxy[:, 3] > h - margin
    return det[~bad]


def _resize_level(image: npt.NDArray[np.uint8], tile: Tile) -> npt.NDArray[np.uint8]:
    """``image`` resized to ``tile``'s level (area averaging down, bilinear up; the image itself at 1)."""
    h, w = image.shape[:2]
    if (tile.level_width, tile.level_height) == (w, h):
        return image
    interp = cv2.INTER_AREA if tile.scale < 1 else cv2.INTER_LINEAR
    resized = cv2.resize(image, (tile.level_width, tile.level_height), interpolation=interp)
    return resized.astype(np.uint8, copy=False)


class TiledDetector:
    """Runs a :class:`Detector` over the pyramid tiles of an image and merges the results."""

    def __init__(self, detector: Detector, config: TilingConfig | None = None) -> None:
        self.detector = detector
        self.config = config or TilingConfig(tile=detector.config.imgsz)
        #: tiles the detector ran on in the last :meth:`detect`
        self.last_tiles = 0

    def detect(self, image: npt.NDArray[np.uint8]) -> Detections:
        """Merged detections in original-image pixels."""
        h, w = image.shape[:2]
        parts = self._run(image, plan_tiles(w, h, self.config))
        self.last_tiles = len(parts)
        merged = Detections.concat(parts)
        if len(merged) == 0:
            return merged
        merged = merged.clipped(w, h).with_nms(self.config.nms_iou)
        return merged.with_nms(self.config.agnostic_iou, class_agnostic=True)

    def _run(self, image: npt.NDArray[np.uint8], tiles: list[Tile]) -> list[Detections]:
        """The detector's boxes in each of ``tiles`` (one level at a time), in original-image pixels."""
        parts: list[Detections] = []
        level: tuple[float, npt.NDArray[np.uint8]] | None = None  # the current level, resized once
        for tile in tiles:
            if level is None or level[0] != tile.scale:
                level = (tile.scale, _resize_level(image, tile))
            crop = level[1][tile.y0 : tile.y1, tile.x0 : tile.x1]
            det = _drop_cut(self.detector.detect(crop), tile, self.config.edge_margin)
            parts.append(det.shifted(tile.x0, tile.y0).scaled(1.0 / tile.scale))
        return parts
