"""Index-sized training tiles composed directly from the renderer's card faces (warm-up data).

The scene renderer (:mod:`models.synth`) makes whole-table frames; cutting them into tiles is
:mod:`models.tiles`. This module is the cheap complement used to start training before whole scenes
exist and to add close-up variety: it places a few cards (single, fan, row or pile, with duplicates
of one card from several decks) of the *training* designs only on a table texture at a random scale
where a corner index is ``index_px`` tall, and labels every corner index at least ``min_visible``
unoccluded and inside the tile with its axis-aligned box (class ids of :mod:`vision.labels`).

    tractorcam synth facetiles OUT --train N --val M [--designs randomised|fonts|glyphs|kde|kennard]
        [--joker-share P] [--text-share P] [--index-px MIN MAX]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from models.metrics import JOKERS
from vision.labels import class_id


@dataclass(frozen=True)
class FaceTileSettings:
    """What the composed tiles look like."""

    tile: int = 320
    index_px: tuple[float, float] = (16.0, 64.0)
    cards: tuple[int, int] = (1, 7)
    duplicate_share: float = 0.35
    min_visible: float = 0.6
    face_down_share: float = 0.1
    #: chance that a drawn card is a joker (big or small, even odds); None draws uniformly from the
    #: deck's 54 cards (2 jokers in 54, which leaves the classifier and localiser short of them)
    joker_share: float | None = None
    #: chance that a tile also shows printed matter (text on paper, no label) under its cards
    text_share: float = 0.0
    #: chance that the tile's surface is a bare one (:func:`models.synth.textures.bare_surface`:
    #: speckled, stone, plain, paper) instead of a table texture
    bare_share: float = 0.0
    #: chance that the tile shows no card face (no card, or only backs): a negative for the localiser
    empty_share: float = 0.0


def _card_drawer(rng: np.random.Generator, names: list[str], joker_share: float | None) -> Callable[[], str]:
    """Draws card names: uniform over the deck, or a joker with probability ``joker_share``."""
    if joker_share is None:
        return lambda: names[int(rng.integers(len(names)))]
    jokers = [n for n in names if n in JOKERS]
    others = [n for n in names if n not in JOKERS]

    def draw() -> str:
        pool = jokers if jokers and rng.random() < joker_share else others
        return pool[int(rng.integers(len(pool)))]

    return draw


def _quad_box(quad: npt.NDArray[np.float64]) -> tuple[float, float, float, float]:
    return float(quad[:, 0].min()), float(quad[:, 1].min()), float(quad[:, 0].max()), float(quad[:, 1].max())


def compose_tile(
    rng: np.random.Generator, face_sets: list[Any], settings: FaceTileSettings
) -> tuple[npt.NDArray[np.uint8], list[tuple[int, tuple[float, float, float, float]]]]:
    """One tile and its labels ``(class_id, (x1, y1, x2, y2))`` in tile pixels."""
    from models.synth.layout import shape_offsets
    from models.synth.textures import table_texture

    t = settings.tile
    fs = face_sets[int(rng.integers(len(face_sets)))]
    fw, fh = fs.size
    ix1, iy1, ix2, iy2 = fs.index_box
    target = float(np.exp(rng.uniform(np.log(settings.index_px[0]), np.log(settings.index_px[1]))))
    scale = target / max(iy2 - iy1, ix2 - ix1)  # face px → tile px
    if settings.bare_share > 0 and rng.random() < settings.bare_share:
        from models.synth.textures import bare_surface

        canvas = bare_surface(rng, t)
    else:
        canvas = table_texture(rng, 900.0, px=t)[:t, :t].astype(np.float32)
    if canvas.shape[:2] != (t, t):
        canvas = cv2.resize(canvas, (t, t))
    if settings.text_share > 0 and rng.random() < settings.text_share:
        from models.synth.printed import lay_printed

        for _ in range(int(rng.integers(1, 3))):
            lay_printed(canvas, rng, float(rng.uniform(0.4, 1.2)) * target)
    n = int(rng.integers(settings.cards[0], settings.cards[1] + 1))
    empty = settings.empty_share > 0 and rng.random() < settings.empty_share
    if empty:
        n = int(rng.integers(0, 4))
    draw = _card_drawer(rng, list(fs.cards()), settings.joker_share)
    if rng.random() < settings.duplicate_share:
        pick = draw()
        k = int(rng.integers(2, 4))
        chosen = [pick] * min(k, n) + [draw() for _ in range(max(0, n - k))]
        rng.shuffle(chosen)
    else:
        chosen = [draw() for _ in range(n)]
    kind = ["fan", "fan", "row", "pile"][int(rng.integers(4))] if n > 1 else "single"
    card_w_mm = 63.0
    offs = shape_offsets(rng, n, kind, card_w_mm) if n else []
    mm = fh * scale / 88.0  # tile px per mm
    centre = rng.uniform(0.2 * t, 0.8 * t, 2)
    base = float(rng.uniform(0, 360))
    owner = np.full((t, t), -1, np.int32)
    quads: list[list[tuple[int, npt.NDArray[np.float64]]]] = []
    a = np.deg2rad(base)
    r = np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]])
    for k, (card, (dx, dy, da)) in enumerate(zip(chosen, offs, strict=True)):
        face_up = rng.random() >= settings.face_down_share and not empty
        img = fs.faces[card] if face_up else fs.back
        pos = centre + r @ (np.array([dx, dy]) * mm)
        m = cv2.getRotationMatrix2D((fw / 2, fh / 2), base + da, scale)
        m[:, 2] += pos - np.array([fw / 2, fh / 2])
        warped = cv2.warpAffine(img, m, (t, t), flags=cv2.INTER_AREA, borderValue=(0, 0, 0, 0))
        alpha = warped[:, :, 3:4].astype(np.float32) / 255.0
        canvas = canvas * (1 - alpha) + warped[:, :, :3].astype(np.float32) * alpha
        owner[alpha[:, :, 0] > 0.5] = k
        card_quads = []
        if face_up:
            for box in fs.index_boxes(card).values():
                x1, y1, x2, y2 = box
                pts = np.array([[x1, y1, 1], [x2, y1, 1], [x2, y2, 1], [x1, y2, 1]], np.float64)
                card_quads.append((class_id(card), pts @ m.T))
        quads.append(card_quads)
    # lighting, blur, noise
    canvas = canvas * rng.uniform(0.7, 1.25) + rng.uniform(-20, 20)
    if rng.random() < 0.5:
        canvas = cv2.GaussianBlur(canvas, (0, 0), rng.uniform(0.3, 1.2))
    canvas = canvas + rng.normal(0, rng.uniform(0, 6), canvas.shape)
    image = np.clip(canvas, 0, 255).astype(np.uint8)
    labels = []
    for k, card_quads in enumerate(quads):
        for cid, quad in card_quads:
            mask = np.zeros((t, t), np.uint8)
            full = cv2.fillConvexPoly(
                np.zeros((t + 400, t + 400), np.uint8), (quad + 200).astype(np.int32), 1
            )
            total = int(full.sum())
            cv2.fillConvexPoly(mask, quad.astype(np.int32), 1)
            visible = int(((mask > 0) & (owner == k)).sum())
            if total == 0 or visible / total < settings.min_visible:
                continue
            x1, y1, x2, y2 = _quad_box(quad)
            labels.append((cid, (max(x1, 0.0), max(y1, 0.0), min(x2, float(t)), min(y2, float(t)))))
    return image, labels


def make_face_tiles(
    out: Path, split: str, n: int, designs: list[str], seed: int, settings: FaceTileSettings | None = None
) -> int:
    """Write ``n`` composed tiles into ``out/images/<split>`` and ``out/labels/<split>``."""
    from models.synth.faces import load_faces

    settings = settings or FaceTileSettings()
    face_sets = [load_faces(d) for d in designs]
    rng = np.random.default_rng(seed)
    img_dir, lab_dir = Path(out) / "images" / split, Path(out) / "labels" / split
    img_dir.mkdir(parents=True, exist_ok=True)
    lab_dir.mkdir(parents=True, exist_ok=True)
    t = settings.tile
    for i in range(n):
        image, labels = compose_tile(rng, face_sets, settings)
        name = f"f{seed}_{i:06d}"
        cv2.imwrite(
            str(img_dir / f"{name}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(70, 96))]
        )
        lines = "".join(
            f"{c} {(x1 + x2) / 2 / t:.6f} {(y1 + y2) / 2 / t:.6f} {(x2 - x1) / t:.6f} {(y2 - y1) / t:.6f}\n"
            for c, (x1, y1, x2, y2) in labels
        )
        (lab_dir / f"{name}.txt").write_text(lines)
    return n


#: The design groups face tiles can draw (``--designs``), each a tuple name in :mod:`models.synth.designs`.
DESIGN_GROUPS = {
    "train": "TRAIN",
    "randomised": "RANDOMISED",
    "fonts": "RANDOMISED_TTF",
    "glyphs": "RANDOMISED_GLYPH",
    "kde": "KDE_TRAIN",
    "kennard": "KENNARD_TRAIN",
}


def design_group(name: str) -> tuple[Any, ...]:
    """The designs of a face-tile group (:data:`DESIGN_GROUPS`); ``KeyError`` for an unknown name.

    >>> len(design_group("glyphs"))
    200
    """
    from models.synth import designs

    return tuple(getattr(designs, DESIGN_GROUPS[name]))
