"""Cut a rendered YOLO dataset into index-sized training tiles.

Tiled inference (:mod:`vision.tiling`) shows the network ``tile``-pixel windows in which a corner
index is roughly 16–64 px tall. Training on whole 640-px renders shrunk to 320 would make indices
tiny, so each render is resized so that its median index gets a random target height (log-uniform in
``index_px``), and ``tiles_per_image`` windows are cut around randomly chosen indices (plus a few at
random places). Labels are clipped to the window; a label less than ``min_visible`` inside is dropped
(the tiled detector also drops cut boxes). Output: ultralytics layout with its own ``data.yaml``.

    tractorcam synth tiles SRC OUT [--per-image K] [--val-per-image K] [--extra-train DIR]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from vision.labels import CARD_CLASSES

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


class TileDatasetError(ValueError):
    """The source dataset split is missing or empty."""


@dataclass(frozen=True)
class TileSettings:
    """How tiles are cut."""

    tile: int = 320
    tiles_per_image: int = 2
    index_px: tuple[float, float] = (16.0, 64.0)
    min_visible: float = 0.6
    random_tile_share: float = 0.15
    max_upscale: float = 2.0
    seed: int = 0


def read_yolo_labels(
    path: Path, width: int, height: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Class ids and pixel xyxy boxes of a YOLO label file (missing file → no labels)."""
    if not path.is_file() or not path.read_text().strip():
        return np.zeros(0, np.int64), np.zeros((0, 4), np.float32)
    rows = np.array(
        [[float(v) for v in line.split()[:5]] for line in path.read_text().splitlines() if line.strip()]
    )
    cls = rows[:, 0].astype(np.int64)
    cx, cy, w, h = rows[:, 1] * width, rows[:, 2] * height, rows[:, 3] * width, rows[:, 4] * height
    return cls, np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1).astype(np.float32)


def cut_tile(
    boxes: npt.NDArray[np.float32],
    cls: npt.NDArray[np.int64],
    x0: int,
    y0: int,
    tile: int,
    min_visible: float,
) -> list[str]:
    """YOLO label lines of the boxes (level pixels) inside the window at (x0, y0)."""
    lines = []
    for c, (a, b, cc, d) in zip(cls, boxes, strict=True):
        area = max(cc - a, 0) * max(d - b, 0)
        ca, cb = max(a - x0, 0), max(b - y0, 0)
        ccx, cd = min(cc - x0, tile), min(d - y0, tile)
        inside = max(ccx - ca, 0) * max(cd - cb, 0)
        if area <= 0 or inside / area < min_visible:
            continue
        lines.append(
            f"{int(c)} {(ca + ccx) / 2 / tile:.6f} {(cb + cd) / 2 / tile:.6f} "
            f"{(ccx - ca) / tile:.6f} {(cd - cb) / tile:.6f}"
        )
    return lines


def make_tiles(src: Path, split: str, out: Path, settings: TileSettings, limit: int | None = None) -> int:
    """Write tiles of ``src/images/<split>`` into ``out/images/<split>``; returns the number of tiles."""
    img_dir, lab_dir = Path(src) / "images" / split, Path(src) / "labels" / split
    images = sorted(p for p in img_dir.glob("*") if p.suffix.lower() in IMAGE_SUFFIXES)[:limit]
    if not images:
        raise TileDatasetError(f"no images in {img_dir}")
    out_img, out_lab = Path(out) / "images" / split, Path(out) / "labels" / split
    out_img.mkdir(parents=True, exist_ok=True)
    out_lab.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(settings.seed)
    t = settings.tile
    count = 0
    for path in images:
        image = cv2.imread(str(path))
        if image is None:
            continue
        h, w = image.shape[:2]
        cls, boxes = read_yolo_labels(lab_dir / (path.stem + ".txt"), w, h)
        if len(cls) == 0:
            continue
        sizes = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
        median = float(np.median(sizes))
        for k in range(settings.tiles_per_image):
            lo, hi = np.log(settings.index_px[0]), np.log(settings.index_px[1])
            scale = min(float(np.exp(rng.uniform(lo, hi))) / median, settings.max_upscale)
            lw, lh = max(1, round(w * scale)), max(1, round(h * scale))
            level = cv2.resize(
                image, (lw, lh), interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
            )
            lboxes = boxes * scale
            if rng.random() < settings.random_tile_share:
                cx, cy = rng.uniform(0, lw), rng.uniform(0, lh)
            else:
                j = int(rng.integers(len(cls)))
                cx = (lboxes[j, 0] + lboxes[j, 2]) / 2 + rng.uniform(-0.4, 0.4) * t
                cy = (lboxes[j, 1] + lboxes[j, 3]) / 2 + rng.uniform(-0.4, 0.4) * t
            x0 = int(np.clip(cx - t / 2, 0, max(lw - t, 0)))
            y0 = int(np.clip(cy - t / 2, 0, max(lh - t, 0)))
            canvas = np.full((t, t, 3), 114, np.uint8)
            crop = level[y0 : y0 + t, x0 : x0 + t]
            canvas[: crop.shape[0], : crop.shape[1]] = crop
            name = f"{path.stem}_{k}"
            cv2.imwrite(str(out_img / f"{name}.jpg"), canvas, [cv2.IMWRITE_JPEG_QUALITY, 92])
            lines = cut_tile(lboxes, cls, x0, y0, t, settings.min_visible)
            (out_lab / f"{name}.txt").write_text("".join(line + "\n" for line in lines))
            count += 1
    return count


def write_data_yaml(out: Path, splits: dict[str, str]) -> Path:
    """An ultralytics ``data.yaml`` for ``out`` with the 54 card classes (splits: role → split name)."""
    names = "".join(f"  {i}: {n}\n" for i, n in enumerate(CARD_CLASSES))
    roles = "".join(f"{role}: images/{split}\n" for role, split in splits.items())
    path = Path(out) / "data.yaml"
    path.write_text(f"path: {Path(out).resolve()}\n{roles}names:\n{names}")
    return path
