"""Card faces per design: rendering and slicing aisleriot sheets, procedural decks, corner-index boxes.

A :class:`FaceSet` holds the 54 faces and the back of one design as BGRA arrays of one size, plus
the corner-index box in face pixels (top-left corner; the bottom-right index is the same box
rotated 180° about the face centre).

Aisleriot sheets are SVG grids of 13 × 5 cells: rows clubs, diamonds, hearts, spades (ranks
A, 2 … 10, J, Q, K), then black joker, red joker, back. A sheet is rendered once with
``rsvg-convert``, sliced, and cached as a PNG atlas + JSON under ``$TRACTORCAM_CACHE/faces``
(default ``~/.cache/tractorcam/faces``); nothing is ever written inside the repository. KDE decks
draw each card as an SVG element of its own, rendered one by one and cached the same way.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from engine.cards import CARD_NAMES, JOKER_NAMES
from models.synth import kennard, procedural
from models.synth.designs import BY_NAME, TRAIN, Design

CACHE_VERSION = 4
FACE_H = procedural.FACE_H
SHEET_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SHEET_SUITS = ("C", "D", "H", "S")
CARDS: tuple[str, ...] = CARD_NAMES  # the engine's 54 cards: S, H, D, C from 2 to A, then SJ, BJ


def cache_root() -> Path:
    """Root of this project's cache (env ``TRACTORCAM_CACHE`` overrides ``~/.cache/tractorcam``)."""
    return Path(os.environ.get("TRACTORCAM_CACHE") or str(Path.home() / ".cache" / "tractorcam"))


def cache_dir() -> Path:
    """Root of the face cache (``<cache root>/faces``)."""
    return cache_root() / "faces"


def kde_dir() -> Path:
    """Where kdegames-card-data-kf5 installs its decks (env ``TRACTORCAM_KDE_DIR`` overrides)."""
    return Path(os.environ.get("TRACTORCAM_KDE_DIR", "/usr/share/carddecks"))


def kennard_dir() -> Path:
    """Where :mod:`models.synth.kennard` writes Adrian Kennard's card SVGs (env
    ``TRACTORCAM_KENNARD_DIR`` overrides ``<cache root>/art/kennard``)."""
    env = os.environ.get("TRACTORCAM_KENNARD_DIR")
    return Path(env) if env else cache_root() / "art" / "kennard"


def art_path(design: Design) -> Path:
    """The SVG(Z) file of an aisleriot or KDE design (a Kennard design: its directory of SVGs)."""
    if design.kind == "kennard":
        return kennard_dir()
    return (kde_dir() if design.kind == "kde" else aisleriot_dir()) / design.source


def aisleriot_dir() -> Path:
    """Where gnome-cards-data installs its themes (env ``TRACTORCAM_AISLERIOT_DIR`` overrides)."""
    return Path(os.environ.get("TRACTORCAM_AISLERIOT_DIR", "/usr/share/aisleriot/cards"))


@dataclass
class FaceSet:
    """The faces of one design, all ``size`` = (w, h) pixels, BGRA."""

    design: str
    faces: dict[str, np.ndarray]  # card name (vision.labels notation) -> BGRA
    back: np.ndarray
    index_box: tuple[float, float, float, float]  # x1, y1, x2, y2 in face px, top-left index
    jokers: bool = True
    corners: tuple[str, ...] = ("tl", "br")
    court_indices: bool = True
    #: top-left index boxes of cards whose corner mark differs from the design's rank + suit box
    #: (the jokers: a star, an emblem or the word JOKER; see :func:`joker_index_boxes`)
    card_boxes: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)

    @property
    def size(self) -> tuple[int, int]:
        h, w = self.back.shape[:2]
        return w, h

    def index_boxes(self, card: str | None = None) -> dict[str, tuple[float, float, float, float]]:
        """Index boxes (x1, y1, x2, y2, face px) of the corners that carry one: ``tl``; ``br`` is
        ``tl`` rotated 180° about the face centre; ``tr``/``bl`` (4-index decks) are mirrors.

        ``card``: that card's own corner mark where it has one (:attr:`card_boxes`), else the
        design's index box."""
        w, h = self.size
        x1, y1, x2, y2 = self.card_boxes.get(card or "", self.index_box)
        all_ = {
            "tl": (x1, y1, x2, y2),
            "br": (w - x2, h - y2, w - x1, h - y1),
            "tr": (w - x2, y1, w - x1, y2),
            "bl": (x1, h - y2, x2, h - y1),
        }
        return {c: all_[c] for c in self.corners}

    def cards(self) -> tuple[str, ...]:
        """Card names this design may show face up (jokers only when they are distinguishable,
        court cards only when they carry a regular corner index)."""
        out = CARDS if self.jokers else CARDS[:52]
        if not self.court_indices:
            out = tuple(c for c in out if c[:-1] not in ("J", "Q", "K"))
        return out


