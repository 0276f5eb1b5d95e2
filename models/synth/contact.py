"""Contact sheets for looking at the renderer's output (``docs/img/synth_*``).

    .venv/bin/python -m models.synth.contact docs/img

writes ``synth_contact_sheet.jpg`` (whole-table frames, a deal frame and dataset crops with their
YOLO boxes; JPEG, as photographs compress) and ``synth_index_boxes.png`` (procedural faces with
the detected corner-index boxes); ``python -m models.synth.contact --all-faces /tmp/faces.png`` draws every design's index boxes
(third-party art: look at it, do not commit it).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np


def _fit(img: np.ndarray, w: int, h: int) -> np.ndarray:
    s = min(w / img.shape[1], h / img.shape[0])
    small = cv2.resize(img, (int(img.shape[1] * s), int(img.shape[0] * s)), interpolation=cv2.INTER_AREA)
    out = np.full((h, w, 3), 255, np.uint8)
    y, x = (h - small.shape[0]) // 2, (w - small.shape[1]) // 2
    out[y : y + small.shape[0], x : x + small.shape[1]] = small
    return out


def _boxes(img: np.ndarray, cards: Any, min_visible: float = 0.6) -> np.ndarray:
    out = img.copy()
    for c in cards:
        if not c.face_up:
            continue
        for ix in c.corners:
            if ix.visible >= min_visible:
                x1, y1, x2, y2 = (int(round(v)) for v in ix.box)
                cv2.rectangle(out, (x1, y1), (x2, y2), (255, 0, 255), 1)
    return out


def contact_sheet(path: Path, seed: int = 0) -> Path:
    """Sample scenes: 3 whole tables, 1 deal frame, 8 dataset crops (4 with label boxes)."""
    from engine.sim import simulate_deal
    from models.synth.dataset import image_seed, render_example
    from models.synth.deal import make_renderer, plan_deal
    from models.synth.designs import HELDOUT, TRAIN
    from models.synth.layout import Table
    from models.synth.scene import available_designs, render_scene

    tiles = []
    for k in range(3):
        sc = render_scene(seed * 100 + k, width=1600, height=1200)
        tiles.append(_fit(sc.image, 480, 360))
    log = simulate_deal("national-2deck", seed + 5)
    rng = np.random.default_rng(seed + 5)
    table = Table(900, 900)
    film = plan_deal(log, rng, available_designs(HELDOUT)[0], table)
    renderer = make_renderer(rng, table, 1600, 1200)
    kf = next(k for k in film.keyframes if k.event.get("trick") == 6 and k.arms)
    tiles.append(_fit(renderer.render(kf.placements, kf.arms, rng, jpeg=False).image, 480, 360))
    names = tuple(available_designs(TRAIN))
    for i in range(8):
        sc = render_example(image_seed(seed, "train", i + 3), 640, names)
        img = _boxes(sc.image, sc.cards) if i % 2 else sc.image
        tiles.append(_fit(img, 480, 360))
    rows = [np.hstack(tiles[i : i + 4]) for i in range(0, len(tiles), 4)]
    sheet = np.vstack(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    params = [cv2.IMWRITE_JPEG_QUALITY, 90] if path.suffix == ".jpg" else [cv2.IMWRITE_PNG_COMPRESSION, 9]
    cv2.imwrite(str(path), sheet, params)
    return path


def index_sheet(path: Path, designs: tuple[Any, ...] | None = None) -> Path:
    """Faces with their corner-index boxes, one row per design (default: the procedural designs,
    whose art is the project's own; pass all designs to check the aisleriot slicing locally —
    that sheet contains third-party art and is not committed)."""
    from models.synth.designs import PROCEDURAL
    from models.synth.faces import is_available, load_faces

    rows = []
    for d in designs or PROCEDURAL:
        if not is_available(d):
            continue
        fs = load_faces(d.name)
        cells = []
        for card in ("AS", "10H", "7D", "QC", "KH", "SJ", "BJ"):
            f = fs.faces[card]
            a = f[:, :, 3:4].astype(np.float32) / 255
            img = (f[:, :, :3] * a + np.array([60, 120, 60]) * (1 - a)).astype(np.uint8)
            for x1, y1, x2, y2 in fs.index_boxes(card).values():
                cv2.rectangle(img, (int(x1), int(y1)), (int(x2), int(y2)), (255, 0, 255), 2)
            cells.append(cv2.resize(img, (160, 224), interpolation=cv2.INTER_AREA))
        rows.append(np.hstack(cells))
    cv2.imwrite(str(path), np.vstack(rows), [cv2.IMWRITE_PNG_COMPRESSION, 9])
    return path


def main() -> None:
    """``python -m models.synth.contact [DIR]`` writes the two docs sheets;
    ``python -m models.synth.contact --all-faces FILE`` writes the index-box sheet of every design."""
    if len(sys.argv) > 2 and sys.argv[1] == "--all-faces":
        from models.synth.designs import ALL

        print(index_sheet(Path(sys.argv[2]), ALL))
        return
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img")
    print(contact_sheet(out / "synth_contact_sheet.jpg"))
    print(index_sheet(out / "synth_index_boxes.png"))


if __name__ == "__main__":
    main()
