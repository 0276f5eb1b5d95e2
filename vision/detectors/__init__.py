"""Detector plug-ins keyed by ``type``: ``ultralytics`` (PyTorch), ``onnx`` (ONNX Runtime), ``fake`` (tests).

Backends are imported only when created, so ``create_detector(DetectorConfig(type="onnx", ...))`` never
imports torch, and importing this package imports neither torch nor onnxruntime.
"""

from vision.detectors.base import (
    Detector,
    DetectorConfig,
    UnknownDetectorType,
    WeightsNotFoundError,
    create_detector,
    default_weights,
    detector_types,
)

__all__ = [
    "Detector",
    "DetectorConfig",
    "UnknownDetectorType",
    "WeightsNotFoundError",
    "create_detector",
    "default_weights",
    "detector_types",
]