# --------------------------------------------------------------------------- index geometry


def _ink(face: np.ndarray, bg: np.ndarray) -> np.ndarray:
    diff = np.abs(face[:, :, :3].astype(np.int16) - bg.astype(np.int16)).sum(axis=2)
    # ignore the card's printed outline: only ink at least 4 px inside the opaque area counts
    inside = cv2.erode((face[:, :, 3] > 200).astype(np.uint8), np.ones((9, 9), np.uint8), borderValue=0)
    return np.asarray(((diff > 90) & (inside > 0)).astype(np.uint8))


def card_index_box(face: np.ndarray, bg: np.ndarray) -> tuple[int, int, int, int] | None:
    """Ink box of the top-left corner index (rank + small pip) of one face, or None if not found.

    Connected components of ink lying wholly in the top-left region; start at the component nearest
    the corner and grow by components just below it or just right of it.
    """
    h, w = face.shape[:2]
    rw, rh = int(0.32 * w), int(0.40 * h)
    ink = _ink(face, bg)[:rh, :rw]
    n, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    comps: list[tuple[int, int, int, int]] = []
    for i in range(1, n):
        x, y, cw, ch, area = stats[i]
        if area < 4 or x + cw >= rw - 1 or y + ch >= rh - 1:
            continue  # noise, or runs out of the corner region (frame, picture, big pip)
        if x <= 1 and ch > 0.2 * h:
            continue  # card outline
        comps.append((x, y, x + cw, y + ch))
    start = [c for c in comps if c[0] < 0.2 * w and c[1] < 0.16 * h and (c[3] - c[1]) > 0.025 * h]
    if not start:
        return None
    first: tuple[int, int, int, int] = min(start, key=lambda c: c[0] + c[1])
    box = list(first)
    gap_y, gap_x = 0.035 * h, 0.035 * w
    grown = True
    used = {tuple(box)}
    while grown:
        grown = False
        for c in comps:
            if c in used:
                continue
            below = (
                c[1] <= box[3] + gap_y and c[3] > box[1] and c[0] < box[2] + gap_x and c[2] > box[0] - gap_x
            )
            beside = c[0] <= box[2] + gap_x and c[2] > box[0] and c[1] < box[3] and c[3] > box[1] - gap_y
            if (below or beside) and (max(box[2], c[2]) - min(box[0], c[0])) < 0.3 * w:
                box = [min(box[0], c[0]), min(box[1], c[1]), max(box[2], c[2]), max(box[3], c[3])]
                used.add(c)
                grown = True
    return box[0], box[1], box[2], box[3]


def _face_background(faces: dict[str, np.ndarray]) -> np.ndarray:
    """The design's paper colour (BGR): median of the opaque middle of the two of clubs."""
    ref = faces["2C"]
    h, w = ref.shape[:2]
    inner = ref[int(0.3 * h) : int(0.7 * h), int(0.1 * w) : int(0.9 * w)]
    return np.asarray(np.median(inner[inner[:, :, 3] > 200][:, :3], axis=0))


