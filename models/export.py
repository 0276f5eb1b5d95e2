"""Export trained weights for the runtimes without torch: ONNX (ONNX Runtime) and NCNN.

``export_ncnn`` writes an ultralytics NCNN folder (``model.ncnn.param`` + ``model.ncnn.bin``, via PNNX;
needs the ``train`` extra), which :mod:`vision.detectors.ncnn_backend` runs with the ``ncnn`` package
(the fastest CPU runtime on a Raspberry Pi 4/5, see docs/vision.md).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


class ExportError(ValueError):
    """Missing weights or an export that produced no file."""


def export_onnx(
    weights: Path, out: Path | None = None, imgsz: int = 320, opset: int = 17, simplify: bool = True
) -> Path:
    """Write a static-shape (1, 3, imgsz, imgsz) ONNX model without NMS next to ``weights`` or at ``out``."""
    weights = Path(weights)
    if not weights.is_file():
        raise ExportError(f"weights not found: {weights}")
    os.environ["YOLO_OFFLINE"] = "1"
    from ultralytics.models import YOLO

    produced = Path(
        YOLO(str(weights), task="detect").export(
            format="onnx",
            imgsz=imgsz,
            opset=opset,
            simplify=simplify,
            dynamic=False,
            half=False,
            device="cpu",
        )
    )
    if not produced.is_file():
        raise ExportError(f"export produced no file for {weights}")
    if out is not None and produced.resolve() != Path(out).resolve():
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(produced), str(out))
        return Path(out)
    return produced


def export_ncnn(weights: Path, out: Path | None = None, imgsz: int = 320) -> Path:
    """Write an NCNN export folder (FP32) next to ``weights`` (``<stem>_ncnn_model``) or at ``out``."""
    weights = Path(weights)
    if not weights.is_file():
        raise ExportError(f"weights not found: {weights}")
    os.environ["YOLO_OFFLINE"] = "1"
    from ultralytics.models import YOLO

    produced = Path(YOLO(str(weights), task="detect").export(format="ncnn", imgsz=imgsz, device="cpu"))
    if not (produced / "model.ncnn.param").is_file():
        raise ExportError(f"NCNN export produced no model for {weights}")
    (produced / "model_ncnn.py").unlink(missing_ok=True)  # PNNX's sample script, not needed
    if out is not None and produced.resolve() != Path(out).resolve():
        if Path(out).exists():
            shutil.rmtree(out)
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(produced), str(out))
        return Path(out)
    return produced
