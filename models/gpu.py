"""Train the reader's networks in one command on a lent GPU machine, with only what travels there.

A GPU machine is lent now and then for a few minutes: no package index, no ``rsvg-convert``, no
fonts, a working tree of at most 64 MiB. ``pack`` (run here) puts what the renderer needs beside the
repository: the training designs' face atlases (WebP inside the ``.png`` names the renderer reads;
never a held-out design), the outline fonts of the randomised decks up to a size, and the wheels
the machine's image lacks (ultralytics, pydantic, and typer for the command line itself,
:data:`WHEELS`). ``train`` (run there, or here with a tiny budget as a test) then, within one
wall-clock budget:

1. renders fresh training scenes on every core (:func:`models.synth.dataset.render_example`; half
   from the training art decks, half from the randomised decks whose fonts travelled), and cuts
   classifier crops from each: every labelled index jittered like a localiser's box, random
   background boxes, and on a share of scenes the shipped localiser's own boxes (hard examples,
   :func:`models.mining.mine_image`); the first scenes are also written as a detection dataset;
2. trains the localiser (ultralytics, one class, from the shipped ``best.pt``) on those scenes in a
   subprocess, while
3. the index classifier variants (:func:`models.classifier.build_net`) train on the GPU from the
   growing crop pool with the ``strong`` jitter done on the GPU, while the workers keep rendering;
4. writes each network's weights, a metrics file and the log into the output folder.

Nothing is chosen there: the weights come back and are evaluated here with the selection rule
(:mod:`models.selection`) before anything ships (``docs/gpu.md``).

    tractorcam gpu pack .gpu                                  # here
    python3 -m tractorcam_cli gpu train OUT --budget 510 --workers 15  # there: no install

The commands are :data:`models.cli.gpu_app`'s, run there through the project's entry point from the
tree (``python3 -m tractorcam_cli``).
"""

from __future__ import annotations

import functools
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
import types
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from models.classifier import CropSet, jitter_boxes, negative_boxes, uint8_crops
from vision.classifier import BACKGROUND, JOKER_IDS
from vision.crops import CROP_PAD, CROP_SIZE
from vision.heads import JOKER_HEAD_LABELS

if TYPE_CHECKING:
    from models.facetiles import FaceTileSettings

REPO = Path(__file__).resolve().parent.parent
WEIGHTS = REPO / "models" / "weights"
SHIPPED_WEIGHTS = REPO / "vision" / "weights"
#: Fonts larger than this stay behind (the working tree that travels is at most 64 MiB); the
#: randomised decks drawn in one of them are left out of the run's designs.
FONT_KB = 200
#: Share of scenes drawn from the training art decks (the rest from randomised decks).
ART_SHARE = 0.5


#: Wheels that travel, pure Python: ultralytics; pydantic (``calibration.table`` imports it) and its
#: requirements; typer (the command line) and its requirements (``pip show typer rich``).
WHEELS = (
    "ultralytics",
    "ultralytics-thop",
    "pydantic",
    "annotated-types",
    "typing-inspection",
    "typing-extensions",
    "typer",
    "annotated-doc",
    "shellingham",
    "rich",
    "markdown-it-py",
    "mdurl",
    "pygments",
)
#: Wheels that travel built for the GPU machine's Python (3.12, x86-64): pydantic's core.
BUILT_WHEELS = ("pydantic-core",)
#: The wheels only the localiser's training needs (``pack --no-localiser`` leaves them out).
LOCALISER_WHEELS = ("ultralytics", "ultralytics-thop")
#: WebP quality of the face atlases that travel: the tracked tree and ``.gpu`` together must stay
#: under the 64 MiB that travels (80: 7.5 MB for the 23 training decks; 92: 11.0 MB).
WEBP_QUALITY = 80


class GpuRunError(RuntimeError):
    """What a run needs is missing."""


# --------------------------------------------------------------------------- designs


def art_designs() -> tuple[str, ...]:
    """The training art decks (aisleriot, KDE) whose atlases are cached or can be made here."""
    from models.synth.designs import KDE_TRAIN, TRAIN
    from models.synth.faces import available_designs

    return tuple(d for d in available_designs(TRAIN + KDE_TRAIN) if not d.startswith("proc"))


def random_designs() -> tuple[str, ...]:
    """Procedural and randomised training decks whose fonts are on this machine.

    The held-out and selection variants (``proc5``, ``proc600`` …) are never among them.
    """
    from models.synth.designs import RANDOMISED, RANDOMISED_GLYPH, RANDOMISED_TTF, TRAIN

    out = [d.name for d in TRAIN if d.name.startswith("proc")]
    return tuple(out) + fonts_here(d.name for d in RANDOMISED + RANDOMISED_TTF + RANDOMISED_GLYPH)


def fonts_here(names: Iterable[str]) -> tuple[str, ...]:
    """The randomised decks (``procN``) among ``names`` whose outline fonts are on this machine."""
    from models.synth.randomised import random_variant

    out = []
    for name in names:
        v = random_variant(int(name[4:]))
        fonts = [f for f in (v.font, v.shape.font) if isinstance(f, str)]
        if all(Path(f).is_file() for f in fonts):
            out.append(name)
    return tuple(out)


# --------------------------------------------------------------------------- pack (here)


def pack(
    dest: Path,
    font_kb: int = FONT_KB,
    wheels: bool = True,
    webp_quality: int = WEBP_QUALITY,
    localiser: bool = True,
) -> dict[str, Any]:
    """Write the folder that travels with the repository to the GPU machine (``carry``): the face
    atlases as WebP of ``webp_quality``, the fonts up to ``font_kb``, and the wheels (without
    :data:`LOCALISER_WHEELS` unless ``localiser``)."""
    import cv2

    from models.synth.designs import BY_NAME, HELDOUT_NAMES, HELDOUT_VAL
    from models.synth.faces import _atlas_paths, cache_dir, load_faces
    from models.synth.fonts import FONT_FILES, SUIT_FONT_FILES

    faces = dest / "cache" / "faces"
    faces.mkdir(parents=True, exist_ok=True)
    kept = []
    barred = set(HELDOUT_NAMES) | {d.name for d in HELDOUT_VAL}
    for name in art_designs():
        if name in barred:  # never: art_designs draws from the training lists only
            raise GpuRunError(f"held-out design {name} in the training designs")
        load_faces(name)
        png, meta = _atlas_paths(BY_NAME[name])
        atlas = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
        if atlas is None:
            raise GpuRunError(f"could not read the atlas of {name}: {png}")
        ok, data = cv2.imencode(".webp", atlas, [cv2.IMWRITE_WEBP_QUALITY, webp_quality])
        if not ok:
            raise GpuRunError(f"could not encode the atlas of {name}")
        (faces / png.name).write_bytes(data.tobytes())  # cv2.imread reads it by content
        shutil.copy(meta, faces / meta.name)
        kept.append(name)
    fonts = []
    for f in sorted(set(FONT_FILES) | set(SUIT_FONT_FILES)):
        if Path(f).is_file() and Path(f).stat().st_size <= font_kb * 1000:
            target = dest / "fonts" / f.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, target)
            fonts.append(f)
    if wheels:
        from importlib.metadata import version

        wheel_dir = dest / "wheels"
        wheel_dir.mkdir(exist_ok=True)
        for pkg in WHEELS:
            if localiser or pkg not in LOCALISER_WHEELS:
                _download(wheel_dir, f"{pkg}=={version(pkg)}")
        for pkg in BUILT_WHEELS:
            _download(wheel_dir, f"{pkg}=={version(pkg)}", python="3.12")
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    summary = {"designs": kept, "fonts": len(fonts), "bytes": size, "cache_dir_here": str(cache_dir())}
    print(json.dumps(summary, indent=1))
    return summary


