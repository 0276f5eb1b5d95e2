"""Enrolling a held-out deck and learning it (issue 41): wall time, and the index classifier's
accuracy on that deck before and after.

    .venv/bin/python benchmarks/enroll.py [--design paris ...] [--minutes 20] [--scenes 40]

For each design: the three ``enroll sheet`` photos rendered from its cards as a referee takes them
(``models.synth.setup_frames.enrollment_photos``), the faces cut (:mod:`calibration.enroll`), the
classifier fine-tuned on them for ``--minutes`` (:mod:`models.enroll`); then ``--scenes`` fresh
scenes of that design (other cameras, light, layouts, arms; never the enrollment photos) give the
label crops of every index at least half visible, jittered like a localiser's boxes, on which the
shipped classifier and the learned one are scored (card accuracy: the 54 cards and background).
A diagnostic: the product's figure is the filmed deal (``benchmarks/deal.py``).
"""

from __future__ import annotations

import platform
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Annotated

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import cv2  # noqa: E402
import numpy as np  # noqa: E402
import typer  # noqa: E402

from calibration.enroll import contact_sheet, enroll_photos  # noqa: E402
from models.classifier import CropSet, jitter_boxes, uint8_crops  # noqa: E402
from models.enroll import learn  # noqa: E402
from models.synth.scene import render_scene  # noqa: E402
from models.synth.setup_frames import enrollment_photos  # noqa: E402
from vision.labels import class_id  # noqa: E402


def label_crops(design: str, scenes: int, seed: int) -> CropSet:
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for s in range(scenes):
        scene = render_scene(seed + s, designs=[design], width=1920, height=1440)
        boxes, labels = [], []
        for card in scene.cards:
            for corner in card.corners:
                if card.face_up and corner.visible >= 0.5:
                    boxes.append(corner.box)
                    labels.append(class_id(card.card))
        if boxes:
            xs.append(uint8_crops(scene.image, jitter_boxes(np.array(boxes, np.float32), rng, 0.12)))
            ys.append(np.array(labels, np.int64))
    return CropSet(np.concatenate(xs), np.concatenate(ys))


def accuracy(onnx: Path, data: CropSet) -> float:
    import onnxruntime as ort

    session = ort.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    right = 0
    for i in range(0, len(data.y), 512):
        logits = session.run(None, {name: data.x[i : i + 512].astype(np.float32) / 255.0})[0]
        right += int((logits.argmax(1) == data.y[i : i + 512]).sum())
    return right / len(data.y)


def main(
    design: Annotated[list[str] | None, typer.Option("--design", help="held-out design(s)")] = None,
    minutes: Annotated[
        float, typer.Option(help="fine-tuning time per design (tractorcam enroll learn's default)")
    ] = 20.0,
    scenes: Annotated[int, typer.Option(help="evaluation scenes per design")] = 40,
    keep: Annotated[Path | None, typer.Option(help="keep each enrolled deck under this folder")] = None,
) -> None:
    from vision.settings import WEIGHTS_DIR

    print(f"enrollment benchmark, {date.today()}, {platform.machine()}, {minutes:g} min per deck")
    for name in design or ["paris"]:
        folder = (keep / name) if keep else Path(tempfile.mkdtemp()) / name
        (folder / "faces").mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        faces = enroll_photos(enrollment_photos(name, seed=101))
        cut = time.perf_counter() - t0
        for f in faces:
            cv2.imwrite(str(folder / "faces" / f"{f.card}.png"), f.face)
        cv2.imwrite(str(folder / "contact.png"), contact_sheet(faces))
        t0 = time.perf_counter()
        record = learn(folder, minutes, log=lambda m: print(m, flush=True))
        taught = time.perf_counter() - t0
        data = label_crops(name, scenes, seed=5000)
        before = accuracy(WEIGHTS_DIR / "classifier.onnx", data)
        after = accuracy(folder / "classifier.onnx", data)
        print(
            f"{name}: faces cut in {cut:.1f} s, learned in {taught / 60:.1f} min ({record['steps']} steps); "
            f"{len(data.y)} index crops from {scenes} scenes: shipped {before:.2%}, enrolled {after:.2%}"
        )


if __name__ == "__main__":
    typer.run(main)