def joker_index_boxes(faces: dict[str, np.ndarray]) -> dict[str, tuple[float, float, float, float]]:
    """Top-left corner-mark boxes of the two jokers, found in their own ink.

    A joker prints no rank + suit: its corner shows a star, an emblem or the word JOKER, often
    smaller than or offset from the design's index box, so that box would label mostly blank card
    (or miss the mark). A joker whose mark is not found keeps the design's box.
    """
    bg = _face_background(faces)
    w = faces["SJ"].shape[1]
    m = 0.012 * w
    out = {}
    for card in JOKER_NAMES:
        b = card_index_box(faces[card], bg)
        if b is not None:
            out[card] = (max(0.0, b[0] - m), max(0.0, b[1] - m), float(b[2]) + m, float(b[3]) + m)
    return out


def design_index_box(faces: dict[str, np.ndarray]) -> tuple[float, float, float, float]:
    """One index box for a whole design: robust union of the per-card boxes of the 52 suit cards."""
    h, w = faces["2C"].shape[:2]
    bg = _face_background(faces)
    boxes = [b for c in CARDS[:52] if (b := card_index_box(faces[c], bg)) is not None]
    if len(boxes) < 26:
        raise RuntimeError(f"corner index found on only {len(boxes)} cards")
    arr = np.array(boxes, float)
    med = np.median(arr, axis=0)
    size = np.array([med[2] - med[0], med[3] - med[1]] * 2)
    ok = np.all(np.abs(arr - med) < 0.6 * size + 3, axis=1)
    arr = arr[ok]
    x1, y1 = np.percentile(arr[:, 0], 5), np.percentile(arr[:, 1], 5)
    x2, y2 = np.percentile(arr[:, 2], 95), np.percentile(arr[:, 3], 95)
    m = 0.012 * w
    return (max(0.0, x1 - m), max(0.0, y1 - m), min(w / 2, x2 + m), min(h / 2, y2 + m))


# --------------------------------------------------------------------------- aisleriot sheets


def _runs(profile: np.ndarray, want: int) -> list[tuple[int, int]] | None:
    on = profile > 0.05 * profile.max()
    runs, start = [], None
    for i, v in enumerate(on):
        if v and start is None:
            start = i
        elif not v and start is not None:
            runs.append((start, i))
            start = None
    if start is not None:
        runs.append((start, len(on)))
    runs = [r for r in runs if r[1] - r[0] > 0.3 * len(on) / want]
    return runs if len(runs) == want else None


def slice_sheet(sheet: np.ndarray) -> list[list[np.ndarray]]:
    """Cut a rendered 13 × 5 BGRA sheet into cells cropped to each card's opaque area."""
    alpha = sheet[:, :, 3]
    ys, xs = np.nonzero(alpha > 16)
    bx0, bx1, by0, by1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    a = alpha[by0:by1, bx0:bx1] > 16
    ph = (by1 - by0) / 5
    cols = _runs(a[: int(4 * ph)].sum(axis=0).astype(float), 13)
    rows = _runs(a.sum(axis=1).astype(float), 5)
    if cols is None:
        pw = (bx1 - bx0) / 13
        cols = [(int(i * pw), int((i + 1) * pw)) for i in range(13)]
    if rows is None:
        rows = [(int(i * ph), int((i + 1) * ph)) for i in range(5)]
    out = []
    for r0, r1 in rows:
        row = []
        for c0, c1 in cols:
            cell = sheet[by0 + r0 : by0 + r1, bx0 + c0 : bx0 + c1]
            yy, xx = np.nonzero(cell[:, :, 3] > 16)
            if len(xx) == 0:
                row.append(cell)
                continue
            row.append(cell[yy.min() : yy.max() + 1, xx.min() : xx.max() + 1])
        out.append(row)
    return out