def _download(dest: Path, requirement: str, python: str = "") -> None:
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(dest)]
    if python:
        cmd += ["--python-version", python, "--implementation", "cp"]
        cmd += [
            f"--platform={p}"
            for p in ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
        ]
    subprocess.run([*cmd, requirement], check=True)


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


# --------------------------------------------------------------------------- crops made on the GPU

#: Face size in the bank (height, width): every deck's faces resized to it (cards are about 1.5 : 1).
BANK_FACE = (240, 160)
#: Randomised deck variants drawn for the bank only: far from every documented, selection and
#: held-out variant (proc0–proc5, proc100–proc639).
BANK_VARIANTS_FROM = 10_000


@dataclass(frozen=True)
class BankJob:
    """Decks whose faces a worker draws for the bank: art decks by name, randomised decks by variant."""

    names: tuple[str, ...] = ()
    variants: tuple[int, ...] = ()
    proposals: bool = True  # also find where the localiser proposes off the index (face_proposals)


def faceset_arrays(fs: Any) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """A face set as (54, 4, H, W) BGRA faces at :data:`BANK_FACE`, (54, 4) top-left index boxes
    normalised to the face, and which cards the deck shows face up."""
    import cv2

    from vision.labels import CARD_CLASSES

    h, w = BANK_FACE
    fw, fh = fs.size
    faces = np.zeros((54, 4, h, w), np.uint8)
    boxes = np.zeros((54, 4), np.float32)
    shown = set(fs.cards())
    valid = np.array([c in shown for c in CARD_CLASSES])
    for k, card in enumerate(CARD_CLASSES):
        face = fs.faces[card]
        if face.shape[2] == 3:
            face = np.dstack([face, np.full(face.shape[:2], 255, np.uint8)])
        faces[k] = cv2.resize(face, (w, h), interpolation=cv2.INTER_AREA).transpose(2, 0, 1)
        x1, y1, x2, y2 = fs.index_boxes(card)["tl"]
        boxes[k] = (x1 / fw, y1 / fh, x2 / fw, y2 / fh)
    return faces, boxes, valid


#: Background boxes the localiser proposes on one bank face, at most (the best scoring kept).
BANK_PROPOSALS = 6
#: Face height in the mosaic the localiser reads (pixels of a 640-px image): a card's size in a scene.
MOSAIC_FACE_H = 100


