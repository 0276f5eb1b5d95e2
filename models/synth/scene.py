"""Overhead table scenes: cards composited through a camera homography, with exact per-card labels.

Entry point: :func:`render_scene` (random scene by seed) and :class:`Renderer` (a fixed camera and
look, used frame after frame by the deal video).

Pixel convention: continuous image coordinates, pixel (i, j) covers [i, i+1) × [j, j+1). A card
face of ``w × h`` px spans [0, w] × [0, h] in face coordinates; ``Hc`` (3×3) maps face → image.

Labels (:class:`CardLabel`) are computed from the same geometry that draws the pixels: the outline
quad and index quads are the projected face corners / index boxes; visible fractions count the
pixels of the quad raster whose top-most owner (the id map) is the card itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table import LensDistortion
from engine.seats import SEAT_NAMES
from models.synth import textures
from models.synth.clutter import clutter
from models.synth.faces import FaceSet, available_designs, load_faces
from models.synth.hands import Arm, arm_polygons, random_arm
from models.synth.layout import (
    CARD_H_MM,
    Placement,
    Table,
    apply_h,
    closeup_layout,
    loose_layout,
    random_layout,
    rot,
)
from models.synth.markers import draw_table_markers
from models.synth.printed import lay_sheets

__all__ = [
    "Arm",
    "CardLabel",
    "IndexLabel",
    "Look",
    "Renderer",
    "Scene",
    "apply_h",
    "available_designs",
    "camera_homography",
    "random_arm",
    "render_scene",
]
from vision.labels import class_id

BACKGROUND_ID = -1
HAND_ID = -2


@dataclass
class IndexLabel:
    """One printed corner index of a card."""

    corner: str  # tl | br | tr | bl
    quad: list[list[float]]  # 4 × (x, y) image px, in face order TL, TR, BR, BL of the index box
    box: list[float]  # axis-aligned x1, y1, x2, y2 (image px, unclipped)
    visible: float  # fraction of the index's pixels that are in the image and not covered


@dataclass
class CardLabel:
    """Ground truth for one physical card in an image."""

    card: str  # class name (vision.labels)
    class_id: int
    face_up: bool
    quad: list[list[float]]  # outline corners TL, TR, BR, BL of the face (image px)
    visible: float  # fraction of the card's area visible in the image
    corners: list[IndexLabel]
    design: str
    role: str = "play"
    seat: str | None = None
    z: int = 0  # draw order (0 = lowest); also the card's value in Scene.id_map

    def to_dict(self) -> dict[str, Any]:
        d = self.__dict__.copy()
        d["corners"] = [i.__dict__ for i in self.corners]
        return d


@dataclass
class Scene:
    """A rendered image with its labels."""

    image: np.ndarray  # BGR uint8
    cards: list[CardLabel]
    design: str
    table_to_image: np.ndarray  # 3×3, table mm → undistorted image px
    distortion: LensDistortion | None = None
    id_map: np.ndarray | None = None  # int16 owner per pixel (card index, -1 table, -2 hand); pre-distortion
    meta: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- geometry helpers


def _shift(dx: float, dy: float) -> np.ndarray:
    return np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1]], float)


def _raster(poly: np.ndarray, x0: int, y0: int, w: int, h: int) -> np.ndarray:
    """Boolean mask (h, w) of the pixels whose centres lie inside the convex ``poly`` (image
    coords); the mask's top-left pixel is (x0, y0). Unbiased: its count ≈ the polygon's area."""
    out = np.zeros((max(h, 0), max(w, 0)), bool)
    bx0, by0, bx1, by1 = _poly_bbox(poly)
    ax0, ay0, ax1, ay1 = max(bx0, x0), max(by0, y0), min(bx1, x0 + w), min(by1, y0 + h)
    if ax1 <= ax0 or ay1 <= ay0:
        return out
    xs = np.arange(ax0, ax1, dtype=np.float64) + 0.5
    ys = np.arange(ay0, ay1, dtype=np.float64)[:, None] + 0.5
    inside = np.ones((ay1 - ay0, ax1 - ax0), bool)
    c = poly.mean(axis=0)
    n = len(poly)
    for k in range(n):
        a, b = poly[k], poly[(k + 1) % n]
        nx, ny = b[1] - a[1], a[0] - b[0]
        if nx * (c[0] - a[0]) + ny * (c[1] - a[1]) < 0:
            nx, ny = -nx, -ny
        inside &= (xs - a[0]) * nx + (ys - a[1]) * ny >= 0
    out[ay0 - y0 : ay1 - y0, ax0 - x0 : ax1 - x0] = inside
    return out


def _poly_area(q: np.ndarray) -> float:
    """Area of a simple polygon (shoelace)."""
    x, y = q[:, 0], q[:, 1]
    return float(abs(np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1))) / 2)


_ALPHA_FRACTION: dict[tuple[str, str, int], float] = {}
#: faces shrunk with area averaging, shared by all renderers of a process: (design, card, height) -> BGRA
_SHRUNK: dict[tuple[str, str, int], np.ndarray] = {}


def _alpha_fraction(fs: FaceSet, card: str) -> float:
    """Share of a face's rectangle that is opaque (the rounded corners are not)."""
    key = (fs.design, card, id(fs))
    v = _ALPHA_FRACTION.get(key)
    if v is None:
        face = fs.back if card == "back" else fs.faces[card]
        v = _ALPHA_FRACTION[key] = float((face[:, :, 3] > 127).mean())
    return v


