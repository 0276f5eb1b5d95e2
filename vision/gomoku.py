"""Reading a gomoku board from above: the grid found, each intersection read as empty, black or
white, and a frame with something over the board (a hand, a sleeve, its shadow) told apart.

**Where the board is.** The table's corner markers give the camera's homography (the same
calibration as a card table, ``table.json``); the board is then looked at square, at
:data:`PX_PER_MM`, and its **own grid** is found there (:func:`find_grid`): the dark thin lines'
profile along each axis, matched by a comb of 15 evenly spaced teeth with nothing one pitch beyond
either end (a board's margin). The operator measures nothing.

**An intersection** is read from a disc of 0.3 pitch round it (:class:`BoardReader`): a stone hides
the cross of the two lines there; an empty point shows it. A hidden cross darker than the board by
:data:`BLACK_RATIO` is black, else white. Each point's board colour and cross are learned from the
first frames (the board empty) and kept up to date while the point stays empty.

**Something over the board.** No stone ever covers the middle of a grid cell (a stone's radius is
under half a pitch; a cell's middle lies 0.71 pitch from its corners), nor the like places on the
board's margin, half a pitch beyond the outer lines. A cell middle that does not
look like the board, after the frame's overall light is divided out, means a hand, an arm or its
shadow: the frame is ``busy`` and the tracker waits (:mod:`vision.gomoku_track`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table import TableGeometry
from gomoku.board import SIZE, Point

#: The square view of the board: px per table mm.
PX_PER_MM: Final = 1.6
#: The pitches a board's grid may have (mm between lines).
PITCH_MM: Final = (18.0, 36.0)
#: An occupied point's board-relative lightness below this is black.
BLACK_RATIO: Final = 0.55
#: A point whose cross shows less than this share of its empty contrast is covered.
CROSS_HIDDEN: Final = 0.35
#: A grid's weakest line must stand this far above the view's profile (in its standard deviations).
GRID_CONTRAST: Final = 0.0
#: A point's cross fainter than this (L*, 0–100) on the empty board cannot tell a stone: its
#: lightness decides instead, a stone being one that changes it by more than FAINT_CHANGE.
CROSS_MIN: Final = 3.0
FAINT_CHANGE: Final = 0.25
#: A cell middle whose colour differs from the board's there by more than this ΔE is covered.
CELL_DELTA_E: Final = 6.0


class GridNotFoundError(ValueError):
    """No 15-line grid in the view (the board is not where the markers say, or hidden)."""


@dataclass(frozen=True)
class Grid:
    """The grid in the square view (px): the a1 intersection, and the step to the next column (+x)
    and to the next row (-y: row 1 is at black's side, the bottom)."""

    x0: float
    y0: float
    step_x: float
    step_y: float
    score: float = 0.0

    def points(self) -> npt.NDArray[np.float64]:
        """(225, 2) px of every intersection, column-major from a1 (index = col × 15 + row)."""
        c, r = np.meshgrid(np.arange(SIZE), np.arange(SIZE), indexing="ij")
        return np.stack([self.x0 + c.ravel() * self.step_x, self.y0 - r.ravel() * self.step_y], axis=1)

    def cells(self) -> npt.NDArray[np.float64]:
        """(256, 2) px of every cell's middle, the ring of half cells round the grid included (on
        the board's margin: a hand drawn back over the edge covers the edge's points there), index
        ``c × 16 + r`` for the middle at column ``c - 0.5``, row ``r - 0.5``."""
        c, r = np.meshgrid(np.arange(SIZE + 1) - 0.5, np.arange(SIZE + 1) - 0.5, indexing="ij")
        return np.stack([self.x0 + c.ravel() * self.step_x, self.y0 - r.ravel() * self.step_y], axis=1)

    def nearest(self, x: float, y: float) -> Point:
        col = int(np.clip(round((x - self.x0) / self.step_x), 0, SIZE - 1))
        row = int(np.clip(round((self.y0 - y) / self.step_y), 0, SIZE - 1))
        return Point(col, row)


def view_maps(
    geometry: TableGeometry, px_per_mm: float = PX_PER_MM
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Where each pixel of the square view lies in the camera's frame (``cv2.remap``'s maps): the
    markers' homography and the lens's distortion, so the grid's lines are straight in the view."""
    w = int(round(geometry.table_width_mm * px_per_mm))
    h = int(round(geometry.table_height_mm * px_per_mm))
    v, u = np.mgrid[0:h, 0:w].astype(np.float64)
    mm = np.stack([u.ravel() / px_per_mm, v.ravel() / px_per_mm], axis=1)
    px = geometry.table_to_pixel(mm)
    return px[:, 0].reshape(h, w).astype(np.float32), px[:, 1].reshape(h, w).astype(np.float32)


def square_view(
    image: npt.NDArray[np.uint8],
    geometry: TableGeometry,
    px_per_mm: float = PX_PER_MM,
    maps: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]] | None = None,
) -> npt.NDArray[np.uint8]:
    """The whole table seen square, ``px_per_mm`` px per mm (``maps``: :func:`view_maps`'s, made
    once for a camera)."""
    mx, my = maps if maps is not None else view_maps(geometry, px_per_mm)
    return np.asarray(cv2.remap(image, mx, my, cv2.INTER_LINEAR), np.uint8)