def face_proposals(
    faces: npt.NDArray[np.uint8],
    boxes: npt.NDArray[np.float32],
    detector: Any,
    k: int = BANK_PROPOSALS,
    face_h: int = MOSAIC_FACE_H,
    min_conf: float = 0.05,
) -> npt.NDArray[np.float32]:
    """Where the localiser proposes a box on each face that is on neither corner index: the hard
    background of a face (pips, court art, a lone suit sign). ``faces`` (N, 4, H, W) BGRA and their
    normalised top-left index ``boxes`` (N, 4); the faces are laid out as a mosaic on a grey table,
    ``detector`` (a :class:`vision.tiling.TiledDetector`) reads it, and each face keeps its ``k``
    best boxes scoring ≥ ``min_conf`` whose centre is on the face and off both indices, that hold
    neither index's centre and are at most 2.5 times an index's size (not a whole card). Returns (N, k, 4) boxes normalised
    to the face, NaN where a face has fewer."""
    import cv2

    n, _, h, w = faces.shape
    fh, fw = face_h, int(round(face_h * w / h))
    gap = 6
    cols = max(1, 640 // (fw + gap))
    rows = -(-n // cols)
    canvas = np.full((rows * (fh + gap) + gap, cols * (fw + gap) + gap, 3), 96, np.uint8)
    out = np.full((n, k, 4), np.nan, np.float32)
    origin = np.zeros((n, 2), np.float32)
    for i in range(n):
        r, c = divmod(i, cols)
        y0, x0 = gap + r * (fh + gap), gap + c * (fw + gap)
        face = cv2.resize(faces[i].transpose(1, 2, 0), (fw, fh), interpolation=cv2.INTER_AREA)
        a = face[:, :, 3:].astype(np.float32) / 255.0
        region = canvas[y0 : y0 + fh, x0 : x0 + fw]
        canvas[y0 : y0 + fh, x0 : x0 + fw] = (face[:, :, :3] * a + region * (1 - a)).astype(np.uint8)
        origin[i] = (x0, y0)
    det = detector.detect(canvas).with_nms(0.5, class_agnostic=True)
    det = det[det.confidence >= min_conf]
    if len(det) == 0:
        return out
    order = np.argsort(-det.confidence)
    xyxy = det.xyxy[order]
    cx, cy = (xyxy[:, 0] + xyxy[:, 2]) / 2, (xyxy[:, 1] + xyxy[:, 3]) / 2
    filled = np.zeros(n, np.int64)
    for j in range(len(xyxy)):
        c, r = int((cx[j] - gap / 2) // (fw + gap)), int((cy[j] - gap / 2) // (fh + gap))
        i = r * cols + c
        if not (0 <= c < cols and 0 <= i < n) or filled[i] >= k:
            continue
        x0, y0 = origin[i]
        u = (xyxy[j] - [x0, y0, x0, y0]) / np.array([fw, fh, fw, fh], np.float32)
        mx, my = (u[0] + u[2]) / 2, (u[1] + u[3]) / 2
        if not (0 < mx < 1 and 0 < my < 1):
            continue
        tl = boxes[i]
        br = 1 - tl[[2, 3, 0, 1]]
        grow = (
            0.5
            * np.array([-1, -1, 1, 1], np.float32)
            * np.array([tl[2] - tl[0], tl[3] - tl[1]] * 2, np.float32)
        )
        on_index = any(
            b[0] + grow[0] <= mx <= b[2] + grow[2] and b[1] + grow[1] <= my <= b[3] + grow[3]
            for b in (tl, br)
        )
        holds_index = any(
            u[0] <= (b[0] + b[2]) / 2 <= u[2] and u[1] <= (b[1] + b[3]) / 2 <= u[3] for b in (tl, br)
        )
        too_big = u[2] - u[0] > 2.5 * (tl[2] - tl[0]) or u[3] - u[1] > 2.5 * (tl[3] - tl[1])
        if on_index or holds_index or too_big:  # a box on an index, or a whole card: not background
            continue
        out[i, filled[i]] = np.clip(u, 0, 1)
        filled[i] += 1
    return out


def bank_job(
    job: BankJob,
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.float32]]:
    """The faces, index boxes, face-up cards and localiser proposals off the index
    (:func:`face_proposals`, unless ``job.proposals`` is False: all NaN) of a few decks, stacked
    (decks × 54 first)."""
    from models.synth.designs import procedural_design
    from models.synth.faces import build_faces, load_faces

    parts = [faceset_arrays(load_faces(n)) for n in job.names]
    for v in job.variants:
        try:
            parts.append(faceset_arrays(build_faces(procedural_design(v))))
        except RuntimeError:  # a deck whose corner index the renderer cannot locate: left out
            continue
    if not parts:
        h, w = BANK_FACE
        return (
            np.zeros((0, 4, h, w), np.uint8),
            np.zeros((0, 4), np.float32),
            np.zeros(0, bool),
            np.zeros((0, BANK_PROPOSALS, 4), np.float32),
        )
    faces, boxes, valid = (np.concatenate([p[i] for p in parts]) for i in range(3))
    if job.proposals:
        props = np.concatenate(
            [
                face_proposals(faces[i : i + 54], boxes[i : i + 54], _detector())
                for i in range(0, len(faces), 54)
            ]
        )
    else:
        props = np.full((len(faces), BANK_PROPOSALS, 4), np.nan, np.float32)
    return faces, boxes, valid, props


class FaceBank:
    """Every face of the run's decks on the device, and crops cut from them like a scene's crops of
    corner indices: each face turned to any angle, its index box jittered like a localiser's, the
    square crop around it (:data:`vision.classifier.CROP_PAD`) over a random table, sometimes half
    covered by a neighbouring card as in a fan; a share of crops lie on the face away from the index
    (pips, court art) and are background."""

    def __init__(
        self, faces: Any, boxes: Any, valid: Any, device: Any, art: int = 0, proposals: Any = None
    ) -> None:
        """``art``: the first ``art`` faces are the art decks' (``crops(art_share=)`` weights them).
        ``proposals`` (F, K, 4, NaN-padded; :func:`face_proposals`): where the localiser proposes on
        each face off its index; background crops are cut there where a face has any."""
        import torch

        self.faces = torch.as_tensor(faces).to(device)  # (F, 4, H, W) uint8
        self.boxes = torch.as_tensor(boxes).to(device)  # (F, 4) normalised tl boxes
        if proposals is None:
            proposals = np.full((len(valid), BANK_PROPOSALS, 4), np.nan, np.float32)
        self.proposals = torch.as_tensor(np.asarray(proposals, np.float32)).to(device)
        self.n_proposals = (~self.proposals[:, :, 0].isnan()).sum(1)  # (F,)
        self.ids = torch.arange(len(valid), device=device)[torch.as_tensor(valid).to(device)]
        self.art_ids = self.ids[self.ids < art]
        self.rand_ids = self.ids[self.ids >= art]
        self.art = art
        joker = self.ids % 54 >= 52
        self.art_jokers = self.ids[joker & (self.ids < art)]
        self.rand_jokers = self.ids[joker & (self.ids >= art)]
        self.device = device

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def _cut(self, idx: Any, centre: Any, side: Any, angle: Any, size: int) -> Any:
        """Crops (N, 4, size, size) float of faces ``idx``: squares of ``side`` (face heights) about
        ``centre`` (normalised x, y), turned by ``angle``; outside the face alpha is 0."""
        import torch
        import torch.nn.functional as F

        _, _, h, w = self.faces.shape
        cos, sin = torch.cos(angle), torch.sin(angle)
        sx, sy = 2 * side * h / w, 2 * side  # the half side (face heights) in grid units (2 per face side)
        theta = torch.stack(
            [
                torch.stack([sx * cos, -sx * sin, 2 * centre[:, 0] - 1], 1),
                torch.stack([sy * sin, sy * cos, 2 * centre[:, 1] - 1], 1),
            ],
            1,
        )
        grid = F.affine_grid(theta, [len(idx), 4, size, size], align_corners=False)
        return F.grid_sample(self.faces[idx].float() / 255.0, grid, mode="bilinear", align_corners=False)

    def crops(
        self,
        n: int,
        gen: Any,
        size: int = CROP_SIZE,
        background_share: float = 0.12,
        art_share: float | None = None,
        joker_share: float = 0.0,
        pad: float = CROP_PAD,
    ) -> tuple[Any, Any]:
        """``n`` crops as uint8 (n, 3, size, size) and their classes; ``art_share`` of them from the
        art decks' faces when given (else every face alike), and ``joker_share`` of them from the
        jokers of the same decks (every deck's jokers, whatever their style); ``pad``: the window
        around the box, as :func:`~vision.crops.crop_boxes` takes it."""
        import torch
        import torch.nn.functional as F

        dev = self.device

        def u(lo: float, hi: float, *shape: int) -> Any:
            return torch.rand(*shape, generator=gen, device=dev) * (hi - lo) + lo

        if art_share is not None and len(self.art_ids) and len(self.rand_ids):
            from_art = torch.rand(n, generator=gen, device=dev) < art_share
            pick_art = self.art_ids[torch.randint(0, len(self.art_ids), (n,), generator=gen, device=dev)]
            pick_rand = self.rand_ids[torch.randint(0, len(self.rand_ids), (n,), generator=gen, device=dev)]
            idx = torch.where(from_art, pick_art, pick_rand)
        else:
            idx = self.ids[torch.randint(0, len(self), (n,), generator=gen, device=dev)]
        if joker_share > 0 and len(self.art_jokers) + len(self.rand_jokers):
            from_art = idx < self.art  # a joker of the same kind of deck as the face it replaces
            art_j = self.art_jokers if len(self.art_jokers) else self.rand_jokers
            rand_j = self.rand_jokers if len(self.rand_jokers) else self.art_jokers
            pick = torch.where(
                from_art,
                art_j[torch.randint(0, len(art_j), (n,), generator=gen, device=dev)],
                rand_j[torch.randint(0, len(rand_j), (n,), generator=gen, device=dev)],
            )
            idx = torch.where(torch.rand(n, generator=gen, device=dev) < joker_share, pick, idx)
        box = self.boxes[idx].clone()
        _, _, h, w = self.faces.shape
        turn = torch.rand(n, generator=gen, device=dev) < 0.5  # the bottom-right index: the face turned 180°
        box[turn] = 1 - box[turn][:, [2, 3, 0, 1]]
        bw, bh = (box[:, 2] - box[:, 0]) * w / h, box[:, 3] - box[:, 1]  # in face heights
        angle = u(-np.pi, np.pi, n)
        ext = torch.maximum(
            bw * angle.cos().abs() + bh * angle.sin().abs(), bw * angle.sin().abs() + bh * angle.cos().abs()
        )
        side = ext * (0.5 + pad) * u(0.87, 1.15, n)  # half the crop's side, like crop_boxes
        centre = torch.stack([(box[:, 0] + box[:, 2]) / 2, (box[:, 1] + box[:, 3]) / 2], 1)
        centre = centre + u(-0.12, 0.12, n, 2) * torch.stack([bw * h / w, bh], 1)
        label = (idx % 54).long()
        bg = torch.rand(n, generator=gen, device=dev) < background_share
        if bool(bg.any()):  # a point of the face's middle: pips, court art, no index
            centre[bg] = torch.stack([u(0.3, 0.7, int(bg.sum())), u(0.28, 0.72, int(bg.sum()))], 1)
            label[bg] = BACKGROUND
            # where the localiser proposes off the index: that box, jittered like a localiser's
            has = bg & (self.n_proposals[idx] > 0)
            m = int(has.sum())
            if m:
                count = self.n_proposals[idx[has]]
                pick = (torch.rand(m, generator=gen, device=dev) * count).long().clamp(max=count - 1)
                pb = self.proposals[idx[has], pick]  # (m, 4) normalised to the face
                pw, ph = (pb[:, 2] - pb[:, 0]) * w / h, pb[:, 3] - pb[:, 1]
                a = angle[has]
                pext = torch.maximum(
                    pw * a.cos().abs() + ph * a.sin().abs(), pw * a.sin().abs() + ph * a.cos().abs()
                )
                side[has] = pext * (0.5 + pad) * u(0.87, 1.15, m)
                jitter = u(-0.12, 0.12, m, 2) * torch.stack([pw * h / w, ph], 1)
                centre[has] = torch.stack([(pb[:, 0] + pb[:, 2]) / 2, (pb[:, 1] + pb[:, 3]) / 2], 1) + jitter
        crop = self._cut(idx, centre, side, angle + torch.where(turn, np.pi, 0.0), size)
        # a table under the card: a colour with low-frequency shading
        table = u(0.05, 0.8, n, 3, 1, 1) * (
            1 + 0.25 * F.interpolate(u(-1, 1, n, 1, 3, 3), size=(size, size), mode="bilinear")
        )
        out = crop[:, :3] * crop[:, 3:] + table * (1 - crop[:, 3:])
        # a neighbour in a fan: another face over a half-plane that leaves the index's centre free
        cover = torch.rand(n, generator=gen, device=dev) < 0.3
        k = int(cover.sum())
        if k:
            other = self.ids[torch.randint(0, len(self), (k,), generator=gen, device=dev)]
            over = self._cut(
                other, u(0.2, 0.8, k, 2), side[cover] * u(0.8, 1.5, k), u(-np.pi, np.pi, k), size
            )
            yy, xx = torch.meshgrid(
                torch.linspace(-1, 1, size, device=dev),
                torch.linspace(-1, 1, size, device=dev),
                indexing="ij",
            )
            phi = u(-np.pi, np.pi, k)
            dist = xx[None] * phi.cos()[:, None, None] + yy[None] * phi.sin()[:, None, None]
            mask = ((dist - u(0.45, 0.95, k)[:, None, None]) * 12).sigmoid()[:, None] * over[:, 3:]
            shade = 1 - 0.35 * ((dist - u(0.3, 0.8, k)[:, None, None]) * 6).sigmoid()[:, None] * (1 - mask)
            out[cover] = (over[:, :3] * mask + out[cover] * (1 - mask)) * shade
        return (out.clamp(0, 1) * 255 + 0.5).to(torch.uint8), label


# --------------------------------------------------------------------------- classifier (GPU)


def augment_torch(x: Any, gen: Any) -> Any:
    """The ``strong`` jitter of :func:`models.classifier.augment`, on the device: uint8 (N, 3, S, S)
    → float in [0, 1] (brightness and offset, colour cast, 15 % grey, 30 % lost resolution, noise)."""
    import torch
    import torch.nn.functional as F

    n, dev = x.shape[0], x.device

    def u(lo: float, hi: float, *shape: int) -> Any:
        return torch.rand(*shape, generator=gen, device=dev) * (hi - lo) + lo

    out = x.float() / 255.0
    out = out * u(0.7, 1.3, n, 1, 1, 1) + u(-0.12, 0.12, n, 1, 1, 1)
    out = out * u(0.85, 1.15, n, 3, 1, 1)
    grey = torch.rand(n, generator=gen, device=dev) < 0.15
    out = torch.where(grey[:, None, None, None], out.mean(1, keepdim=True).expand_as(out), out)
    low = torch.rand(n, generator=gen, device=dev) < 0.3
    if bool(low.any()):
        size = out.shape[-1]
        small = max(4, round(size * float(u(0.45, 0.9, 1))))
        sub = F.interpolate(
            F.interpolate(out[low], size=(small, small), mode="area"), size=(size, size), mode="bilinear"
        )
        out[low] = sub
    out = out + torch.randn(out.shape, generator=gen, device=dev) * u(0.0, 0.04, n, 1, 1, 1)
    return out.clamp(0, 1)


@dataclass
class Variant:
    """One classifier trained in the run."""

    name: str
    width: float
    lr: float
    init: str = ""  # a state dict to start from ("" = from scratch)
    net: Any = field(default=None, repr=False)
    opt: Any = field(default=None, repr=False)
    steps: int = 0
    loss: float = 0.0


def _lr(frac: float, peak: float) -> float:
    """Warm-up over the first 5 % of the time, then a cosine down to 2 % of ``peak``."""
    if frac < 0.05:
        return peak * max(frac / 0.05, 0.02)
    t = min(1.0, (frac - 0.05) / 0.95)
    return peak * (0.02 + 0.98 * 0.5 * (1 + float(np.cos(np.pi * t))))


class CropPool:
    """The crops rendered so far, on the device, grown as workers deliver."""

    def __init__(self, device: Any) -> None:
        self.device = device
        self.pending: list[tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]] = []
        self.x: Any = None
        self.y: Any = None

    def add(self, x: npt.NDArray[np.uint8], y: npt.NDArray[np.int64]) -> None:
        if len(y):
            self.pending.append((x, y))

    def flush(self) -> None:
        import torch

        if not self.pending:
            return
        x = torch.from_numpy(np.concatenate([p[0] for p in self.pending])).to(self.device)
        y = torch.from_numpy(np.concatenate([p[1] for p in self.pending])).to(self.device)
        self.pending.clear()
        self.x = x if self.x is None else torch.cat([self.x, x])
        self.y = y if self.y is None else torch.cat([self.y, y])

    def __len__(self) -> int:
        return 0 if self.y is None else int(self.y.shape[0])


def build_variants(specs: list[str], device: Any, classes: int = 55, size: int = CROP_SIZE) -> list[Variant]:
    """``NAME:WIDTH:LR[:init]`` specs → variants with their nets (``classes`` outputs, ``size`` px
    crops) and optimisers (``init`` takes the shipped ``classifier.pt``, or a state dict's path;
    its shape must match)."""
    import torch

    from models.classifier import build_net

    out: list[Variant] = []
    for spec in specs:
        parts = spec.split(":")
        if len(parts) not in (3, 4):
            raise GpuRunError(f"variant {spec!r}: NAME:WIDTH:LR[:init]")
        v = Variant(parts[0], float(parts[1]), float(parts[2]), parts[3] if len(parts) == 4 else "")
        torch.manual_seed(len(out))
        v.net = build_net(classes, size, width=v.width)
        if v.init:
            path = WEIGHTS / "classifier.pt" if v.init == "init" else Path(v.init)
            v.net.load_state_dict(torch.load(path, map_location="cpu"))
        v.net = v.net.to(device).to(memory_format=torch.channels_last)
        v.opt = torch.optim.AdamW(v.net.parameters(), lr=v.lr, weight_decay=5e-4)
        out.append(v)
    return out


def accuracy_on(
    net: Any, data: CropSet, device: Any, batch: int = 4096, labels: npt.NDArray[np.int64] | None = None
) -> float:
    """Top-1 of ``net`` on ``data`` (its classes through ``labels`` when given: the joker head's)."""
    import torch

    net.eval()
    right = 0
    y = data.y if labels is None else labels[data.y]
    with torch.no_grad():
        for i in range(0, len(data.y), batch):
            x = torch.from_numpy(data.x[i : i + batch]).to(device).float() / 255.0
            right += int((net(x).argmax(1).cpu().numpy() == y[i : i + batch]).sum())
    net.train()
    return right / max(1, len(data.y))


def train_classifiers(
    variants: list[Variant],
    pool: CropPool,
    poll: Callable[[], None],
    start: float,
    end: float,
    device: Any,
    batch: int,
    log: Callable[[str], None],
    checkpoint: Callable[[], None] = lambda: None,
    bank: Callable[[], FaceBank | None] = lambda: None,
    bank_share: float = 0.0,
    bank_art_share: float | None = None,
    bank_background: float = 0.12,
    bank_joker_share: float = 0.0,
    pad: float = CROP_PAD,
    labels: npt.NDArray[np.int64] | None = None,
) -> None:
    """Train every variant on batches drawn from ``pool`` until ``end`` (``time.time()``), calling
    ``poll`` now and then to take in new crops and ``checkpoint`` to save; the learning rate follows
    the time left. Once ``bank`` gives a :class:`FaceBank`, ``bank_share`` of each batch is cut from
    it on the device (with the window ``pad``). ``labels`` maps the 55 classes to the nets' own
    (the joker head's: :data:`vision.heads.JOKER_HEAD_LABELS`)."""
    import contextlib

    import torch

    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    gen = torch.Generator(device=device)
    gen.manual_seed(0)
    cuda = torch.device(device).type == "cuda"
    autocast = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if cuda else contextlib.nullcontext
    last_poll = last_log = last_save = time.time()
    to_net = None if labels is None else torch.as_tensor(labels).to(device)
    for v in variants:
        v.net.train()
    while time.time() < end:
        now = time.time()
        if now - last_poll > 5:
            poll()
            pool.flush()
            last_poll = now
        n = len(pool)
        frac = (now - start) / max(1e-6, end - start)
        faces = bank() if bank_share > 0 else None
        made = int(round(batch * bank_share)) if faces is not None and len(faces) else 0
        for v in variants:
            idx = torch.randint(0, n, (batch - made,), generator=gen, device=device)
            xb, yb = pool.x[idx], pool.y[idx]
            if made:
                xs, ys = faces.crops(  # type: ignore[union-attr]
                    made,
                    gen,
                    size=int(xb.shape[-1]),
                    background_share=bank_background,
                    art_share=bank_art_share,
                    joker_share=bank_joker_share,
                    pad=pad,
                )
                xb, yb = torch.cat([xb, xs]), torch.cat([yb, ys])
            if to_net is not None:
                yb = to_net[yb]
            x = augment_torch(xb, gen).contiguous(memory_format=torch.channels_last)
            for g in v.opt.param_groups:
                g["lr"] = _lr(frac, v.lr)
            with autocast():
                loss = loss_fn(v.net(x), yb)
            v.opt.zero_grad(set_to_none=True)
            loss.backward()
            v.opt.step()
            v.steps += 1
            if v.steps % 50 == 0:
                v.loss = float(loss.item())
        if now - last_save > 90:  # a run cut short still leaves weights
            checkpoint()
            last_save = now
        if now - last_log > 20:
            log(
                f"[{now - start:5.0f}s] pool {n} crops; "
                + "; ".join(f"{v.name} step {v.steps} loss {v.loss:.3f}" for v in variants)
            )
            last_log = now


# --------------------------------------------------------------------------- localiser (subprocess)


def _stub_polars() -> None:
    """ultralytics reads its results CSV with polars inside a ``try``; without polars (not on the
    GPU machine) that read fails first, so stand in a module whose ``read_csv`` raises."""
    try:
        import polars  # noqa: F401
    except ImportError:
        stub = types.ModuleType("polars")

        def read_csv(*_a: object, **_k: object) -> None:
            raise RuntimeError("polars is not installed")

        stub.read_csv = read_csv  # type: ignore[attr-defined]
        sys.modules["polars"] = stub


#: Localiser architectures by name (``gpu localisers --variant NAME:ARCH:LR``): YOLO11 at these
#: (depth, width) scales, built from the shipped architecture file with one class; ``shipped``
#: starts from the shipped ``best.pt`` instead.
LOC_SCALES = {"p": (0.50, 0.125), "n": (0.50, 0.25), "s": (0.50, 0.50)}


def localiser_model(arch: str, folder: Path) -> str:
    """What ultralytics builds the localiser from: the shipped weights (``shipped``), or a
    ``yolo11<letter>-cards.yaml`` written into ``folder`` at a scale of :data:`LOC_SCALES` (the
    letter in the file name picks the scale, as ultralytics reads it)."""
    if arch == "shipped":
        return str(WEIGHTS / "best.pt")
    if arch not in LOC_SCALES:
        raise GpuRunError(f"localiser architecture {arch!r}: shipped or one of {sorted(LOC_SCALES)}")
    depth, width = LOC_SCALES[arch]
    text = (WEIGHTS / "yolo11p-cards.yaml").read_text()
    text = text.replace("p: [0.50, 0.125, 1024]", f"{arch}: [{depth:.2f}, {width}, 1024]")
    if f"{arch}: [" not in text:
        raise GpuRunError("the shipped architecture file no longer holds the pico scale line")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"yolo11{arch}-cards.yaml"
    path.write_text(text)
    return str(path)


def train_localiser(
    data_dir: Path,
    project: Path,
    minutes: float,
    device: str,
    batch: int,
    workers: int,
    arch: str = "shipped",
    lr0: float = 0.001,
    name: str = "loc",
    cache: str | bool = False,
) -> Path:
    """Train the one-class localiser on ``data_dir`` for ``minutes`` (ultralytics ``time``), from
    the shipped weights or from scratch at a scale (:func:`localiser_model`); returns the run's
    ``last.pt``."""
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ["YOLO_AUTOINSTALL"] = "False"
    _stub_polars()
    from ultralytics.models import YOLO

    from models.synth.dataset import write_data_yaml
    from models.train import TrainConfig

    yaml = write_data_yaml(data_dir)
    model = localiser_model(arch, project / f"{name}_arch")
    config = TrainConfig(
        data=yaml,
        model=model,
        imgsz=640,
        epochs=100,
        batch=batch,
        workers=workers,
        project=project,
        name=name,
        cache=cache,
        single_cls=True,
        scale=0.5,
        lr0=lr0,
        warmup_epochs=0.5 if arch == "shipped" else 1.0,
    )
    kw = config.train_kwargs()
    kw.update(device=device, amp=False, time=minutes / 60, val=False, save_period=-1, deterministic=False)
    YOLO(config.model, task="detect").train(**kw)
    return project / name / "weights" / "last.pt"


def _run_log(out: Path, t0: float | None = None) -> Callable[[str], None]:
    """A run's log: each line printed and appended to ``out/log.txt``, stamped with the clock (and
    the seconds since ``t0`` when given)."""
    logf = (out / "log.txt").open("a")

    def log(msg: str) -> None:
        since = "" if t0 is None else f" [{time.time() - t0:5.0f}s]"
        line = f"{time.strftime('%H:%M:%S')}{since} {msg}"
        print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()

    return log


def _start_localiser(
    data: Path, project: str, minutes: float, device: str, batch: int, workers: int, log: Path, *extra: str
) -> subprocess.Popen[bytes]:
    """The ``gpu localiser`` subprocess (:func:`train_localiser`), its output in ``log``."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tractorcam_cli",
            "gpu",
            "localiser",
            str(data),
            project,
            "--minutes",
            f"{minutes:.3f}",
            "--device",
            device,
            "--batch",
            str(batch),
            "--workers",
            str(workers),
            *extra,
        ],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        cwd=REPO,
    )


def _finish_localiser(
    proc: subprocess.Popen[bytes], deadline: float, weights: Path, dest: Path
) -> str | None:
    """Wait for a localiser until ``deadline`` (then interrupt it, then kill it), and copy its
    ``last.pt`` (else ``best.pt``) from ``weights`` to ``dest``; the name copied, or None."""
    try:
        proc.wait(timeout=max(1.0, deadline - time.time()))
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
    found = [p for p in (weights / "last.pt", weights / "best.pt") if p.is_file()]
    if found:
        shutil.copy(found[0], dest)
    return found[0].name if found else None


@dataclass(frozen=True)
class LocVariant:
    """One localiser of a ``gpu localisers`` run: ``NAME:ARCH:LR``."""

    name: str
    arch: str
    lr: float

    @classmethod
    def parse(cls, spec: str) -> LocVariant:
        """``NAME:ARCH:LR``, ARCH ``shipped`` or a scale of :data:`LOC_SCALES`.

        >>> LocVariant.parse("n:n:0.002")
        LocVariant(name='n', arch='n', lr=0.002)
        """
        parts = spec.split(":")
        if len(parts) != 3 or not parts[0].isidentifier():
            raise GpuRunError(f"localiser variant {spec!r}: NAME:ARCH:LR")
        if parts[1] != "shipped" and parts[1] not in LOC_SCALES:
            raise GpuRunError(f"localiser variant {spec!r}: ARCH is shipped or one of {sorted(LOC_SCALES)}")
        try:
            lr = float(parts[2])
        except ValueError:
            raise GpuRunError(f"localiser variant {spec!r}: LR is a number") from None
        return cls(parts[0], parts[1], lr)


def run_localisers(args: types.SimpleNamespace) -> dict[str, Any]:
    """``gpu localisers``: every core renders detection scenes first (``args.render`` seconds; a share
    ``args.tiles`` of the jobs make face tiles instead, :func:`tile_job`), then
    each localiser variant trains on them in its own ultralytics subprocess with an equal share of
    the cores, until the budget's end less ``args.tail``. Writes ``loc_<name>.pt``,
    ``localiser_<name>.txt``, ``metrics.json`` and ``log.txt`` into ``args.out``."""
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    end = t0 + args.budget
    log = _run_log(out, t0)
    variants = [LocVariant.parse(v) for v in args.variant]
    if not variants:
        raise GpuRunError("no localiser variant given (--variant NAME:ARCH:LR)")
    art, rand = art_designs(), random_designs()
    if not art:
        raise GpuRunError("no training art deck here: run `tractorcam gpu pack` and set TRACTORCAM_CACHE")
    data = Path(args.loc_data)
    for split in ("train", "val"):
        for k in ("images", "labels"):
            (data / k / split).mkdir(parents=True, exist_ok=True)
    log(f"{len(art)} art decks, {len(rand)} random decks; {args.workers} workers render for {args.render}s")
    # 1. every core renders scenes (no classifier crops: a scene is only an image and its labels)
    scenes = tiles = 0
    next_scene = 0
    tiles_rng = np.random.default_rng([args.seed, 640])
    stop = t0 + args.render
    with ProcessPoolExecutor(
        args.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init
    ) as ex:
        futures: set[Future[Any]] = set()
        while time.time() < stop or futures:
            while time.time() < stop and len(futures) < args.workers * 2:
                split = "val" if next_scene % (50 * args.chunk) == 0 else "train"
                seeds = scene_seeds(args.seed, next_scene, args.chunk)
                next_scene += args.chunk
                if tiles_rng.random() < args.tiles:
                    decks: tuple[str, ...] = (art[int(tiles_rng.integers(len(art)))],)
                    if rand:
                        decks += (rand[int(tiles_rng.integers(len(rand)))],)
                    tile = TileJob(seeds[0], decks, args.chunk, str(data), split)
                    futures.add(ex.submit(tile_job, tile))
                    continue
                job = RenderJob(
                    seeds,
                    art,
                    rand,
                    jitter=0,
                    negatives=0,
                    mine_share=0.0,
                    loc_dir=str(data),
                    loc_split=split,
                    art_share=args.art_share,
                )
                futures.add(ex.submit(render_job, job))
            done, futures = wait(futures, timeout=1.0, return_when=FIRST_COMPLETED)
            for f in done:
                made = f.result()
                if isinstance(made, int):
                    tiles += made
                else:
                    scenes += made[2]
    n_train = len(list((data / "images" / "train").glob("*.jpg")))
    n_val = len(list((data / "images" / "val").glob("*.jpg")))
    log(f"{scenes} scenes and {tiles} face tiles rendered ({n_train} train, {n_val} val)")
    # 2. the variants train side by side, each with its share of the cores
    minutes = max(0.5, (end - args.tail - time.time()) / 60)
    workers = max(1, args.workers // len(variants))
    procs: dict[str, subprocess.Popen[bytes]] = {}
    for v in variants:
        log(f"localiser {v.name} ({v.arch}, lr {v.lr}) trains for {minutes:.2f} min, {workers} loaders")
        procs[v.name] = _start_localiser(
            data,
            str(args.loc_project),
            minutes,
            args.device,
            args.batch,
            workers,
            out / f"localiser_{v.name}.txt",
            *("--arch", v.arch, "--lr", str(v.lr), "--name", v.name, "--cache", args.cache),
        )
    metrics: dict[str, Any] = {
        "budget_s": args.budget,
        "scenes": scenes,
        "face_tiles": tiles,
        "train_scenes": n_train,
        "val_scenes": n_val,
        "variants": {},
        "args": {k: str(v) for k, v in vars(args).items()},
    }
    # 3. wait, stop what overruns, keep each one's weights
    for v in variants:
        proc = procs[v.name]
        kept = _finish_localiser(
            proc, end - 8, Path(args.loc_project) / v.name / "weights", out / f"loc_{v.name}.pt"
        )
        metrics["variants"][v.name] = {
            "arch": v.arch,
            "lr": v.lr,
            "rc": proc.returncode,
            "weights": kept,
        }
        log(f"localiser {v.name}: rc {proc.returncode}, weights {kept}")
    metrics["wall_s"] = round(time.time() - t0, 1)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1))
    log(json.dumps({k: v for k, v in metrics.items() if k != "args"}))
    return metrics


# --------------------------------------------------------------------------- the run


def run(args: types.SimpleNamespace) -> dict[str, Any]:
    """The whole run (``gpu train``); ``args`` holds that command's options by name."""
    import torch

    head = trained_head(args.head)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    end = t0 + args.budget
    log = _run_log(out)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    art, rand = art_designs(), random_designs()
    if not art:
        raise GpuRunError("no training art deck here: run `tractorcam gpu pack` and set TRACTORCAM_CACHE")
    log(
        f"device {device} ({torch.cuda.get_device_name(0) if device == 'cuda' else 'cpu'}); "
        f"{len(art)} art decks, {len(rand)} random decks; budget {args.budget}s, {args.workers} workers"
    )
    loc_dir = Path(args.loc_data)
    for split in ("train", "val"):
        for k in ("images", "labels"):
            (loc_dir / k / split).mkdir(parents=True, exist_ok=True)

    from models.synth.designs import HELDOUT_VAL_PROC

    labels, pad, size = head.labels, head.pad, head.size
    # selection crops: unseen random decks (the selection split's designs, never the test's)
    val_seeds = scene_seeds(args.seed + 1, 0, args.val_scenes)
    val_jobs = [
        RenderJob(
            val_seeds[i::4],
            fonts_here(d.name for d in HELDOUT_VAL_PROC),
            (),
            jitter=1,
            negatives=1,
            mine_share=0.0,
            pad=pad,
            size=size,
        )
        for i in range(4)
    ]
    pool = CropPool(device)
    stats = {"scenes": 0, "loc_scenes": 0, "crops": 0}
    ex = ProcessPoolExecutor(
        args.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init
    )
    futures: set[Future[Any]] = set()
    val_futures = [ex.submit(render_job, job) for job in val_jobs]
    bank_futures: list[Future[Any]] = []
    if args.bank_share > 0:
        bank_variants = [
            int(n[4:])
            for n in fonts_here(
                f"proc{v}" for v in range(BANK_VARIANTS_FROM, BANK_VARIANTS_FROM + args.bank_decks)
            )
        ]
        proposals = args.bank_proposals
        bank_futures.append(ex.submit(bank_job, BankJob(names=art, proposals=proposals)))
        bank_futures += [
            ex.submit(bank_job, BankJob(variants=tuple(bank_variants[i : i + 8]), proposals=proposals))
            for i in range(0, len(bank_variants), 8)
        ]
    face_bank: list[FaceBank] = []

    def current_bank() -> FaceBank | None:
        """The bank once every deck is drawn (built on the device once)."""
        if not face_bank and bank_futures and all(f.done() for f in bank_futures):
            parts = [f.result() for f in bank_futures]
            faces = np.concatenate([p[0] for p in parts])
            props = np.concatenate([p[3] for p in parts])
            face_bank.append(
                FaceBank(
                    faces,
                    np.concatenate([p[1] for p in parts]),
                    np.concatenate([p[2] for p in parts]),
                    device,
                    art=len(parts[0][0]),  # the art decks' job comes first
                    proposals=props,
                )
            )
            stats["bank_faces_proposed"] = int((~np.isnan(props[:, 0, 0])).sum())
            log(
                f"[{time.time() - t0:5.0f}s] face bank: {len(faces) // 54} decks, {len(face_bank[0])} faces,"
                f" {stats['bank_faces_proposed']} with localiser proposals off the index"
            )
        return face_bank[0] if face_bank else None

    next_scene = 0
    loc_until = t0 + args.loc_render
    loc_proc: subprocess.Popen[bytes] | None = None

    def submit() -> None:
        nonlocal next_scene
        limit = args.workers * 2 if loc_proc is None else max(2, args.workers - args.loc_workers)
        while len(futures) < limit and time.time() < end - 30:
            to_loc = time.time() < loc_until and args.localiser
            split = "val" if to_loc and next_scene % 50 == 0 else "train"
            job = RenderJob(
                scene_seeds(args.seed, next_scene, args.chunk),
                art,
                rand,
                loc_dir=str(loc_dir) if to_loc else "",
                loc_split=split,
                mine_share=args.mine_share,
                mined_background=args.mined_background,
                art_share=args.art_share,
                tile_share=args.tile_share,
                pad=pad,
                size=size,
            )
            next_scene += args.chunk
            futures.add(ex.submit(render_job, job))

    def poll(block: float = 0.0) -> None:
        done, _ = wait(futures, timeout=block, return_when=FIRST_COMPLETED) if futures else (set(), None)
        for f in done:
            futures.discard(f)
            x, y, n = f.result()
            pool.add(x, y)
            stats["scenes"] += n
            stats["crops"] += len(y)
        submit()

    submit()
    # 1. the first scenes: enough crops to start on, the localiser's data
    while time.time() < t0 + args.warmup or not pool.pending:
        poll(1.0)
    pool.flush()
    log(f"[{time.time() - t0:5.0f}s] {stats['scenes']} scenes, {len(pool)} crops; classifiers start")
    variants = build_variants(args.variant, device, head.classes, size)
    val_parts = [f.result() for f in val_futures]
    val = CropSet(np.concatenate([p[0] for p in val_parts]), np.concatenate([p[1] for p in val_parts]))

    def poll_and_launch() -> None:
        nonlocal loc_proc
        poll()
        if loc_proc is None and args.localiser and time.time() >= loc_until:
            stats["loc_scenes"] = len(list((loc_dir / "images" / "train").glob("*.jpg")))
            minutes = max(0.5, (end - time.time() - args.loc_tail) / 60)
            log(
                f"[{time.time() - t0:5.0f}s] localiser starts on {stats['loc_scenes']} scenes for {minutes:.1f} min"
            )
            loc_proc = _start_localiser(
                loc_dir,
                str(args.loc_project),
                minutes,
                "0" if device == "cuda" else "cpu",
                args.loc_batch,
                args.loc_workers,
                out / "localiser.txt",
            )

    # 2. and 3. classifiers on the growing pool; the localiser once its scenes are in
    def save_all() -> None:
        for v in variants:
            state = {k: t.detach().float().cpu() for k, t in v.net.state_dict().items()}
            torch.save(state, out / f"cls_{v.name}.pt")

    train_classifiers(
        variants,
        pool,
        poll_and_launch,
        t0,
        end - args.tail,
        device,
        args.batch,
        log,
        save_all,
        current_bank,
        args.bank_share,
        args.bank_art_share,
        args.bank_background,
        args.bank_joker_share,
        pad,
        labels,
    )
    for f in futures:
        f.cancel()
    ex.shutdown(wait=False, cancel_futures=True)
    # 4. results
    metrics: dict[str, Any] = {
        "device": device,
        "budget_s": args.budget,
        **stats,
        "pool": len(pool),
        "pool_jokers": 0 if pool.y is None else int(np.isin(pool.y.cpu().numpy(), JOKER_IDS).sum()),
        "val_crops": int(len(val.y)),
        "bank_faces": len(face_bank[0]) if face_bank else 0,
        "head": {"name": args.head, "classes": head.classes, "pad": pad, "size": size},
        "variants": {},
        "args": {k: str(v) for k, v in vars(args).items()},
    }
    save_all()
    for v in variants:
        acc = accuracy_on(v.net, val, device, labels=labels)
        metrics["variants"][v.name] = {
            "width": v.width,
            "lr": v.lr,
            "init": v.init,
            "steps": v.steps,
            "loss": v.loss,
            "heldout_val_proc_crop_acc": acc,
        }
        if labels is not None:  # the joker head: how many of the jokers' crops it names
            jokers = labels[val.y] > 0
            acc_j = accuracy_on(v.net, CropSet(val.x[jokers], val.y[jokers]), device, labels=labels)
            metrics["variants"][v.name]["heldout_val_proc_joker_acc"] = acc_j
            log(f"{v.name}: jokers' crops {acc_j:.4f} of {int(jokers.sum())}")
        log(f"{v.name}: {v.steps} steps, selection crop accuracy {acc:.4f}")
    if loc_proc is not None:
        metrics["localiser_weights"] = _finish_localiser(
            loc_proc, t0 + args.budget - 5, Path(args.loc_project) / "loc" / "weights", out / "loc.pt"
        )
        metrics["localiser_rc"] = loc_proc.returncode
        log(f"localiser rc {loc_proc.returncode}, weights {metrics['localiser_weights']}")
    metrics["wall_s"] = round(time.time() - t0, 1)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1))
    log(json.dumps({k: v for k, v in metrics.items() if k != "args"}))
    return metrics