def _fill(poly: np.ndarray, width: int, height: int) -> np.ndarray:
    """Anti-aliased uint8 mask (0/255) of a polygon in image coordinates."""
    m = np.zeros((height, width), np.uint8)
    cv2.fillPoly(m, [((poly - 0.5) * 16).round().astype(np.int32)], 255, cv2.LINE_AA, 4)
    return m


def _poly_bbox(poly: np.ndarray) -> tuple[int, int, int, int]:
    x0, y0 = np.floor(poly.min(axis=0)).astype(int)
    x1, y1 = np.ceil(poly.max(axis=0)).astype(int) + 1
    return int(x0), int(y0), int(x1), int(y1)


def camera_homography(
    rng: np.random.Generator,
    table: Table,
    width: int,
    height: int,
    *,
    tilt: float = 0.04,
    fill: float | None = None,
    turn: float | None = None,
) -> np.ndarray:
    """Table mm → image px for an overhead camera: the table fills ``fill`` of the image's short
    side, turned by ``turn`` degrees, with a random perspective tilt (fraction of the size)."""
    fill = rng.uniform(0.8, 1.02) if fill is None else fill
    turn = float(rng.normal(0, 2.5)) if turn is None else turn
    s = fill * min(width, height) / max(table.width, table.height)
    corners = np.array([[0, 0], [table.width, 0], [table.width, table.height], [0, table.height]], float)
    c = corners - [table.width / 2, table.height / 2]
    img = (rot(turn) @ (c * s).T).T + [
        width / 2 + rng.normal(0, 0.02 * width),
        height / 2 + rng.normal(0, 0.02 * height),
    ]
    img = img + rng.normal(0, tilt * min(width, height) / 2, img.shape)
    return cv2.getPerspectiveTransform(corners.astype(np.float32), img.astype(np.float32)).astype(float)


# --------------------------------------------------------------------------- look (camera + light)


@dataclass
class Look:
    """Photometric and lens parameters of one camera/lighting setup."""

    light_dir: tuple[float, float]
    light_amp: float
    vignette: float
    gains: tuple[float, float, float]  # BGR colour temperature
    brightness: float
    gamma: float
    blur: float  # gaussian sigma px (at 1000 px image size)
    noise: float  # noise sigma (0..255)
    jpeg: int  # 0 = no JPEG round trip
    shadow_mm: tuple[float, float]  # shadow offset per mm of height
    shadow_strength: float
    glare: float
    k1: float  # lens distortion

    @staticmethod
    def random(rng: np.random.Generator, effects: bool = True) -> Look:
        if not effects:
            return Look(
                (0.0, 0.0), 0.0, 0.0, (1.0, 1.0, 1.0), 1.0, 1.0, 0.0, 0.0, 0, (0.0, 0.0), 0.0, 0.0, 0.0
            )
        warm = rng.uniform(-0.15, 0.15)
        a = rng.uniform(0, 2 * np.pi)
        return Look(
            light_dir=(float(np.cos(a)), float(np.sin(a))),
            light_amp=float(rng.uniform(0.05, 0.35)),
            vignette=float(rng.uniform(0.0, 0.35)),
            gains=(
                float(1 - warm + rng.normal(0, 0.03)),
                float(1 + rng.normal(0, 0.03)),
                float(1 + warm + rng.normal(0, 0.03)),
            ),
            brightness=float(rng.uniform(0.6, 1.2)),
            gamma=float(rng.uniform(0.8, 1.25)),
            blur=float(rng.choice(np.array([0.0, rng.uniform(0.3, 1.6)]))),
            noise=float(rng.uniform(1, 7)),
            jpeg=int(rng.choice(np.array([0, rng.integers(45, 95)]))),
            shadow_mm=(float(rng.normal(0, 0.25)), float(rng.normal(0.15, 0.25))),
            shadow_strength=float(rng.uniform(0.15, 0.45)),
            glare=float(rng.uniform(0, 0.45)) if rng.random() < 0.5 else 0.0,
            k1=float(rng.normal(0, 0.04)) if rng.random() < 0.6 else 0.0,
        )


# --------------------------------------------------------------------------- renderer


@dataclass
class _Drawn:
    placement: Placement
    fs: FaceSet
    hc: np.ndarray
    quad: np.ndarray
    roi: tuple[int, int, int, int]  # x0, y0, x1, y1 clipped


