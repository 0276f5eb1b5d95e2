"""A scripted detector for tests: returns ``config.script`` entries in turn (cycling)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from vision.detections import Detections
from vision.detectors.base import DetectorConfig


class FakeDetector:
    """Returns the scripted detections, one entry per call, clipped to the image."""

    def __init__(self, config: DetectorConfig) -> None:
        self.config = config
        self.calls: list[tuple[int, int]] = []
        self.classes = 54

    def detect(self, image: npt.NDArray[np.uint8]) -> Detections:
        """The next scripted Detections (empty when there is no script)."""
        h, w = image.shape[:2]
        self.calls.append((w, h))
        if not self.config.script:
            return Detections.empty()
        det = self.config.script[(len(self.calls) - 1) % len(self.config.script)]
        return det.filter_confidence(self.config.conf)
