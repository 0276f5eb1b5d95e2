"""Rendered photos of the printed ChArUco board (:mod:`calibration.lens`) through a lens whose
distortion is known, for checking ``tractorcam calibrate lens``.

The board's page (paper round the board) lies in a plane; ``view`` maps the page's mm (origin at the
page's top-left corner, the board :data:`PAGE_MARGIN_MM` in from it) to undistorted image px. Without
a :class:`~models.synth.scene.Look` the page is drawn on a plain grey ground and only the lens is
applied (exact and fast, for tests); with one the project's renderer adds its light, blur, noise and
JPEG (and its lens, ``k1`` only).
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.lens import SQUARE_MM, SQUARES, board
from calibration.table import LensDistortion
from models.synth.layout import Table
from models.synth.scene import Look, Renderer

#: White paper round the board on the printed page, mm.
PAGE_MARGIN_MM = 15.0
PAPER = 232.0
INK = 28.0


def page_mm() -> tuple[float, float]:
    """The page's width and height, mm (the board with its paper margin)."""
    return SQUARES[0] * SQUARE_MM + 2 * PAGE_MARGIN_MM, SQUARES[1] * SQUARE_MM + 2 * PAGE_MARGIN_MM


def board_views(
    rng: np.random.Generator, n: int, width: int, height: int, fill: tuple[float, float] = (0.45, 0.7)
) -> list[np.ndarray]:
    """``n`` poses of the page (page mm → image px), as a person takes them: the page spans ``fill``
    of the frame's width, turned up to 30°, seen up to about 20° obliquely, its middle at the frame's
    middle in the first photo and pushed towards each corner of the frame in turn after."""
    pw, ph = page_mm()
    corners = np.array([[0, 0], [pw, 0], [pw, ph], [0, ph]], np.float64)
    towards = [(0.0, 0.0), (-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
    views = []
    for j in range(n):
        s = float(rng.uniform(*fill)) * width / pw
        a = np.deg2rad(float(rng.uniform(-30, 30)))
        rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        quad = (corners - [pw / 2, ph / 2]) * s @ rot.T
        quad += rng.normal(0, 0.04 * s * pw, quad.shape)  # the page seen obliquely
        lo, hi = quad.min(axis=0), quad.max(axis=0)
        room = np.maximum(np.array([width, height]) / 2 - 10 - (hi - lo) / 2, 0)
        dx, dy = towards[j % len(towards)]
        mid = np.array([width, height]) / 2 + np.array([dx, dy]) * room * float(rng.uniform(0.7, 1.0))
        quad += mid - (lo + hi) / 2
        views.append(cv2.getPerspectiveTransform(corners.astype(np.float32), quad.astype(np.float32)))
    return [v.astype(np.float64) for v in views]


def _page_patch(k: float) -> np.ndarray:
    """The page at ``k`` px per mm (float32 grey levels, paper and ink)."""
    pw, ph = page_mm()
    patch = np.full((int(round(ph * k)), int(round(pw * k))), PAPER, np.float32)
    m = int(round(PAGE_MARGIN_MM * k))
    w, h = int(round(SQUARES[0] * SQUARE_MM * k)), int(round(SQUARES[1] * SQUARE_MM * k))
    ink = board().generateImage((w, h), marginSize=0, borderBits=1).astype(np.float32) / 255
    patch[m : m + h, m : m + w] = INK + (PAPER - INK) * ink
    return patch


def _warp_page(view: np.ndarray, width: int, height: int, k: float) -> tuple[np.ndarray, np.ndarray]:
    """The page and its coverage warped into an undistorted ``width`` × ``height`` image (OpenCV's
    pixel-centre convention handled: page patch px → page mm → image px)."""
    k = round(SQUARE_MM * k) / SQUARE_MM  # whole px per square (OpenCV draws some other sizes wrong)
    patch = _page_patch(k)
    to_mm = np.array([[1 / k, 0, 0], [0, 1 / k, 0], [0, 0, 1.0]])
    shift_in = np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1.0]])
    shift_out = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1.0]])
    m = shift_out @ view @ to_mm @ shift_in
    warped = cv2.warpPerspective(patch, m, (width, height), flags=cv2.INTER_AREA, borderValue=0.0)
    mask = cv2.warpPerspective(
        np.ones(patch.shape, np.float32), m, (width, height), flags=cv2.INTER_LINEAR, borderValue=0.0
    )
    return warped, mask


def distort_image(image: np.ndarray, lens: LensDistortion) -> np.ndarray:
    """``image`` (undistorted) as the lens records it: each recorded pixel samples the undistorted
    image at :meth:`LensDistortion.undistort` of its centre (the formula, in float32, for speed)."""
    h, w = image.shape[:2]
    dx = (np.arange(w, dtype=np.float32) + np.float32(0.5 - lens.cx))[None, :]
    dy = (np.arange(h, dtype=np.float32) + np.float32(0.5 - lens.cy))[:, None]
    r2 = (dx * dx + dy * dy) / np.float32(lens.norm**2)
    f = 1 + np.float32(lens.k1) * r2 + np.float32(lens.k2) * r2 * r2
    mx = (np.float32(lens.cx - 0.5) + dx * f).astype(np.float32)
    my = (np.float32(lens.cy - 0.5) + dy * f).astype(np.float32)
    return cv2.remap(image, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def board_photo(
    view: np.ndarray,
    width: int,
    height: int,
    k1: float = 0.0,
    k2: float = 0.0,
    *,
    look: Look | None = None,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """A BGR photo of the page seen through ``view`` and a lens ``k1``, ``k2`` (centred, ``norm``
    half the diagonal). With ``look`` (and ``rng``): the renderer's light, blur, noise and JPEG, and
    ``k1`` as the renderer's lens (``k2`` must be 0)."""
    k = max(4.0, 2.0 * float(np.sqrt(abs(np.linalg.det(view[:2, :2])))))
    if look is None:
        warped, mask = _warp_page(view, width, height, k)
        flat = warped * mask + 70.0 * (1 - mask)
        lens = LensDistortion(
            k1=k1, k2=k2, cx=width / 2, cy=height / 2, norm=float(np.hypot(width, height) / 2)
        )
        grey = distort_image(flat, lens) if (k1, k2) != (0.0, 0.0) else flat
        return np.asarray(cv2.cvtColor(np.clip(grey, 0, 255).astype(np.uint8), cv2.COLOR_GRAY2BGR))
    if k2 != 0.0:
        raise ValueError("the renderer's lens has k1 only")
    gen = rng if rng is not None else np.random.default_rng(0)
    look.k1 = k1
    pw, ph = page_mm()
    renderer = Renderer(gen, width, height, Table(pw, ph), view, look, clutter_items=False)
    warped, mask = _warp_page(view, width, height, k)
    a = mask[..., None]
    renderer.base *= 1 - a
    renderer.base += warped[..., None] * a
    return np.asarray(renderer.render([], [], gen).image, np.uint8)


def board_photos(
    seed: int,
    k1: float,
    n: int = 5,
    *,
    width: int = 1920,
    height: int = 1440,
    fill: tuple[float, float] = (0.45, 0.7),
    effects: bool = True,
) -> list[np.ndarray]:
    """``n`` photos deterministic by ``seed`` (:func:`board_views`), one camera and look, lens ``k1``;
    ``effects=False``: plain (:func:`board_photo` without a look)."""
    rng = np.random.default_rng(seed)
    look = Look.random(rng) if effects else None
    return [
        board_photo(v, width, height, k1, look=look, rng=rng)
        for v in board_views(rng, n, width, height, fill)
    ]