# --------------------------------------------------------------------------- weight interpolation (here)


def interpolate_weights(base: dict[str, Any], tuned: dict[str, Any], alpha: float) -> dict[str, Any]:
    """``(1 - alpha) · base + alpha · tuned`` for every floating-point tensor of two state dicts of
    one architecture; integer tensors (batch-norm counters) are taken from ``tuned``. This is
    weight-space ensembling of a network and its own fine-tuned copy (WiSE-FT, Wortsman et al.
    2022): it keeps most of what the fine-tune gained on new decks and most of what the base knew.

    >>> import torch
    >>> out = interpolate_weights({"w": torch.zeros(2), "n": torch.tensor(3)},
    ...                           {"w": torch.ones(2), "n": torch.tensor(5)}, 0.25)
    >>> out["w"].tolist(), int(out["n"])
    ([0.25, 0.25], 5)
    """
    if set(base) != set(tuned):
        raise GpuRunError("the two state dicts hold different tensors: not one architecture")
    if not 0.0 <= alpha <= 1.0:
        raise GpuRunError(f"alpha {alpha} is outside [0, 1]")
    out: dict[str, Any] = {}
    for key, b in base.items():
        t = tuned[key]
        if tuple(b.shape) != tuple(t.shape):
            raise GpuRunError(f"{key}: shapes {tuple(b.shape)} and {tuple(t.shape)} differ")
        out[key] = (1 - alpha) * b.float() + alpha * t.float() if b.is_floating_point() else t.clone()
    return out