def _comb(profile: npt.NDArray[np.float64], pitch: float) -> tuple[float, float]:
    """The best offset of a 15-tooth comb of ``pitch`` px on ``profile`` and its score: its weakest
    tooth first (every one of a grid's lines runs the board's length, so a comb shifted by a line,
    or of half or twice the pitch, has a tooth on no line), then the teeth's sum, less the two
    places one pitch beyond the ends (a grid's margin holds no line)."""
    n = len(profile)
    span = (SIZE - 1) * pitch
    offsets = np.arange(pitch, n - span - pitch - 1, 0.5)
    if len(offsets) == 0:
        return 0.0, -np.inf
    xs = np.arange(n, dtype=np.float64)

    def at(pos: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.interp(pos, xs, profile)

    each = np.stack([at(offsets + k * pitch) for k in range(SIZE)])
    beyond = at(offsets - pitch) + at(offsets + span + pitch)
    score = SIZE * each.min(axis=0) + 0.2 * each.sum(axis=0) - 0.5 * beyond
    best = int(np.argmax(score))
    return float(offsets[best]), float(score[best])


def _fine(profile: npt.NDArray[np.float64], first: float, pitch: float) -> tuple[float, float]:
    """The comb's first tooth and pitch refined together (to 0.05 px and 0.02 px) round the coarse
    match: the teeth's sum at its highest, every line weighing alike."""
    xs = np.arange(len(profile), dtype=np.float64)
    pitches = pitch + np.arange(-0.5, 0.5001, 0.02)
    offsets = first + np.arange(-2.0, 2.0001, 0.05)
    k = np.arange(SIZE, dtype=np.float64)
    pos = offsets[None, :, None] + pitches[:, None, None] * k[None, None, :]
    score = np.interp(pos, xs, profile).sum(axis=2)
    a, b = np.unravel_index(int(np.argmax(score)), score.shape)
    return float(offsets[b]), float(pitches[a])


def _match(profile: npt.NDArray[np.float64], px_per_mm: float) -> tuple[float, float]:
    """The comb (:func:`_comb`) best matching ``profile`` over the pitches :data:`PITCH_MM` allows,
    refined (:func:`_fine`): (first line, pitch) in px."""
    best = (0.0, 0.0, -np.inf)
    for pitch in np.arange(PITCH_MM[0] * px_per_mm, PITCH_MM[1] * px_per_mm, 0.25):
        first, score = _comb(profile, float(pitch))
        if score > best[2]:
            best = (first, float(pitch), score)
    if not np.isfinite(best[2]):
        raise GridNotFoundError("the view is too small for a board grid of 15 lines")
    return _fine(profile, best[0], best[1])


def find_grid(view: npt.NDArray[np.uint8], px_per_mm: float = PX_PER_MM) -> Grid:
    """The 15 × 15 grid in the square view: dark thin lines (a black-hat filter) and their profile
    along x (for the vertical lines) and along y, each matched by a comb (:func:`_match`). Twice:
    first with each column's (row's) mean over the whole view, which finds the board; then with its
    **median** over the board's span only (a grid line runs the board's whole length; a wood
    grain's streak, a plank's seam or a stone crosses only part of it). :class:`GridNotFoundError`
    when the lines do not stand out."""
    gray = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY)
    k = max(3, int(round(3.0 * px_per_mm)) | 1)
    lines = cv2.morphologyEx(gray, cv2.MORPH_BLACKHAT, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    lines = lines.astype(np.float64)
    h, w = lines.shape
    spans = []
    for axis in (0, 1):  # 0: the vertical lines (a profile along x); 1: the horizontal ones
        profile = lines.mean(axis=axis)
        first, pitch = _match(profile - np.median(profile), px_per_mm)
        spans.append((first, first + (SIZE - 1) * pitch))
    found: list[tuple[float, float, float]] = []
    for axis in (0, 1):
        lo, hi = spans[1 - axis]  # the board's span along the lines
        n = h if axis == 0 else w
        a, b = max(0, int(lo)), min(n, int(np.ceil(hi)) + 1)
        part = lines[a:b, :] if axis == 0 else lines[:, a:b]
        profile = np.median(part, axis=axis) if b - a > 10 else lines.mean(axis=axis)
        profile = profile - np.median(profile)
        first, pitch = _match(profile, px_per_mm)
        teeth = np.interp(first + pitch * np.arange(SIZE), np.arange(len(profile), dtype=np.float64), profile)
        contrast = float(teeth.min()) / (float(np.std(profile)) + 1e-6)  # the weakest line against the rest
        if contrast < GRID_CONTRAST:
            raise GridNotFoundError(
                "no board grid of 15 lines in the view: is the board between the corner markers, in view?"
            )
        found.append((first, pitch, contrast))
    (x0, sx, cx), (ytop, sy, cy) = found
    return Grid(x0, ytop + (SIZE - 1) * sy, sx, sy, min(cx, cy))


@dataclass
class Reading:
    """One frame's board: each point ``"."`` (empty), ``"B"``, ``"W"`` (index = col × 15 + row) and
    whether something was over the board (``busy``: the points are then not to be trusted), with the
    cell middles it covered."""

    points: list[str]
    covered: tuple[int, ...] = ()

    @property
    def busy(self) -> bool:
        return bool(self.covered)

    def stones(self) -> dict[Point, str]:
        return {Point(i // SIZE, i % SIZE): v for i, v in enumerate(self.points) if v != "."}


def _line_offsets(
    view: npt.NDArray[np.uint8], points: npt.NDArray[np.float64], pitch: float
) -> npt.NDArray[np.float64]:
    """Each intersection's cross as the first (empty) board shows it, against where the grid puts
    it: the shift (px, within a fifth of a pitch) that lays the vertical and the horizontal line
    segments through the point on the darkest thin line there. A board is not quite flat, nor a
    lens quite fitted; a point whose lines do not show (a stone already on it) keeps no shift."""
    gray = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY)
    k = max(3, int(round(0.15 * pitch)) | 1)
    lines = cv2.morphologyEx(gray, cv2.MORPH_BLACKHAT, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    lines = lines.astype(np.float64)
    h, w = lines.shape
    r, half = int(round(0.2 * pitch)), int(round(0.35 * pitch))
    out = np.zeros_like(points)
    for n, (x, y) in enumerate(np.round(points).astype(int)):
        if not (r + half <= x < w - r - half and r + half <= y < h - r - half):
            continue
        cols = lines[y - half : y + half + 1, x - r : x + r + 1].mean(axis=0)  # a vertical line's place
        rows = lines[y - r : y + r + 1, x - half : x + half + 1].mean(axis=1)  # a horizontal line's
        for axis, profile in ((0, cols), (1, rows)):
            best = int(np.argmax(profile))
            if profile[best] > 2.0 * np.median(profile) + 2.0:  # a line stands out there
                out[n, axis] = best - r
    return out


def _disc(radius: float) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    r = int(np.ceil(radius))
    dy, dx = np.mgrid[-r : r + 1, -r : r + 1]
    keep = dx * dx + dy * dy <= radius * radius
    return dy[keep].astype(np.intp), dx[keep].astype(np.intp)


@dataclass
class BoardReader:
    """Reads frames of one board (see the module docstring): ``read(image)`` gives a :class:`Reading`.
    The first quiet frames (the board empty) set each point's board colour and cross contrast."""

    geometry: TableGeometry
    grid: Grid | None = None
    px_per_mm: float = PX_PER_MM
    _base_point: npt.NDArray[np.float64] | None = field(default=None, repr=False)
    _base_cross: npt.NDArray[np.float64] | None = field(default=None, repr=False)
    _base_cell: npt.NDArray[np.float64] | None = field(default=None, repr=False)

    def _setup(self, view: npt.NDArray[np.uint8]) -> None:
        if self.grid is None:
            self.grid = find_grid(view, self.px_per_mm)
        g = self.grid
        pitch = min(g.step_x, g.step_y)
        line = max(1.0, 0.06 * pitch)
        dy, dx = _disc(0.3 * pitch)
        on = (np.abs(dx) <= line) | (np.abs(dy) <= line)
        self._dy_on, self._dx_on = dy[on], dx[on]
        self._dy_off, self._dx_off = dy[~on], dx[~on]
        self._dy_cell, self._dx_cell = _disc(0.18 * pitch)
        pts = np.round(g.points() + _line_offsets(view, g.points(), pitch)).astype(np.intp)
        cells = np.round(g.cells()).astype(np.intp)
        self._pts, self._cells = pts, cells

    def _sample(
        self,
        lab: npt.NDArray[np.float32],
        centres: npt.NDArray[np.intp],
        dy: npt.NDArray[np.intp],
        dx: npt.NDArray[np.intp],
    ) -> npt.NDArray[np.float64]:
        h, w = lab.shape[:2]
        ys = np.clip(centres[:, 1, None] + dy[None, :], 0, h - 1)
        xs = np.clip(centres[:, 0, None] + dx[None, :], 0, w - 1)
        return np.asarray(lab[ys, xs].mean(axis=1), np.float64)  # (n, 3): L, a, b

    def read(self, image: npt.NDArray[np.uint8]) -> Reading:
        if not hasattr(self, "_maps"):
            self._maps = view_maps(self.geometry, self.px_per_mm)
        view = square_view(image, self.geometry, self.px_per_mm, self._maps)
        if self.grid is None or not hasattr(self, "_pts"):
            self._setup(view)
        lab = np.asarray(
            cv2.cvtColor(view.astype(np.float32) * np.float32(1 / 255), cv2.COLOR_BGR2Lab), np.float32
        )
        off = self._sample(lab, self._pts, self._dy_off, self._dx_off)
        on = self._sample(lab, self._pts, self._dy_on, self._dx_on)
        cell = self._sample(lab, self._cells, self._dy_cell, self._dx_cell)
        cross = off[:, 0] - on[:, 0]  # how much darker the lines are than the board round them
        if self._base_cell is None:
            self._base_point, self._base_cross, self._base_cell = off.copy(), cross.copy(), cell.copy()
        assert self._base_point is not None and self._base_cross is not None
        gain = float(np.median(cell[:, 0] / np.maximum(self._base_cell[:, 0], 1.0)))
        # how far each cell middle's colour is from the board's there (CIE76 ΔE, the light divided out):
        # skin over a light wood board differs little in lightness or in hue alone
        delta = np.sqrt(
            (cell[:, 0] / max(gain, 1e-3) - self._base_cell[:, 0]) ** 2
            + (cell[:, 1] - self._base_cell[:, 1]) ** 2
            + (cell[:, 2] - self._base_cell[:, 2]) ** 2
        )
        covered = np.flatnonzero(delta > CELL_DELTA_E)
        light = off[:, 0] / max(gain, 1e-3) / np.maximum(self._base_point[:, 0], 1.0)
        # a point whose cross never showed (its lines too faint there) is judged by its light alone
        faint = self._base_cross < CROSS_MIN
        hidden = np.where(faint, np.abs(light - 1.0) > FAINT_CHANGE, cross < CROSS_HIDDEN * self._base_cross)
        points = [
            "." if not h else ("B" if v < BLACK_RATIO else "W") for h, v in zip(hidden, light, strict=True)
        ]
        if len(covered) == 0:  # keep each empty point's and every cell's board colour up to date
            empty = ~hidden
            self._base_point[empty] = 0.8 * self._base_point[empty] + 0.2 * off[empty] / gain
            self._base_cross[empty] = 0.8 * self._base_cross[empty] + 0.2 * cross[empty] / gain
            self._base_cell = 0.8 * self._base_cell + 0.2 * cell / gain
        return Reading(points, tuple(int(i) for i in covered))
