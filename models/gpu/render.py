"""Rendering on the workers: fresh training scenes (and face tiles) cut into classifier crops and
written as detection data, the heads a run trains and the windows their crops are cut with, and
the run's scene seeds."""

from __future__ import annotations

import functools
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from models.classifier import jitter_boxes, negative_boxes, uint8_crops
from models.gpu.common import ART_SHARE, SHIPPED_WEIGHTS, GpuRunError
from vision.classifier import BACKGROUND
from vision.crops import CROP_PAD, CROP_SIZE
from vision.heads import JOKER_HEAD_LABELS

if TYPE_CHECKING:
    from models.facetiles import FaceTileSettings

# --------------------------------------------------------------------------- rendering (workers)


#: The joker head's window (``gpu train --head joker``): 1.5 of the box's long side on each side, so
#: a corner mark's window reaches the middle of the card, where a joker's picture is; 48 px.
JOKER_PAD = 1.5
JOKER_SIZE = 48


@dataclass(frozen=True, eq=False)
class TrainedHead:
    """What ``gpu train --head`` trains: its outputs, the map from the 55 classes to them (None:
    the 55 themselves), and the window its crops are cut with."""

    classes: int
    labels: npt.NDArray[np.int64] | None
    pad: float
    size: int


HEADS: dict[str, TrainedHead] = {
    "cards": TrainedHead(55, None, CROP_PAD, CROP_SIZE),
    "joker": TrainedHead(3, JOKER_HEAD_LABELS, JOKER_PAD, JOKER_SIZE),
}


def trained_head(name: str) -> TrainedHead:
    """The head ``--head NAME`` names; :class:`GpuRunError` for an unknown one."""
    if name not in HEADS:
        raise GpuRunError(f"--head {name!r}: one of {', '.join(HEADS)}")
    return HEADS[name]


@dataclass(frozen=True)
class RenderJob:
    """A few scenes for one worker: their seeds and what to cut from them."""

    seeds: tuple[int, ...]
    art: tuple[str, ...]
    rand: tuple[str, ...]
    jitter: int = 3
    negatives: int = 3
    mine_share: float = 0.6
    mined_background: int = 12
    loc_dir: str = ""  # write the scenes as a detection dataset here ("" = not)
    loc_split: str = "train"
    printed: float = 0.15
    art_share: float = ART_SHARE
    #: share of the job's seeds that make a face tile (:func:`_localiser_tiles`: cards seen close,
    #: a quarter jokers, bare and printed surfaces) instead of a scene; tiles are not written as
    #: localiser data
    tile_share: float = 0.0
    #: the window the crops are cut with (the head trained: :data:`CROP_PAD` and :data:`CROP_SIZE`
    #: for the classifier, :data:`JOKER_PAD` and :data:`JOKER_SIZE` for the joker head)
    pad: float = CROP_PAD
    size: int = CROP_SIZE


_DETECTOR: Any = None


@functools.lru_cache(maxsize=64)
def _face_set(name: str) -> Any:
    """A design's FaceSet, kept by the worker (the 64 last used)."""
    from models.synth.faces import load_faces

    return load_faces(name)