def soup(base: Path, tuned: Path, alpha: float, out: Path, width: float) -> None:
    """Write the interpolated classifier as ``out`` (``.pt`` state dict) and ``out.onnx``."""
    import torch

    from models.classifier import build_net, export_onnx

    state = interpolate_weights(
        torch.load(base, map_location="cpu"), torch.load(tuned, map_location="cpu"), alpha
    )
    net = build_net(width=width)
    net.load_state_dict(state)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(state, out.with_suffix(".pt"))
    export_onnx(net, CROP_SIZE, out.with_suffix(".onnx"))


def export_head(weights: Path, out: Path, head: str, width: float) -> None:
    """Write a network ``gpu train --head HEAD`` trained (its state dict ``weights``) as ONNX, with
    its window's pad in the file's metadata (:func:`models.classifier.export_onnx`)."""
    import torch

    from models.classifier import build_net, export_onnx

    spec = trained_head(head)
    net = build_net(spec.classes, spec.size, width=width)
    try:
        net.load_state_dict(torch.load(weights, map_location="cpu"))
    except RuntimeError as exc:
        raise GpuRunError(f"{weights}: not a {head} network of width {width:g}: {str(exc)[:200]}") from None
    export_onnx(net, spec.size, out, spec.pad)


# --------------------------------------------------------------------------- checks (here)


