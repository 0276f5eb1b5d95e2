"""NCNN backend: the fastest CPU runtime on a Raspberry Pi 4/5 (``pip install tractorcam[ncnn]``).

Loads an ultralytics NCNN export (a folder with ``model.ncnn.param`` and ``model.ncnn.bin``, made by
``tractorcam export --format ncnn``). Input ``in0`` is the letterboxed RGB image in [0, 1], output
``out0`` the same (4 + nc, anchors) head tensor as the ONNX export, so decoding is shared
(:func:`vision.detectors.preprocess.decode_yolo`). Imports ``ncnn`` lazily, never torch.
"""

from __future__ import annotations

import os

import numpy as np
import numpy.typing as npt

from vision.detections import Detections
from vision.detectors.base import DetectorConfig, WeightsNotFoundError, resolve_weights
from vision.detectors.preprocess import decode_yolo, letterbox, to_blob


class NcnnDetector:
    """A YOLO NCNN export folder run with the ``ncnn`` Python bindings."""

    def __init__(self, config: DetectorConfig) -> None:
        import ncnn

        self.config = config
        self.weights = resolve_weights(config)
        param, binary = self.weights / "model.ncnn.param", self.weights / "model.ncnn.bin"
        if not (param.is_file() and binary.is_file()):
            raise WeightsNotFoundError(f"not an NCNN export (model.ncnn.param/.bin): {self.weights}")
        self._ncnn = ncnn
        self.net = ncnn.Net()
        self.net.opt.num_threads = config.threads or os.cpu_count() or 1
        self.net.load_param(str(param))
        self.net.load_model(str(binary))
        self.imgsz = config.imgsz
        self.classes = int(self._run(np.zeros((1, 3, self.imgsz, self.imgsz), np.float32)).shape[1]) - 4

    def _run(self, blob: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        with self.net.create_extractor() as ex:
            ex.input(self.net.input_names()[0], self._ncnn.Mat(blob[0]).clone())
            _, out = ex.extract(self.net.output_names()[0])
        return np.asarray(out, np.float32)[None]

    def detect(self, image: npt.NDArray[np.uint8]) -> Detections:
        """Detections in ``image`` pixel coordinates."""
        square, lb = letterbox(image, self.imgsz)
        det = decode_yolo(self._run(to_blob(square)), self.config.conf, self.config.iou)
        h, w = image.shape[:2]
        return lb.to_image(det).clipped(w, h)