def tile_example(
    rng: np.random.Generator, art: tuple[str, ...], rand: tuple[str, ...]
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """One face tile (:func:`_localiser_tiles`) of an art deck and a randomised deck: the image, its
    indices' classes and pixel boxes (N, 4)."""
    from models.facetiles import compose_tile

    decks = [art[int(rng.integers(len(art)))]] if art else []
    if rand:
        decks.append(rand[int(rng.integers(len(rand)))])
    image, labels = compose_tile(rng, [_face_set(d) for d in decks], _localiser_tiles())
    cls = np.array([c for c, _ in labels], np.int64)
    boxes = np.array([b for _, b in labels], np.float32).reshape(-1, 4)
    return image, cls, boxes


def _worker_init(threads: int = 1) -> None:
    import cv2

    cv2.setNumThreads(threads)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _detector() -> Any:
    global _DETECTOR
    if _DETECTOR is None:
        from vision.detectors.base import DetectorConfig, create_detector
        from vision.tiling import TiledDetector, TilingConfig

        net = create_detector(
            DetectorConfig(type="onnx", weights=SHIPPED_WEIGHTS / "best.onnx", conf=0.01, threads=1)
        )
        _DETECTOR = TiledDetector(net, TilingConfig(tile=net.config.imgsz))
    return _DETECTOR


def render_job(job: RenderJob) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64], int]:
    """Crops (N, 3, size, size) uint8 (the job's window), their classes, and the number of scenes
    rendered."""
    import cv2

    from models.mining import mine_image
    from models.synth.dataset import index_boxes, render_example, yolo_lines

    xs: list[npt.NDArray[np.uint8]] = []
    ys: list[npt.NDArray[np.int64]] = []
    for seed in job.seeds:
        rng = np.random.default_rng(seed)
        scene = None
        if job.tile_share > 0 and rng.random() < job.tile_share:
            image, cls, boxes = tile_example(rng, job.art, job.rand)
        else:
            pool = job.art if (rng.random() < job.art_share or not job.rand) else job.rand
            scene = render_example(int(rng.integers(1 << 62)), 640, pool, job.printed)
            image = scene.image
            cls, boxes64 = index_boxes(scene.cards, image.shape[1], image.shape[0])
            boxes = boxes64.astype(np.float32)
        h, w = image.shape[:2]
        for _ in range(job.jitter if len(cls) else 0):
            xs.append(uint8_crops(image, jitter_boxes(boxes, rng, 0.12), job.size, job.pad))
            ys.append(cls)
        neg = negative_boxes(boxes, w, h, job.negatives, rng)
        if len(neg):
            xs.append(uint8_crops(image, neg, job.size, job.pad))
            ys.append(np.full(len(neg), BACKGROUND, np.int64))
        if rng.random() < job.mine_share:
            mined = mine_image(_detector(), image, cls, boxes, job.size, pad=job.pad)
            if mined is not None:
                bg = np.flatnonzero(mined.y == BACKGROUND)
                drop = bg[rng.permutation(len(bg))[job.mined_background :]]
                keep = np.setdiff1d(np.arange(len(mined.y)), drop)
                xs.append(mined.x[keep])
                ys.append(mined.y[keep])
        if job.loc_dir and scene is not None:
            root = Path(job.loc_dir)
            stem = f"s{seed}"
            cv2.imwrite(
                str(root / "images" / job.loc_split / f"{stem}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 92]
            )
            lines = yolo_lines(scene.cards, w, h)
            (root / "labels" / job.loc_split / f"{stem}.txt").write_text("".join(x + "\n" for x in lines))
    if not xs:
        return np.zeros((0, 3, job.size, job.size), np.uint8), np.zeros(0, np.int64), len(job.seeds)
    return np.concatenate(xs), np.concatenate(ys), len(job.seeds)


def _localiser_tiles() -> FaceTileSettings:
    """The face tiles a ``gpu localisers --tiles`` run adds to its scenes: 640-px tiles of one to
    nine cards, their indices 14-90 px tall, a quarter of the cards jokers, and the negatives the
    scenes lack: bare surfaces (speckled, stone, plain, paper) under 40 % of them, printed text under
    30 %, and 15 % with no card face at all."""
    from models.facetiles import FaceTileSettings

    return FaceTileSettings(
        tile=640,
        index_px=(14.0, 90.0),
        cards=(1, 9),
        joker_share=0.25,
        text_share=0.3,
        bare_share=0.4,
        empty_share=0.15,
    )


@dataclass(frozen=True)
class TileJob:
    """A few face tiles for one worker, written as detection data: the decks they draw from (one
    art deck and one randomised deck, say), how many, and their seed."""

    seed: int
    designs: tuple[str, ...]
    n: int
    loc_dir: str
    loc_split: str = "train"


def tile_job(job: TileJob) -> int:
    """Write ``job.n`` face tiles (:func:`_localiser_tiles`) into ``job.loc_dir``; returns how many."""
    from models.facetiles import make_face_tiles

    return make_face_tiles(
        Path(job.loc_dir), job.loc_split, job.n, list(job.designs), job.seed, _localiser_tiles()
    )


def scene_seeds(run_seed: int, start: int, n: int) -> tuple[int, ...]:
    """Seeds of scenes ``start`` … ``start + n - 1`` of a run (disjoint from the documented datasets',
    which :func:`models.synth.dataset.image_seed` derives from three numbers)."""
    return tuple(
        int(np.random.SeedSequence([run_seed, 4_404_044, i]).generate_state(1)[0])
        for i in range(start, start + n)
    )