def _sources(specs: list[str]) -> list[tuple[str, Path, str]]:
    """``NAME=DIR:SPLIT`` → (name, dataset folder, split)."""
    out = []
    for spec in specs:
        name, _, rest = spec.partition("=")
        root, _, split = rest.rpartition(":")
        if not name or not root or not split:
            raise GpuRunError(f"split {spec!r}: NAME=DIR:SPLIT")
        out.append((name, Path(root), split))
    return out


def check_classifiers(nets: list[str], splits: list[str], seed: int = 0) -> dict[str, dict[str, float]]:
    """Top-1 of classifier state dicts (``NAME=PATH:WIDTH``) on the same crops of each split's labels
    (jittered by 8 %, two background boxes per image): cards, jokers and background apart."""
    import torch

    from models.classifier import build_net, extract_crops

    loaded = {}
    for spec in nets:
        name, _, rest = spec.partition("=")
        path, _, width = rest.rpartition(":")
        net = build_net(width=float(width))
        net.load_state_dict(torch.load(path, map_location="cpu"))
        loaded[name] = net.eval()
    table: dict[str, dict[str, float]] = {}
    for split_name, root, split in _sources(splits):
        data = extract_crops([(root, split)], jitter=1, seed=seed, amount=0.08, negatives=2)
        card = data.y < BACKGROUND
        joker = (data.y == BACKGROUND - 2) | (data.y == BACKGROUND - 1)
        for name, net in loaded.items():
            with torch.no_grad():
                pred = np.concatenate(
                    [
                        net(torch.from_numpy(data.x[i : i + 2048]).float() / 255.0).argmax(1).numpy()
                        for i in range(0, len(data.y), 2048)
                    ]
                )
            row = table.setdefault(name, {})
            row[f"{split_name} cards"] = float(np.mean(pred[card] == data.y[card]))
            row[f"{split_name} jokers"] = (
                float(np.mean(pred[joker] == data.y[joker])) if joker.any() else float("nan")
            )
            row[f"{split_name} background"] = float(np.mean(pred[~card] == BACKGROUND))
    return table