class Renderer:
    """A fixed camera, table surface and look; renders any set of placements and arms."""

    def __init__(
        self,
        rng: np.random.Generator,
        width: int,
        height: int,
        table: Table,
        view: np.ndarray,
        look: Look,
        surface: str | None = None,
        clutter_items: bool = True,
    ):
        self.width, self.height, self.table, self.view, self.look = width, height, table, view, look
        self.px_per_mm = float(np.sqrt(abs(np.linalg.det(self._jac(table.width / 2, table.height / 2)))))
        # texture only the visible part of the table, at about the image's resolution
        corners_img = np.array([[0, 0], [width, 0], [width, height], [0, height]], float)
        seen = apply_h(np.linalg.inv(view), corners_img)
        x0, y0 = np.clip(seen.min(axis=0) - 5, 0, [table.width, table.height])
        x1, y1 = np.clip(seen.max(axis=0) + 5, 0, [table.width, table.height])
        side = float(max(x1 - x0, y1 - y0, 10.0))
        tex_px = int(np.clip(side * self.px_per_mm, 64, max(width, height)))
        tex = textures.table_texture(rng, side, tex_px, surface)
        to_tex = np.diag([tex_px / side, tex_px / side, 1.0]) @ _shift(-x0, -y0)
        m = _shift(-0.5, -0.5) @ view @ np.linalg.inv(to_tex) @ _shift(0.5, 0.5)
        warped = cv2.warpPerspective(
            tex, m, (width, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        if rng.random() < 0.5:  # a wooden rim round the playing surface
            rim_mm = float(rng.uniform(25, 60))
            inner = np.array(
                [
                    [rim_mm, rim_mm],
                    [table.width - rim_mm, rim_mm],
                    [table.width - rim_mm, table.height - rim_mm],
                    [rim_mm, table.height - rim_mm],
                ]
            )
            surface_mask = _fill(apply_h(view, inner), width, height)
            if surface_mask.min() < 255:  # the rim is in view
                r = min(tex_px, 256)
                rim_tex = textures.table_texture(rng, side, r, "wood")
                rim = cv2.warpPerspective(
                    rim_tex,
                    m @ np.diag([tex_px / r, tex_px / r, 1.0]),
                    (width, height),
                    flags=cv2.INTER_LINEAR,
                    borderMode=cv2.BORDER_REPLICATE,
                )
                s_a = (surface_mask.astype(np.float32) * (1 / 255))[..., None]
                warped = warped * s_a + rim * (1 - s_a) * np.float32(rng.uniform(0.7, 1.1))
        table_quad = apply_h(
            view, np.array([[0, 0], [table.width, 0], [table.width, table.height], [0, table.height]])
        )
        on_table = _fill(table_quad, width, height)
        self.base: npt.NDArray[np.float32]
        if on_table.min() == 255:  # the table fills the picture
            self.base = cast("npt.NDArray[np.float32]", warped)
        else:
            if rng.random() < 0.7:  # floor boards / carpet / tiles around the table, out of focus
                fpx = max(64, max(width, height) // 4)
                kind = str(rng.choice(["wood", "carpet", "laminate", "rug"]))
                floor = textures.table_texture(rng, fpx * 4 / self.px_per_mm * 0.8, fpx, kind)
                bg = cast(
                    "npt.NDArray[np.float32]",
                    cv2.resize(floor, (width, height), interpolation=cv2.INTER_LINEAR),
                )
                bg *= np.float32(rng.uniform(0.35, 0.7))
            else:
                bg = textures.background(rng, height, width)
            # the floor lies in the table's shadow near its edge
            k = max(3, int(0.06 * max(width, height)) | 1)
            shadow = cv2.blur(on_table, (k, k)).astype(np.float32) * (0.6 / 255)
            bg *= (1 - shadow)[..., None]
            a = (on_table.astype(np.float32) * (1 / 255))[..., None]
            self.base = cast("npt.NDArray[np.float32]", warped * a + bg * (1 - a))
        for item in clutter(rng, table, view) if clutter_items else ():
            item.draw(self.base, view, self.look, self.px_per_mm)
        if look.noise > 0:  # fine grain of the surface at the image's own resolution
            self.base += _noise(rng, self.base.shape[:2] + (1,)) * np.float32(3.0)
        # light field: gradient + vignette (smooth: computed coarse, then resized)
        lh, lw = max(2, height // 8), max(2, width // 8)
        yy, xx = np.mgrid[0:lh, 0:lw].astype(np.float32)
        nx, ny = (xx + 0.5 - lw / 2) / (lw / 2), (yy + 0.5 - lh / 2) / (lh / 2)
        grad = 1 + look.light_amp * (look.light_dir[0] * nx + look.light_dir[1] * ny) / 2
        vig = 1 - look.vignette * (nx**2 + ny**2) / 2
        light = (grad * vig * look.brightness).astype(np.float32)
        self.light = cv2.resize(light, (width, height), interpolation=cv2.INTER_LINEAR)
        self.glare_centres = [
            (rng.uniform(0, width), rng.uniform(0, height), rng.uniform(0.05, 0.25) * max(width, height))
            for _ in range(rng.integers(1, 3))
        ]
        self._layer: tuple[Any, ...] | None = None
        self.field = (self.light[..., None] * np.array(look.gains, np.float32)[None, None, :]).astype(
            np.float32
        )
        self.glare_field: np.ndarray | None = None
        if look.glare > 0:
            gh, gw = max(2, height // 8), max(2, width // 8)
            gy, gx = np.ogrid[0:gh, 0:gw]
            g = np.zeros((gh, gw), np.float32)
            for cx, cy, radius in self.glare_centres:
                g += np.exp(-((gx * 8 - cx) ** 2 + (gy * 8 - cy) ** 2) / (2 * radius * radius)).astype(
                    np.float32
                )
            self.glare_field = cv2.resize(np.clip(g, 0, 1) * np.float32(look.glare), (width, height))
        self.distortion = None
        if look.k1 != 0.0:
            self.distortion = LensDistortion(
                k1=look.k1, k2=0.0, cx=width / 2, cy=height / 2, norm=float(np.hypot(width, height) / 2)
            )
            # the map is smooth: compute it on a coarse grid and interpolate (error << 0.01 px)
            step = 4
            gy = np.arange(0, height + step, step, dtype=np.float32)
            gx = np.arange(0, width + step, step, dtype=np.float32)
            c = np.array(
                [width / 2 - 0.5, height / 2 - 0.5], np.float32
            )  # pixel-index coordinates of the centre
            dx, dy = gx[None, :] - c[0], gy[:, None] - c[1]
            f = 1 + np.float32(look.k1) * (dx * dx + dy * dy) / np.float32(self.distortion.norm**2)
            cmx, cmy = (c[0] + dx * f).astype(np.float32), (c[1] + dy * f).astype(np.float32)
            # sample the coarse grid at every pixel: pixel k sits at k/step on the coarse grid
            mx = np.arange(width, dtype=np.float32)[None, :].repeat(height, 0) / step
            my = np.arange(height, dtype=np.float32)[:, None].repeat(width, 1) / step
            self.map_x = cv2.remap(cmx, mx, my, cv2.INTER_LINEAR)
            self.map_y = cv2.remap(cmy, mx, my, cv2.INTER_LINEAR)

    def _jac(self, x: float, y: float) -> np.ndarray:
        e = 1.0
        p = apply_h(self.view, np.array([[x, y], [x + e, y], [x, y + e]]))
        return np.stack([p[1] - p[0], p[2] - p[0]], axis=1)

    # ------------------------------------------------------------------ cards

    def _face(self, fs: FaceSet, p: Placement, px_h: float) -> tuple[np.ndarray, float]:
        """Face (or back) image, pre-shrunk with area averaging when drawn much smaller."""
        src = fs.faces[p.card] if p.face_up else fs.back
        h = src.shape[0]
        if px_h >= 0.7 * h:
            return src, 1.0
        target = int(max(24, np.ceil(px_h * 1.4 / 16) * 16))
        key = (fs.design, p.card if p.face_up else "back", target)
        img = _SHRUNK.get(key)
        if img is None:
            w = max(8, int(round(src.shape[1] * target / h)))
            img = cv2.resize(src, (w, target), interpolation=cv2.INTER_AREA)
            if len(_SHRUNK) > 3000:  # ~100 MB at most
                _SHRUNK.clear()
            _SHRUNK[key] = img
        return img, img.shape[0] / h

    def _card_h(self, fs: FaceSet, p: Placement) -> np.ndarray:
        """Face px (full-size face coordinates) → image px."""
        w, h = fs.size
        s = CARD_H_MM / h
        r = rot(p.angle) * s
        t = np.array([p.x, p.y]) - r @ np.array([w / 2, h / 2])
        a = np.array([[r[0, 0], r[0, 1], t[0]], [r[1, 0], r[1, 1], t[1]], [0, 0, 1]])
        return np.asarray(self.view @ a)

    def _paste(
        self, canvas: np.ndarray, ids: np.ndarray, i: int, p: Placement, fs: FaceSet, rng: np.random.Generator
    ) -> _Drawn | None:
        hc = self._card_h(fs, p)
        w, h = fs.size
        quad = apply_h(hc, np.array([[0, 0], [w, 0], [w, h], [0, h]], float))
        px_h = float(np.linalg.norm(quad[3] - quad[0]))
        look = self.look
        # shadow offset grows with the height above the table (3 mm for a card lying flat)
        height_mm = 3.0 + min(p.lift, 40.0)
        sdx, sdy = (
            look.shadow_mm[0] * height_mm * self.px_per_mm,
            look.shadow_mm[1] * height_mm * self.px_per_mm,
        )
        pad = int(np.ceil(abs(sdx) + abs(sdy) + 2 + 0.016 * px_h + 0.15 * p.lift * self.px_per_mm))
        bx0, by0, bx1, by1 = _poly_bbox(quad)
        x0, y0 = max(0, bx0 - pad), max(0, by0 - pad)
        x1, y1 = min(self.width, bx1 + pad), min(self.height, by1 + pad)
        if x1 <= x0 or y1 <= y0:
            return None
        img, k = self._face(fs, p, px_h)
        m = _shift(-x0 - 0.5, -y0 - 0.5) @ hc @ np.diag([1 / k, 1 / k, 1.0]) @ _shift(0.5, 0.5)
        rw, rh = x1 - x0, y1 - y0
        warped = cv2.warpPerspective(
            img, m, (rw, rh), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0)
        )
        a = warped[:, :, 3].astype(np.float32) * (1 / 255)
        roi = canvas[y0:y1, x0:x1]
        if look.shadow_strength > 0 and p.shadow:
            sh = np.zeros_like(a)
            ix, iy = int(round(sdx)), int(round(sdy))
            if abs(ix) < rw and abs(iy) < rh:  # (a card clipped to a sliver at the image edge may not be)
                src = a[max(0, -iy) : rh - max(0, iy), max(0, -ix) : rw - max(0, ix)]
                sh[max(0, iy) : max(0, iy) + src.shape[0], max(0, ix) : max(0, ix) + src.shape[1]] = src
            kb = max(1, int(0.016 * px_h + 0.15 * p.lift * self.px_per_mm) | 1)
            sh = cv2.blur(sh, (kb, kb))
            strength = look.shadow_strength * (0.5 if p.lift > 0 else 1.0)  # held cards: one soft shadow
            roi *= (1 - strength * sh)[..., None]
        col = warped[:, :, :3].astype(np.float32)
        if look.light_amp > 0:  # slight bend: a brightness ramp across the card
            ang = rng.uniform(0, 2 * np.pi)
            k = rng.uniform(0, 0.12) / max(rw, rh)
            rx = (np.arange(rw, dtype=np.float32) - rw / 2) * np.float32(np.cos(ang) * k)
            ry = (np.arange(rh, dtype=np.float32) - rh / 2) * np.float32(np.sin(ang) * k)
            col *= (1 + ry[:, None] + rx[None, :])[..., None]
        roi *= (1 - a)[..., None]
        roi += col * a[..., None]
        ids[y0:y1, x0:x1][a > 0.5] = i
        return _Drawn(p, fs, hc, quad, (x0, y0, x1, y1))

    # ------------------------------------------------------------------ arms

    def _draw_arm(self, canvas: np.ndarray, ids: np.ndarray, arm: Arm, rng: np.random.Generator) -> None:
        polys = arm_polygons(arm)
        img_polys = [(apply_h(self.view, p), tag) for p, tag in polys]
        allp = np.vstack([p for p, _ in img_polys])
        off = arm.height_mm * self.px_per_mm
        dx, dy = self.look.shadow_mm[0] * off, self.look.shadow_mm[1] * off
        kb = max(3, int(off * 0.3) | 1)
        pad = int(abs(dx) + abs(dy) + kb) + 4
        x0, y0, x1, y1 = _poly_bbox(allp)
        x0, y0 = max(0, x0 - pad), max(0, y0 - pad)
        x1, y1 = min(self.width, x1 + pad), min(self.height, y1 + pad)
        if x1 <= x0 or y1 <= y0:
            return
        rw, rh = x1 - x0, y1 - y0
        skin = np.zeros((rh, rw), np.uint8)
        sleeve = np.zeros((rh, rw), np.uint8)
        for p, tag in img_polys:
            q = ((p - [x0 + 0.5, y0 + 0.5]) * 16).round().astype(np.int32)
            cv2.fillPoly(sleeve if tag == "sleeve" else skin, [q], 255, cv2.LINE_AA, 4)
        skin = cast("npt.NDArray[np.uint8]", cv2.GaussianBlur(skin, (3, 3), 0.8))
        sleeve = cast("npt.NDArray[np.uint8]", cv2.GaussianBlur(sleeve, (3, 3), 0.8))
        mask = np.maximum(skin, sleeve).astype(np.float32) / 255
        sk = skin.astype(np.float32) / 255 * (1 - sleeve.astype(np.float32) / 255)
        roi = canvas[y0:y1, x0:x1]
        if self.look.shadow_strength > 0:
            mt = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
            sh = cv2.warpAffine(mask, mt, (rw, rh))
            sh = cv2.blur(sh, (kb, kb))
            roi *= (1 - min(0.7, self.look.shadow_strength * 1.5) * sh)[..., None]
        # round shading across the arm (a cylinder lit from above) and darker towards the body
        p0 = apply_h(self.view, np.array([arm.start]))[0] - [x0, y0]
        p1 = apply_h(self.view, np.array([arm.tip]))[0] - [x0, y0]
        u = (p1 - p0) / (np.linalg.norm(p1 - p0) + 1e-9)
        half = arm.width / 2 * self.px_per_mm * 1.2
        xs = np.arange(rw, dtype=np.float32)[None, :] - np.float32(p0[0])
        ys = np.arange(rh, dtype=np.float32)[:, None] - np.float32(p0[1])
        across = np.abs(xs * np.float32(-u[1]) + ys * np.float32(u[0])) / np.float32(half)
        along = (xs * np.float32(u[0]) + ys * np.float32(u[1])) / np.float32(np.linalg.norm(p1 - p0) + 1e-9)
        shade = (0.6 + 0.45 * np.sqrt(np.clip(1 - across**2, 0, 1))) * (0.85 + 0.2 * np.clip(along, 0, 1))
        shade = shade[..., None]
        colour = (
            np.array(arm.skin, np.float32)[None, None, :] * sk[..., None]
            + np.array(arm.sleeve, np.float32)[None, None, :] * (mask - sk)[..., None]
        )
        colour = colour / np.maximum(mask, 1e-3)[..., None] * shade
        colour += _noise(rng, colour.shape) * np.float32(3)
        roi *= (1 - mask)[..., None]
        roi += colour * mask[..., None]
        ids[y0:y1, x0:x1][mask > 0.5] = HAND_ID

    # ------------------------------------------------------------------ frame

    def render(
        self,
        placements: list[Placement],
        arms: list[Arm],
        rng: np.random.Generator,
        *,
        jpeg: bool = True,
        keep_ids: bool = False,
        static: int = 0,
    ) -> Scene:
        """Draw placements (bottom first) and arms, apply the look, and label every card.

        ``static``: the first ``static`` placements are the same objects as in an earlier call with
        the same prefix (a video's unchanged piles); their layer is then reused, not redrawn.
        """
        key = tuple(id(p) for p in placements[:static])
        if static and self._layer is not None and self._layer[0] == key:
            canvas, ids, drawn = self._layer[1].copy(), self._layer[2].copy(), list(self._layer[3])
        else:
            canvas = self.base.copy()
            ids = np.full((self.height, self.width), BACKGROUND_ID, np.int16)
            drawn = []
            for i, p in enumerate(placements[:static]):
                drawn.append(self._paste(canvas, ids, i, p, load_faces(p.design), rng))
            if static:
                self._layer = (key, canvas.copy(), ids.copy(), list(drawn), list(placements[:static]))
        for i, p in enumerate(placements[static:], start=static):
            drawn.append(self._paste(canvas, ids, i, p, load_faces(p.design), rng))
        for arm in arms:
            self._draw_arm(canvas, ids, arm, rng)
        labels = [self._label(i, d, ids) for i, d in enumerate(drawn) if d is not None]
        image = self._finish(canvas, ids, rng, jpeg)
        if self.distortion is not None:
            self._distort_labels(labels)
        design = placements[0].design if placements else ""
        return Scene(image, labels, design, self.view, self.distortion, ids if keep_ids else None)

    def _label(self, i: int, d: _Drawn, ids: np.ndarray) -> CardLabel:
        p, fs = d.placement, d.fs
        x0, y0, x1, y1 = d.roi
        own = ids[y0:y1, x0:x1] == i
        seen = bool(own.any())

        def frac(poly: np.ndarray, alpha: float = 1.0) -> float:
            """Share of the polygon's area (times ``alpha``) whose pixels this card owns."""
            total = _poly_area(poly) * alpha
            if total <= 0 or not seen:
                return 0.0
            bx0, by0, bx1, by1 = _poly_bbox(poly)
            cx0, cy0, cx1, cy1 = max(bx0, x0), max(by0, y0), min(bx1, x1), min(by1, y1)
            if cx1 <= cx0 or cy1 <= cy0:
                return 0.0
            r = _raster(poly, cx0, cy0, cx1 - cx0, cy1 - cy0)
            vis = (r & own[cy0 - y0 : cy1 - y0, cx0 - x0 : cx1 - x0]).sum()
            return float(min(1.0, vis / total))

        alpha_frac = _alpha_fraction(fs, p.card if p.face_up else "back")
        indices = []
        for corner, (bx1_, by1_, bx2_, by2_) in fs.index_boxes(p.card).items():
            q = apply_h(d.hc, np.array([[bx1_, by1_], [bx2_, by1_], [bx2_, by2_], [bx1_, by2_]], float))
            vis = frac(q) if p.face_up else 0.0
            indices.append(IndexLabel(corner, q.round(3).tolist(), _box(q), round(vis, 4)))
        return CardLabel(
            card=p.card,
            class_id=class_id(p.card),
            face_up=p.face_up,
            quad=d.quad.round(3).tolist(),
            visible=round(frac(d.quad, alpha_frac), 4),
            corners=indices,
            design=p.design,
            role=p.role,
            seat=p.seat,
            z=i,
        )

    def _distort_labels(self, labels: list[CardLabel]) -> None:
        """Move every label point through the lens (one vectorised call for all points)."""
        dist = self.distortion
        assert dist is not None
        t = np.linspace(0, 1, 5)
        chunks: list[np.ndarray] = []
        for lab in labels:
            chunks.append(np.array(lab.quad))
            for ix in lab.corners:
                q = np.array(ix.quad)
                chunks.append(q)
                chunks.append(np.vstack([q[k] + (q[(k + 1) % 4] - q[k]) * t[:, None] for k in range(4)]))
        if not chunks:
            return
        out = dist.distort(np.vstack(chunks), iters=10)
        pos = 0

        def take(n: int) -> np.ndarray:
            nonlocal pos
            pos += n
            return out[pos - n : pos]

        for lab in labels:
            lab.quad = take(4).round(3).tolist()
            for ix in lab.corners:
                ix.quad = take(4).round(3).tolist()
                ix.box = _box(take(20))

    def _finish(
        self, canvas: np.ndarray, ids: np.ndarray, rng: np.random.Generator, jpeg: bool
    ) -> np.ndarray:
        look = self.look
        img = canvas
        if self.glare_field is not None:  # specular highlights on the glossy cards only
            g = self.glare_field * (ids >= 0)
            img += (255 - img) * g[..., None]
        np.multiply(img, self.field, out=img)
        if self.distortion is not None:
            img = cv2.remap(img, self.map_x, self.map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        if look.blur > 0:
            sigma = look.blur * max(self.width, self.height) / 1000
            img = cv2.GaussianBlur(img, (0, 0), sigma)
        if look.noise > 0:
            img += _noise(rng, img.shape) * np.float32(look.noise * 0.6)
            img += _noise(rng, img.shape[:2] + (1,)) * np.float32(look.noise * 0.4)
        out = cast("npt.NDArray[np.uint8]", np.clip(img, 0, 255).astype(np.uint8))
        if look.gamma != 1.0:
            lut = (255 * np.power(np.arange(256) / 255, look.gamma)).round().astype(np.uint8)
            out = cast("npt.NDArray[np.uint8]", cv2.LUT(out, lut))
        if jpeg and look.jpeg:
            ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, look.jpeg])
            out = cast("npt.NDArray[np.uint8]", cv2.imdecode(buf, cv2.IMREAD_COLOR))
        return out


@lru_cache(maxsize=1)
def _noise_bank() -> np.ndarray:
    """A fixed block of standard normal noise (drawing fresh noise per image is the slowest step)."""
    return np.random.default_rng(12345).standard_normal(1 << 23, dtype=np.float32)


def _noise(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normal noise of ``shape``: a slice of the bank at a random offset, flipped at random."""
    bank = _noise_bank()
    n = int(np.prod(shape))
    if n > len(bank):
        return rng.standard_normal(shape, dtype=np.float32)
    start = int(rng.integers(0, len(bank) - n + 1))
    out = bank[start : start + n].reshape(shape)
    return out[::-1] if rng.random() < 0.5 else out


def _box(q: np.ndarray) -> list[float]:
    return [
        round(float(q[:, 0].min()), 3),
        round(float(q[:, 1].min()), 3),
        round(float(q[:, 0].max()), 3),
        round(float(q[:, 1].max()), 3),
    ]


def render_scene(seed: int, **options: Any) -> Scene:
    """Render one random scene, deterministic by ``seed``.

    Options: ``width``/``height`` (default 1280×960), ``designs`` (names to draw from; default
    available TRAIN designs), ``effects`` (photometric and lens nuisances, default True), ``arms``
    (number of hands/arms, default random 0–2), ``mode`` (``table`` full frame, ``tile`` a zoomed
    part, ``closeup`` a fanned hand, ``loose`` a few loose cards photographed at an angle), ``card_px`` (card height range in px for tile/closeup),
    ``keep_ids`` (return the id map), ``jpeg`` (JPEG round trip, default True), ``placements``
    (explicit list of :class:`Placement`; skips the random layout), ``printed`` (chance, default 0, that
    1–3 printed sheets lie on the table: pages, score sheets, labels; unlabelled negatives; at 0 the
    scene is unchanged), ``markers`` (the corner markers' size in mm, :mod:`models.synth.markers`;
    default none: the same scenes as before) with ``markers_covered`` ({id: share hidden}).
    """
    rng = np.random.default_rng(seed)
    width = int(options.get("width", 1280))
    height = int(options.get("height", 960))
    names = list(options.get("designs") or available_designs())
    design = names[int(rng.integers(len(names)))]
    second = names[int(rng.integers(len(names)))] if rng.random() < 0.15 else None
    mode = options.get("mode", "table")
    table = Table(float(rng.uniform(800, 1000)), float(rng.uniform(800, 1000)))
    effects = bool(options.get("effects", True))
    look = Look.random(rng, effects)
    if "placements" in options:
        placements = list(options["placements"])
    elif mode == "closeup":
        placements = closeup_layout(rng, table, design)
    elif mode == "loose":
        placements = loose_layout(rng, table, design)
    else:
        placements = random_layout(rng, table, design, second)
    view = _view(rng, table, width, height, mode, placements, options.get("card_px"))
    renderer = Renderer(rng, width, height, table, view, look)
    if options.get("markers"):
        draw_table_markers(
            renderer.base,
            view,
            (table.width, table.height),
            float(options["markers"]),
            renderer.px_per_mm,
            options.get("markers_covered"),
        )
    printed = float(options.get("printed", 0.0))
    if printed > 0 and rng.random() < printed:  # no draw at all at 0: the same scenes as before
        spots = [(p.x, p.y) for p in placements]
        count = int(rng.integers(1, 4))
        lay_sheets(renderer.base, view, (table.width, table.height), rng, renderer.px_per_mm, spots, count)
    n_arms = options.get("arms")
    if n_arms is None:
        n_arms = int(rng.choice([0, 0, 0, 0, 1])) if mode == "loose" else int(rng.choice([0, 0, 1, 1, 2]))
    n_arms = int(n_arms)
    arms = []
    for _ in range(n_arms):
        seat = SEAT_NAMES[int(rng.integers(4))]
        target = None
        near = [p for p in placements if p.seat == seat or p.role in ("captured", "hand")]
        if near and rng.random() < 0.7:  # reach over some of this player's (or the centre's) cards
            p = near[int(rng.integers(len(near)))]
            target = np.array([p.x, p.y]) + rng.normal(0, 30, 2)
        arms.append(random_arm(rng, table, seat, target))
    scene = renderer.render(
        placements,
        arms,
        rng,
        jpeg=bool(options.get("jpeg", True)),
        keep_ids=bool(options.get("keep_ids", False)),
    )
    scene.design = design
    scene.meta = {
        "seed": seed,
        "mode": mode,
        "table_mm": [table.width, table.height],
        "designs": sorted({p.design for p in placements}),
    }
    return scene


def _view(
    rng: np.random.Generator,
    table: Table,
    width: int,
    height: int,
    mode: str,
    placements: list[Placement],
    card_px: tuple[float, float] | None,
) -> np.ndarray:
    """Table mm → image px for the requested framing."""
    turn = float(rng.choice([0, 90, 180, -90]) + rng.normal(0, 4)) if mode != "table" else None
    if mode == "table":
        fill = None
        if card_px is not None:  # whole table, scaled so that a card is card_px high
            target_h = float(rng.uniform(*card_px))
            fill = target_h * max(table.width, table.height) / (CARD_H_MM * min(width, height))
        return camera_homography(rng, table, width, height, fill=fill)
    # zoomed: a camera whose card height is card_px, centred on some cards
    lo, hi = card_px or (60.0, 400.0)
    if mode == "closeup":
        lo = max(lo, 150.0)
    if mode == "loose":
        lo, hi = max(lo, 100.0), min(hi, 350.0)
    target_h = float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
    s = target_h / CARD_H_MM
    big_w = table.width * s * 1.2
    big_h = table.height * s * 1.2
    tilt = float(rng.uniform(0.01, 0.12))  # phone photos are seldom square on
    cam = camera_homography(rng, table, int(big_w), int(big_h), tilt=tilt, fill=1 / 1.2, turn=turn)
    up = [p for p in placements if p.face_up]
    pool = up if up and rng.random() < 0.85 else placements  # mostly frame cards that can be read
    if pool:
        p = pool[int(rng.integers(len(pool)))]
        centre = np.array([p.x, p.y]) + rng.normal(0, 10 if mode == "loose" else 40, 2)
    else:
        centre = np.array([table.width / 2, table.height / 2])
    c_img = apply_h(cam, centre[None])[0]
    view = _shift(width / 2 - c_img[0], height / 2 - c_img[1]) @ cam
    if mode == "loose":  # a phone held at an angle: turn the camera about its centre
        focal = float(rng.uniform(0.7, 1.1)) * max(width, height)
        view = oblique(view, width, height, float(rng.uniform(10, 40)), float(rng.uniform(0, 360)), focal)
        c_img = apply_h(view, centre[None])[0]
        view = _shift(width / 2 - c_img[0], height / 2 - c_img[1]) @ view
    return np.asarray(view)


def oblique(
    view: np.ndarray, width: int, height: int, tilt_deg: float, azimuth_deg: float, focal: float | None = None
) -> np.ndarray:
    """``view`` seen by the same camera turned ``tilt_deg`` away from straight down (about the image
    centre; ``focal`` in px, default the image diagonal): the homography ``K R K⁻¹`` of a rotating camera."""
    f = float(focal or np.hypot(width, height))
    k = np.array([[f, 0, width / 2], [0, f, height / 2], [0, 0, 1.0]])
    az = np.deg2rad(azimuth_deg)
    axis = np.array([np.cos(az), np.sin(az), 0.0])
    r, _ = cv2.Rodrigues(axis * np.deg2rad(tilt_deg))
    return np.asarray(k @ r @ np.linalg.inv(k) @ view)
