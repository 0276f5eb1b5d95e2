"""PyTorch backend through ultralytics (training machine; imports torch lazily)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from vision.detections import Detections
from vision.detectors.base import DetectorConfig, resolve_weights


class UltralyticsDetector:
    """An ultralytics ``.pt`` model; its own letterbox and NMS, adapted to :class:`Detections`."""

    def __init__(self, config: DetectorConfig) -> None:
        import os

        os.environ.setdefault("YOLO_OFFLINE", "1")
        from ultralytics.models import YOLO

        self.config = config
        self.weights = resolve_weights(config)
        self.model = YOLO(str(self.weights), task="detect")
        self.classes = len(self.model.names)
        if config.threads:
            import torch

            torch.set_num_threads(config.threads)

    def detect(self, image: npt.NDArray[np.uint8]) -> Detections:
        """Detections in ``image`` pixel coordinates."""
        results: Any = self.model.predict(
            image, imgsz=self.config.imgsz, conf=self.config.conf, iou=self.config.iou, verbose=False
        )
        boxes = results[0].boxes
        return Detections(
            boxes.xyxy.cpu().numpy(), boxes.conf.cpu().numpy(), boxes.cls.cpu().numpy().astype(np.int64)
        )
