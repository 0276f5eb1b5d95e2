"""The detector protocol, its configuration and the plug-in registry."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from vision.detections import Detections
from vision.settings import CHECKPOINTS_DIR, SHIPPED, WEIGHTS_DIR, ReaderSettings


class UnknownDetectorType(ValueError):
    """``DetectorConfig.type`` names no registered backend."""


class WeightsNotFoundError(ValueError):
    """The weights file given to a backend does not exist."""


class ClassifierRequiredError(ValueError):
    """A single-class (localise-only) detector was used without the index classifier."""


@dataclass(frozen=True)
class DetectorConfig:
    """What to build: backend ``type`` and its settings.

    ``imgsz`` is the network input size (square, letterboxed); ``conf`` and ``iou`` the score and NMS
    thresholds; ``script`` is used by the ``fake`` backend only (one Detections per call, cycled).
    ``classifier``: an index-classifier ONNX file (:mod:`vision.classifier`); when given, the detector's
    boxes above ``det_conf`` (class-agnostic) are named by it and ``conf`` applies to its probability;
    ``joker_conf`` (None: ``conf``) is the probability a joker needs (:data:`vision.classifier.JOKER_IDS`).
    ``suit_head``: a suit-head ONNX file (:data:`vision.heads.SUIT`) whose reading of a wider
    crop is folded into the classifier's with ``suit_weight`` (:func:`vision.heads.fuse`).
    ``orientation_head``: an orientation-head ONNX file (:data:`vision.heads.ORIENTATION`)
    giving each named index its reading direction, so card grouping pairs only opposite corners.
    ``upright_head``: an upright-head ONNX file (:data:`vision.heads.UPRIGHT`, needs the
    orientation head) whose reading of each crop turned upright is folded in with ``upright_weight``.
    ``joker_head``: a joker-head ONNX file (:data:`vision.heads.JOKER`) whose reading of a wide
    window (is it a joker's mark, and which) is folded in with ``joker_weight``.
    """

    type: str = "onnx"
    weights: Path | None = None
    imgsz: int = 320
    conf: float = 0.25
    iou: float = 0.5
    threads: int = 0
    script: Sequence[Detections] = field(default_factory=tuple)
    classifier: Path | None = None
    det_conf: float = 0.01
    joker_conf: float | None = None
    suit_head: Path | None = None
    suit_weight: float = 1.0
    orientation_head: Path | None = None
    upright_head: Path | None = None
    upright_weight: float = 1.0
    joker_head: Path | None = None
    joker_weight: float = 1.0

    def localiser_only(self) -> DetectorConfig:
        """This config without its second stage (classifier and heads), keeping boxes from ``det_conf``:
        what the localiser of a two-stage reader is built from."""
        return replace(
            self,
            conf=self.det_conf,
            classifier=None,
            suit_head=None,
            orientation_head=None,
            upright_head=None,
            joker_head=None,
        )


@runtime_checkable
class Detector(Protocol):
    """Detects corner indices in one BGR image at the network's input size (no tiling).

    ``classes`` is the number of the network's classes: 54 when it names cards itself, 1 when it
    only localises indices and the classifier (:mod:`vision.classifier`) names them.
    """

    config: DetectorConfig
    classes: int

    def detect(self, image: npt.NDArray[np.uint8]) -> Detections:
        """Detections in ``image`` pixel coordinates."""
        ...


# type -> "module:Class"; modules are imported on demand.
_BACKENDS: dict[str, str] = {
    "ultralytics": "vision.detectors.ultralytics_backend:UltralyticsDetector",
    "onnx": "vision.detectors.onnx_backend:OnnxDetector",
    "ncnn": "vision.detectors.ncnn_backend:NcnnDetector",
    "fake": "vision.detectors.fake:FakeDetector",
}


def detector_types() -> list[str]:
    """Registered backend names."""
    return sorted(_BACKENDS)


def default_weights(type_name: str) -> Path:
    """The committed weights for a backend type: the reader's ``best_ncnn_model/`` or ``best.onnx``,
    or the lab's checkpoint ``best.pt`` for ``ultralytics`` (a source checkout only)."""
    if type_name == "ultralytics":
        return CHECKPOINTS_DIR / "best.pt"
    return WEIGHTS_DIR / ("best_ncnn_model" if type_name == "ncnn" else "best.onnx")


def create_detector(config: DetectorConfig) -> Detector:
    """Build the network of the backend named by ``config.type``: the localiser alone when the
    config names a classifier (the reader, :class:`vision.reader.CardReader`, names its boxes)."""
    try:
        target = _BACKENDS[config.type]
    except KeyError:
        raise UnknownDetectorType(
            f"unknown detector type {config.type!r}; known: {', '.join(detector_types())}"
        ) from None
    module_name, class_name = target.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    detector: Detector = cls(config if config.classifier is None else config.localiser_only())
    return detector


def _shipped(name: str) -> Path | None:
    path = WEIGHTS_DIR / name
    return path if path.is_file() else None


def default_classifier() -> Path | None:
    """The committed index classifier (the settings file's ``classifier.file``) if there is one."""
    return _shipped(SHIPPED.classifier.file)


def default_suit_head() -> Path | None:
    """The committed suit head (``suit_head.file``) if there is one."""
    return _shipped(SHIPPED.suit_head.file)


def default_orientation_head() -> Path | None:
    """The committed orientation head (``orientation_head.file``) if there is one."""
    return _shipped(SHIPPED.orientation_head.file)


def default_upright_head() -> Path | None:
    """The committed upright head (``upright_head.file``) if there is one."""
    return _shipped(SHIPPED.upright_head.file)


def default_joker_head(settings: ReaderSettings = SHIPPED) -> Path | None:
    """The committed joker head (``joker_head.file``) if ``settings`` name one and it is there."""
    return None if settings.joker_head is None else _shipped(settings.joker_head.file)


def resolve_weights(config: DetectorConfig) -> Path:
    """``config.weights`` or the committed default, checked to exist (a folder for ``ncnn``)."""
    path = Path(config.weights) if config.weights is not None else default_weights(config.type)
    if not (path.is_dir() if config.type == "ncnn" else path.is_file()):
        raise WeightsNotFoundError(f"weights not found: {path}")
    return path