def render_sheet(svg: Path, height: int) -> np.ndarray:
    """Render a whole SVG(Z) sheet to BGRA with rsvg-convert."""
    if not Path(svg).is_file():
        raise FileNotFoundError(f"card art not found: {svg}")
    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise FileNotFoundError("rsvg-convert not found (Debian package librsvg2-bin)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "sheet.png"
        subprocess.run([exe, "-h", str(height), "-o", str(out), str(svg)], check=True, capture_output=True)
        img = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
    if img is None or img.ndim != 3 or img.shape[2] != 4:
        raise RuntimeError(f"could not render {svg}")
    return img


def render_element(svg: Path, element: str, zoom: float) -> np.ndarray:
    """Render one element of an SVG(Z) (``rsvg-convert --export-id``) to BGRA, cropped to its
    opaque area."""
    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise FileNotFoundError("rsvg-convert not found (Debian package librsvg2-bin)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "card.png"
        cmd = [exe, "-i", element, "-z", f"{zoom:.5f}", "-o", str(out), str(svg)]
        subprocess.run(cmd, check=True, capture_output=True)
        img = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
    if img is None or img.ndim != 3 or img.shape[2] != 4:
        raise RuntimeError(f"could not render {element} of {svg}")
    ys, xs = np.nonzero(img[:, :, 3] > 16)
    if len(xs) == 0:
        raise RuntimeError(f"element {element} of {svg} rendered empty")
    return img[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


#: KDE element names: ``<rank>_<suit>`` with ranks 1 … 10, jack, queen, king
KDE_RANKS = {"A": "1", "J": "jack", "Q": "queen", "K": "king"}
KDE_SUITS = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}


def _build_kde(design: Design) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Faces of a KDE deck, one element per card; its jokers (not drawn as elements) are the back."""
    svg = art_path(design)
    probe = render_element(svg, "1_club", 1.0)
    zoom = FACE_H / probe.shape[0]
    size = (int(round(FACE_H * probe.shape[1] / probe.shape[0])), FACE_H)
    faces: dict[str, np.ndarray] = {}
    for card in CARDS[:52]:
        rank, suit = card[:-1], card[-1]
        cell = render_element(svg, f"{KDE_RANKS.get(rank, rank)}_{KDE_SUITS[suit]}", zoom)
        faces[card] = cv2.resize(cell, size, interpolation=cv2.INTER_AREA)
    back = cv2.resize(render_element(svg, "back", zoom), size, interpolation=cv2.INTER_AREA)
    faces["SJ"] = faces["BJ"] = back  # never shown face up: the design has jokers=False
    return faces, back


def _build_kennard(design: Design) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Faces of the Kennard deck, one SVG per card (:mod:`models.synth.kennard`); its jokers have
    no corner mark, so (like the KDE decks) they are never shown face up and stand in as the back."""
    folder = art_path(design)
    if not (folder / "B1.svg").is_file():
        raise kennard.KennardArtError(
            f"the Kennard card art is not in {folder}: run `tractorcam synth kennard` first"
        )
    cells = {c: render_sheet(folder / f"{kennard.kennard_name(c)}.svg", FACE_H) for c in CARDS[:52]}
    size = (int(round(FACE_H * cells["AS"].shape[1] / cells["AS"].shape[0])), FACE_H)
    faces = {c: cv2.resize(cell, size, interpolation=cv2.INTER_AREA) for c, cell in cells.items()}
    back = cv2.resize(render_sheet(folder / "B1.svg", FACE_H), size, interpolation=cv2.INTER_AREA)
    faces["SJ"] = faces["BJ"] = back
    return faces, back


def _build_aisleriot(design: Design) -> tuple[dict[str, np.ndarray], np.ndarray]:
    svg = art_path(design)
    sheet = render_sheet(svg, height=int(5 * FACE_H * 1.08))
    cells = slice_sheet(sheet)
    aspects = [c.shape[1] / c.shape[0] for row in cells[:4] for c in row]
    w = int(round(FACE_H * float(np.median(aspects))))
    size = (w, FACE_H)
    faces: dict[str, np.ndarray] = {}
    for si, suit in enumerate(SHEET_SUITS):
        for ri, rank in enumerate(SHEET_RANKS):
            faces[rank + suit] = cv2.resize(cells[si][ri], size, interpolation=cv2.INTER_AREA)
    faces["SJ"] = cv2.resize(cells[4][0], size, interpolation=cv2.INTER_AREA)
    faces["BJ"] = cv2.resize(cells[4][1], size, interpolation=cv2.INTER_AREA)
    back = cv2.resize(cells[4][2], size, interpolation=cv2.INTER_AREA)
    return faces, back


#: How the faces of each kind of SVG design are built (procedural decks are drawn, not rendered).
_BUILDERS = {"aisleriot": _build_aisleriot, "kde": _build_kde, "kennard": _build_kennard}


def _build_procedural(design: Design) -> tuple[dict[str, np.ndarray], np.ndarray]:
    v = int(design.source)
    return {c: procedural.draw_face(v, c) for c in CARDS}, procedural.draw_face(v, "back")


def _atlas_paths(design: Design) -> tuple[Path, Path]:
    d = cache_dir()
    return d / f"{design.name}-v{CACHE_VERSION}.png", d / f"{design.name}-v{CACHE_VERSION}.json"


def _save_atlas(design: Design, fs: FaceSet) -> None:
    png, meta = _atlas_paths(design)
    png.parent.mkdir(parents=True, exist_ok=True)
    w, h = fs.size
    atlas = np.zeros((h * 5, w * 11, 4), np.uint8)
    for i, c in enumerate((*CARDS, "back")):
        r, k = divmod(i, 11)
        atlas[r * h : (r + 1) * h, k * w : (k + 1) * w] = fs.back if c == "back" else fs.faces[c]
    # write under unique names, then rename: parallel workers may build the same design at once
    tmp = png.with_name(f"{png.stem}.{os.getpid()}.tmp.png")
    cv2.imwrite(str(tmp), atlas)
    tmp_meta = meta.with_name(f"{meta.stem}.{os.getpid()}.tmp.json")
    tmp_meta.write_text(json.dumps({"design": design.name, "size": [w, h], "index_box": list(fs.index_box)}))
    tmp.replace(png)
    tmp_meta.replace(meta)


def _load_atlas(design: Design) -> FaceSet | None:
    png, meta = _atlas_paths(design)
    if not (png.exists() and meta.exists()):
        return None
    m = json.loads(meta.read_text())
    atlas = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
    if atlas is None:
        return None
    w, h = m["size"]
    faces = {}
    back = None
    for i, c in enumerate((*CARDS, "back")):
        r, k = divmod(i, 11)
        cell = np.ascontiguousarray(atlas[r * h : (r + 1) * h, k * w : (k + 1) * w])
        if c == "back":
            back = cell
        else:
            faces[c] = cell
    assert back is not None
    return FaceSet(
        design.name,
        faces,
        back,
        tuple(m["index_box"]),
        design.jokers,
        design.corners,
        design.court_indices,
        joker_index_boxes(faces),
    )


def ensure_cached(names: list[str] | tuple[str, ...]) -> None:
    """Build the cached atlases of SVG designs that are not cached yet (before starting workers)."""
    for name in names:
        d = BY_NAME[name]
        if d.kind != "procedural" and not _atlas_paths(d)[0].exists():
            load_faces(name)


def is_available(design: Design) -> bool:
    """Whether the design can be produced here (procedural always; aisleriot and KDE need the art +
    rsvg)."""
    if design.kind == "procedural":
        return True
    if _atlas_paths(design)[0].exists():
        return True
    return art_path(design).exists() and shutil.which("rsvg-convert") is not None


@lru_cache(maxsize=48)
def load_faces(name: str) -> FaceSet:
    """The FaceSet of a design of the library (built and cached on first use)."""
    return build_faces(BY_NAME[name])


def build_faces(design: Design) -> FaceSet:
    """The FaceSet of ``design``, also one outside the library (e.g. a fresh randomised variant); an
    SVG design's atlas is read from, or written to, the cache."""
    if design.kind != "procedural":
        fs = _load_atlas(design)
        if fs is not None:
            return fs
        faces, back = _BUILDERS[design.kind](design)
    else:
        faces, back = _build_procedural(design)
    fs = FaceSet(
        design.name,
        faces,
        back,
        design_index_box(faces),
        design.jokers,
        design.corners,
        design.court_indices,
        joker_index_boxes(faces),
    )
    if design.kind != "procedural":
        _save_atlas(design, fs)
    return fs


def available_designs(designs: tuple[Design, ...] | list[Design] = TRAIN) -> list[str]:
    """Names of the given designs that can be produced on this machine."""
    return [d.name for d in designs if is_available(d)]
