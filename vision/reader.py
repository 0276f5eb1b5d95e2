"""The card reader: detector backend + tiling + corner grouping, image in, physical cards out."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from vision.detections import Detections
from vision.detectors.base import Detector, DetectorConfig, create_detector
from vision.instances import CardInstance, InstanceConfig, group_corners
from vision.tiling import TiledDetector, TilingConfig


@dataclass(frozen=True)
class ReaderConfig:
    """Everything needed to read cards from an image."""

    detector: DetectorConfig = field(default_factory=DetectorConfig)
    tiling: TilingConfig | None = None  # None: automatic pyramid with tile = detector imgsz
    instances: InstanceConfig = field(default_factory=InstanceConfig)


@dataclass(frozen=True)
class Reading:
    """Result for one image: the raw corner detections and the physical cards."""

    corners: Detections
    cards: list[CardInstance]


class CardReader:
    """Reads the cards of BGR images."""

    def __init__(self, config: ReaderConfig | None = None, detector: Detector | None = None) -> None:
        self.config = config or ReaderConfig()
        self.detector = detector or create_detector(self.config.detector)
        tiling = self.config.tiling or TilingConfig(tile=self.config.detector.imgsz)
        self.tiled = TiledDetector(self.detector, tiling)

    def read(self, image: npt.NDArray[np.uint8]) -> Reading:
        """Corners and cards of one image."""
        corners = self.tiled.detect(image)
        return Reading(corners, group_corners(corners, self.config.instances))
