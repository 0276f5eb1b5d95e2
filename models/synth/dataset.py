"""Export rendered scenes as an ultralytics YOLO dataset of corner indices.

Layout under ``out``::

    images/<split>/*.jpg          imgsz × imgsz renders
    labels/<split>/*.txt          one line per visible corner index: ``class cx cy w h`` (normalised)
    annotations/<split>/*.json    full per-card labels (see :class:`models.synth.scene.CardLabel`)
    data.yaml                     path, train/val/test (= heldout) and the 54 class names

An index is written to the YOLO file only if it is face up and at least ``MIN_VISIBLE`` of it is
visible. Every image is rendered from its own seed derived from (seed, split, i), so a dataset is
the same whatever the number of worker processes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.synth.designs import SPLIT_DESIGNS
from vision.labels import CARD_CLASSES

MIN_VISIBLE = 0.6
#: appended only: a split's index seeds every image (:func:`image_seed`)
SPLITS = tuple(SPLIT_DESIGNS)
#: framing mix: whole table photos (small cards), tiles of big frames, close-ups of a fanned hand,
#: loose cards photographed at an angle (like phone photos)
MODES = (("table", 0.25), ("tile", 0.5), ("closeup", 0.15), ("loose", 0.1))


@dataclass(frozen=True)
class _Job:
    out: str
    split: str
    seed: int
    i: int
    imgsz: int
    designs: tuple[str, ...]
    printed: float = 0.0


class UnknownDesignError(ValueError):
    """A design name that the renderer does not know or cannot produce here."""


def image_seed(seed: int, split: str, i: int) -> int:
    """The render seed of image ``i`` of a split."""
    return int(np.random.SeedSequence([seed, SPLITS.index(split), i]).generate_state(1)[0])


def index_boxes(
    cards: list[Any], width: int, height: int, min_visible: float = MIN_VISIBLE
) -> tuple[np.ndarray, np.ndarray]:
    """Class ids (N,) and pixel boxes (N, 4) ``x1 y1 x2 y2`` of the visible face-up corner indices,
    clipped to the image: the labels a dataset image gets (:func:`yolo_lines` writes them)."""
    cls: list[int] = []
    xyxy: list[tuple[float, float, float, float]] = []
    for c in cards:
        if not c.face_up:
            continue
        for ix in c.corners:
            if ix.visible < min_visible:
                continue
            x1, y1, x2, y2 = ix.box
            x1, x2 = max(0.0, x1), min(float(width), x2)
            y1, y2 = max(0.0, y1), min(float(height), y2)
            if x2 - x1 < 1 or y2 - y1 < 1:
                continue
            cls.append(int(c.class_id))
            xyxy.append((x1, y1, x2, y2))
    return np.array(cls, np.int64), np.array(xyxy, np.float64).reshape(-1, 4)


def yolo_lines(cards: list[Any], width: int, height: int, min_visible: float = MIN_VISIBLE) -> list[str]:
    """YOLO label lines (``class cx cy w h``) of the visible face-up corner indices."""
    lines = []
    for c, (x1, y1, x2, y2) in zip(*index_boxes(cards, width, height, min_visible), strict=True):
        x1, y1, x2, y2 = (float(v) for v in (x1, y1, x2, y2))
        lines.append(
            f"{c} {(x1 + x2) / 2 / width:.6f} {(y1 + y2) / 2 / height:.6f} "
            f"{(x2 - x1) / width:.6f} {(y2 - y1) / height:.6f}"
        )
    return lines


def render_example(seed: int, imgsz: int, designs: tuple[str, ...], printed: float = 0.0) -> Any:
    """One dataset image (a :class:`~models.synth.scene.Scene`) from its seed.

    ``printed``: chance of printed sheets on the table (``render_scene``'s option; 0 = none).
    """
    from models.synth.scene import render_scene

    rng = np.random.default_rng(seed)
    mode = str(rng.choice([m for m, _ in MODES], p=[p for _, p in MODES]))
    opts: dict[str, Any] = {"width": imgsz, "height": imgsz, "mode": mode, "designs": list(designs)}
    if mode == "table":  # a whole (small) photo: cards 60-90 px high after the resize
        opts["card_px"] = (60.0, 90.0)
    opts["printed"] = printed  # 0: render_scene draws no sheet and no random number for one
    return render_scene(int(rng.integers(1 << 62)), **opts)


def _work(job: _Job) -> int:
    import cv2

    scene = render_example(image_seed(job.seed, job.split, job.i), job.imgsz, job.designs, job.printed)
    out = Path(job.out)
    stem = f"{job.split}_{job.seed}_{job.i:06d}"
    h, w = scene.image.shape[:2]
    cv2.imwrite(str(out / "images" / job.split / f"{stem}.jpg"), scene.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    lines = yolo_lines(scene.cards, w, h)
    (out / "labels" / job.split / f"{stem}.txt").write_text("".join(line + "\n" for line in lines))
    ann = {
        "image": f"images/{job.split}/{stem}.jpg",
        "width": w,
        "height": h,
        "design": scene.design,
        "designs": scene.meta.get("designs", []),
        "mode": scene.meta.get("mode"),
        "seed": scene.meta.get("seed"),
        "cards": [c.to_dict() for c in scene.cards],
    }
    (out / "annotations" / job.split / f"{stem}.json").write_text(json.dumps(ann))
    return len(lines)


def _one_thread() -> None:
    """Worker start: one OpenCV thread per process (the processes already use every core)."""
    import cv2

    cv2.setNumThreads(1)


def write_data_yaml(out: Path) -> Path:
    """Write ``data.yaml`` (ultralytics format; test = the held-out designs)."""
    names = "\n".join(f"  {i}: '{n}'" for i, n in enumerate(CARD_CLASSES))
    text = (
        f"# tractorcam synthetic corner-index dataset (models.synth.dataset)\n"
        f"path: {out.resolve()}\n"
        f"train: images/train\n"
        f"val: images/val\n"
        f"test: images/heldout\n"
        f"nc: {len(CARD_CLASSES)}\n"
        f"names:\n{names}\n"
    )
    path = out / "data.yaml"
    path.write_text(text)
    return path


def make_dataset(
    out: Path,
    n: int,
    seed: int,
    split: str,
    imgsz: int = 640,
    *,
    workers: int = 1,
    progress: bool = True,
    designs: tuple[str, ...] | None = None,
    printed: float = 0.0,
) -> Path:
    """Render ``n`` images of ``split`` into ``out`` (YOLO layout) and return the ``data.yaml`` path.

    ``split`` ``heldout`` draws only from HELDOUT designs, ``heldout_val`` only from HELDOUT_VAL
    designs (unseen decks for choosing between readers), ``train``/``val`` only from TRAIN
    designs (``models.synth.designs``). Deterministic by ``seed``. ``designs`` (names) replaces the
    split's designs, e.g. one deck to enroll; an unknown or unavailable name raises
    :class:`UnknownDesignError`. ``printed`` is the chance that an image has printed sheets (pages,
    score sheets, labels) on its table as unlabelled negatives; at 0 (the default) no image changes.
    """
    from tqdm import tqdm

    from models.synth.designs import BY_NAME, designs_for_split
    from models.synth.scene import available_designs

    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r} ({', '.join(SPLITS)})")
    if designs is not None:
        unknown = [d for d in designs if d not in BY_NAME]
        if unknown or not designs:
            raise UnknownDesignError(f"unknown design(s) {unknown}: choose from {sorted(BY_NAME)}")
        chosen = tuple(available_designs(tuple(BY_NAME[d] for d in designs)))
        if len(chosen) != len(designs):
            missing = sorted(set(designs) - set(chosen))
            raise UnknownDesignError(f"design(s) {missing} not available on this machine")
        designs = chosen
    else:
        designs = tuple(available_designs(designs_for_split(split)))
    if not 0.0 <= printed <= 1.0:
        raise ValueError(f"printed must be a chance in [0, 1], not {printed}")
    if not designs:
        raise RuntimeError(f"no design of split {split} is available")
    out = Path(out)
    for sub in ("images", "labels", "annotations"):
        (out / sub / split).mkdir(parents=True, exist_ok=True)
    jobs = [_Job(str(out), split, seed, i, imgsz, designs, printed) for i in range(n)]
    bar = tqdm(total=n, desc=f"synth {split}", unit="img", disable=not progress)
    if workers <= 1:
        for job in jobs:
            _work(job)
            bar.update()
    else:
        import multiprocessing as mp

        from models.synth.faces import ensure_cached

        ensure_cached(designs)  # build missing face atlases once, not in every worker

        # spawn, not fork: forking a process that already runs threads (OpenCV, torch, ...) can
        # leave a lock held in the child and hang it
        with mp.get_context("spawn").Pool(workers, initializer=_one_thread) as pool:
            for _ in pool.imap_unordered(_work, jobs, chunksize=4):
                bar.update()
    bar.close()
    return write_data_yaml(out)


def default_workers() -> int:
    """Worker processes used by the CLI when not told: half the cores, at least one."""
    return max(1, (os.cpu_count() or 2) // 2)
