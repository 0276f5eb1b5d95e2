"""Learning an enrolled deck (``tractorcam enroll learn DIR``): the shipped index classifier
fine-tuned on crops cut from the event's own faces (:mod:`calibration.enroll` cut them from the
table camera's photos), written as ``DIR/classifier.onnx`` for ``run --model DIR`` and
``detect --model DIR``.

The crops come from :class:`models.gpu.FaceBank` on the CPU, the same cutter the GPU run uses: each
face turned to any angle, its corner index jittered like the localiser's boxes, over a random
table, sometimes half covered by a neighbour as in a fan, and a share of background (the face's
middle, bare table). The network starts from the shipped weights with a low learning rate for a
few minutes, so what it knows of tables and clutter stays while it learns this deck's indices.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from engine.cards import CARD_NAMES

#: Crops per step, the peak learning rate and the share of bare-table crops.
BATCH = 128
LR = 4e-4
TABLE_SHARE = 0.08


class LearnError(ValueError):
    """An enrolled deck folder that cannot be learned (one line)."""


def enrolled_faces(folder: Path) -> dict[str, npt.NDArray[np.uint8]]:
    """The 54 faces of an enrolled deck (``DIR/faces/CARD.png``), BGRA, all one size."""
    faces = {}
    for card in CARD_NAMES:
        image = cv2.imread(str(folder / "faces" / f"{card}.png"))
        if image is None:
            raise LearnError(f"{folder}: no face for {card} (tractorcam enroll --images ... --out {folder})")
        faces[card] = image
    h = int(np.median([f.shape[0] for f in faces.values()]))
    w = int(np.median([f.shape[1] for f in faces.values()]))
    out = {}
    for card, face in faces.items():
        face = cv2.resize(face, (w, h), interpolation=cv2.INTER_AREA)
        out[card] = np.dstack([face, np.full((h, w), 255, np.uint8)])
    return out


def localised_index_box(faces: dict[str, npt.NDArray[np.uint8]]) -> tuple[float, float, float, float] | None:
    """The deck's top-left index box (face px) as the shipped localiser sees it on the enrolled
    faces: the median of the boxes it finds in a face's top-left or (turned) bottom-right quarter
    over the 52 suit cards; None when it finds fewer than 13. The classifier reads crops round the
    localiser's boxes, so its training crops are cut round the same boxes."""
    from vision.reader import CardReader, default_reader_config

    reader = CardReader(default_reader_config("onnx"))
    pad = 60
    boxes = []
    for card in CARD_NAMES[:52]:
        face = faces[card][..., :3]
        h, w = face.shape[:2]
        framed = cv2.copyMakeBorder(face, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=(60, 90, 60))
        for x1, y1, x2, y2 in reader.read(framed).corners.xyxy - pad:
            cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
            if cx < w / 2 and cy < h / 2:
                boxes.append((x1, y1, x2, y2))
            elif cx > w / 2 and cy > h / 2:  # the bottom-right index, turned to the top-left
                boxes.append((w - x2, h - y2, w - x1, h - y1))
    if len(boxes) < 13:
        return None
    x1, y1, x2, y2 = np.median(np.array(boxes, np.float64), axis=0)
    h, w = faces["2S"].shape[:2]
    return (max(0.0, float(x1)), max(0.0, float(y1)), min(w / 2, float(x2)), min(h / 2, float(y2)))


def face_set(folder: Path) -> Any:
    """The enrolled faces as the renderer's :class:`~models.synth.faces.FaceSet`, its corner index
    box found by the shipped localiser (:func:`localised_index_box`), else by the ink in the
    faces' corners (:func:`models.synth.faces.design_index_box`)."""
    from models.synth.faces import FaceSet, design_index_box, joker_index_boxes

    faces = enrolled_faces(folder)
    box = localised_index_box(faces)
    if box is None:
        try:
            box = design_index_box(faces)
        except RuntimeError as exc:
            raise LearnError(f"{folder}: the corner indices are not found on the faces ({exc})") from None
    back = np.zeros_like(faces["2S"])
    return FaceSet("enrolled", faces, back, box, card_boxes=joker_index_boxes(faces))


def learn(
    folder: Path,
    minutes: float = 10.0,
    *,
    init: Path | None = None,
    seed: int = 0,
    threads: int = 0,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fine-tune the index classifier on the enrolled deck in ``folder`` for ``minutes`` and write
    ``folder/classifier.onnx`` (and its ``.pt``); returns what was done."""
    import torch

    from models.classifier import build_net, export_onnx
    from models.gpu import FaceBank, augment_torch, faceset_arrays
    from vision.classifier import BACKGROUND
    from vision.crops import CROP_PAD, CROP_SIZE
    from vision.settings import WEIGHTS_DIR

    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    bank = FaceBank(*faceset_arrays(face_set(folder)), "cpu")
    net = build_net(width=2.0)
    net.load_state_dict(torch.load(init or WEIGHTS_DIR / "classifier.pt", map_location="cpu"))
    opt = torch.optim.AdamW(net.parameters(), lr=LR, weight_decay=5e-4)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    start = time.monotonic()
    end = start + 60 * minutes
    steps, seen, last = 0, 0, start
    net.train()
    while time.monotonic() < end:
        frac = (time.monotonic() - start) / (end - start)
        for g in opt.param_groups:
            g["lr"] = LR * (0.1 + 0.9 * (1 - frac))
        x, y = bank.crops(BATCH, gen, CROP_SIZE)
        n_table = int(BATCH * TABLE_SHARE)
        if n_table:  # bare table: a colour with soft shading, no card
            shade = 1 + 0.25 * torch.nn.functional.interpolate(
                torch.rand(n_table, 1, 3, 3, generator=gen) * 2 - 1,
                size=(CROP_SIZE, CROP_SIZE),
                mode="bilinear",
            )
            table = (torch.rand(n_table, 3, 1, 1, generator=gen) * 0.75 + 0.05) * shade
            x[:n_table] = (table.clamp(0, 1) * 255).to(torch.uint8)
            y[:n_table] = BACKGROUND
        loss = loss_fn(net(augment_torch(x, gen)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1
        seen += BATCH
        if time.monotonic() - last > 60:
            last = time.monotonic()
            log(
                f"  {steps} steps, {seen} crops, loss {float(loss.detach()):.3f}, {(last - start) / 60:.1f} min"
            )
    torch.save(net.state_dict(), folder / "classifier.pt")
    export_onnx(net, CROP_SIZE, folder / "classifier.onnx", CROP_PAD)
    record = {
        "steps": steps,
        "crops": seen,
        "minutes": round((time.monotonic() - start) / 60, 2),
        "seed": seed,
    }
    (folder / "learned.json").write_text(json.dumps(record, indent=1))
    return record
