"""Export trained weights to ONNX for ONNX Runtime (the Pi backend).

NCNN (fastest on a Raspberry Pi 4/5 CPU) is exported the same way on a machine with ultralytics:

    YOLO_OFFLINE=1 python -c "from ultralytics import YOLO; \
        YOLO('models/weights/best.pt').export(format='ncnn', imgsz=320)"

which writes ``models/weights/best_ncnn_model/`` (``model.ncnn.param`` + ``.bin``); ultralytics loads that
folder with ``YOLO('best_ncnn_model')`` (needs the ``ncnn`` pip package on the Pi). It is not committed:
the ONNX file runs everywhere without torch, see docs/vision.md.
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
    from ultralytics import YOLO

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
