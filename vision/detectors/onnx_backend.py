"""ONNX Runtime backend (what runs on the Pi). Imports onnxruntime lazily and never imports torch."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from vision.detections import Detections
from vision.detectors.base import DetectorConfig, resolve_weights
from vision.detectors.preprocess import decode_yolo, letterbox, to_blob
from vision.runtime import cpu_session


class OnnxDetector:
    """A YOLO ``.onnx`` export (no NMS inside) run with ONNX Runtime on the CPU."""

    def __init__(self, config: DetectorConfig) -> None:
        self.config = config
        self.weights = resolve_weights(config)
        self.session = cpu_session(self.weights, config.threads)
        inp = self.session.get_inputs()[0]
        self.input_name = inp.name
        size = inp.shape[2]
        self.imgsz = int(size) if isinstance(size, int) else config.imgsz
        channels = self.session.get_outputs()[0].shape[1]  # 4 box values + one score per class
        self.classes = int(channels) - 4 if isinstance(channels, int) else 54

    def detect(self, image: npt.NDArray[np.uint8]) -> Detections:
        """Detections in ``image`` pixel coordinates."""
        square, lb = letterbox(image, self.imgsz)
        (out,) = self.session.run(None, {self.input_name: to_blob(square)})[:1]
        det = decode_yolo(np.asarray(out, np.float32), self.config.conf, self.config.iou)
        h, w = image.shape[:2]
        return lb.to_image(det).clipped(w, h)