def check_localisers(models: list[str], splits: list[str], every: int = 3) -> dict[str, dict[str, float]]:
    """Recall of labelled indices (IoU ≥ 0.5) and boxes on no index (IoU < 0.3) of localiser ONNX
    files (``NAME=PATH``) through the inference pyramid at scores 0.2 / 0.3 / 0.4, on every
    ``every``-th image of each split; jokers found at 0.3."""
    import cv2

    from models.tiles import IMAGE_SUFFIXES, read_yolo_labels
    from vision.detections import box_iou
    from vision.detectors.base import DetectorConfig, create_detector
    from vision.tiling import TiledDetector, TilingConfig

    detectors = {}
    for spec in models:
        name, _, onnx = spec.partition("=")
        net = create_detector(DetectorConfig(type="onnx", weights=Path(onnx), conf=0.2))
        detectors[name] = TiledDetector(net, TilingConfig(tile=net.config.imgsz))
    table: dict[str, dict[str, float]] = {}
    for split_name, root, split in _sources(splits):
        paths = sorted(p for p in (root / "images" / split).glob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
        counts = {n: np.zeros(11, np.int64) for n in detectors}  # found/labels/stray per score, jokers
        for path in paths[::every]:
            read = cv2.imread(str(path))
            if read is None:
                continue
            image = np.asarray(read, np.uint8)
            h, w = image.shape[:2]
            cls, boxes = read_yolo_labels(root / "labels" / split / (path.stem + ".txt"), w, h)
            for name, det in detectors.items():
                found_all = det.detect(image).with_nms(0.5, class_agnostic=True)
                for k, score in enumerate((0.2, 0.3, 0.4)):
                    xy = found_all.xyxy[found_all.confidence >= score]
                    if len(cls) and len(xy):
                        iou = box_iou(np.asarray(boxes, np.float32), xy)
                        found, stray = iou.max(1) >= 0.5, int((iou.max(0) < 0.3).sum())
                    else:
                        found, stray = np.zeros(len(cls), bool), len(xy)
                    counts[name][3 * k : 3 * k + 3] += (int(found.sum()), len(cls), stray)
                    if score == 0.3:
                        joker = (cls == BACKGROUND - 2) | (cls == BACKGROUND - 1)
                        counts[name][9:] += (int(found[joker].sum()), int(joker.sum()))
        for name, c in counts.items():
            row = table.setdefault(name, {})
            for k, score in enumerate((0.2, 0.3, 0.4)):
                row[f"{split_name} recall@{score}"] = c[3 * k] / max(1, c[3 * k + 1])
                row[f"{split_name} stray@{score}"] = float(c[3 * k + 2])
            row[f"{split_name} jokers found"] = float(c[9])
            row[f"{split_name} jokers"] = float(c[10])
    return table


def _cell(key: str, value: float) -> str:
    counted = "stray" in key or key.endswith(("jokers", "found"))
    return f"{key} {value:.0f}" if counted else f"{key} {value:.4f}"
