"""The camera's lens distortion from photos of a printed ChArUco board (``tractorcam calibrate lens``).

The board is a 7 × 5 chessboard of 32 mm squares with an ArUco marker of OpenCV's ``DICT_5X5_100``
(a dictionary the table's 4×4 corner markers cannot be mistaken for) in each white square; its 24
inner chessboard corners are found by ID in each photo (:func:`detect_board`). A flat board's corners
map to the undistorted image through one homography per photo, so the lens
(:class:`~calibration.table.LensDistortion`, ``k1`` and ``k2`` centred on the image, ``norm`` half
the image's diagonal as :func:`calibration.markers.fit_lens` has it) is the one that makes every
photo's corners fit their homography best (:func:`fit_lens_from_boards`). The board's printed scale
does not matter (a homography absorbs it); its flatness does. The fit is written as ``lens.json``
(:func:`save_lens`) and ``tractorcam calibrate --lens lens.json`` uses it instead of fitting ``k1``
from the four corner markers.

>>> board_corners_mm()[:2].tolist(), len(board_corners_mm())
([[32.0, 32.0], [64.0, 32.0]], 24)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table import LensDistortion

DICTIONARY = cv2.aruco.DICT_5X5_100
SQUARES = (7, 5)  # columns, rows
SQUARE_MM = 32.0
MARKER_MM = 24.0
#: Corners a photo needs to count: twice the eight a homography has, and half the board.
MIN_CORNERS = 12
#: ``k1`` and ``k2`` are searched within this bound (a Raspberry Pi camera's wide lens lies well inside).
MAX_K = 0.5
#: ``k2`` is kept only when it lowers the residual by this share beyond ``k1`` alone: with corners
#: that do not reach the frame's edge, ``k2`` trades against ``k1`` and fits noise.
K2_GAIN = 0.05


class BoardNotFoundError(ValueError):
    """No photo shows enough of the board's corners; the message says how many were found and needed."""


def board() -> cv2.aruco.CharucoBoard:
    """The printed board (:data:`SQUARES` of :data:`SQUARE_MM`, markers of :data:`MARKER_MM`)."""
    return cv2.aruco.CharucoBoard(
        SQUARES, SQUARE_MM, MARKER_MM, cv2.aruco.getPredefinedDictionary(DICTIONARY)
    )


def board_corners_mm() -> npt.NDArray[np.float64]:
    """The board's inner corners (N, 2) in mm on the board, in ChArUco ID order."""
    return np.asarray(board().getChessboardCorners(), np.float64)[:, :2]


def detect_board(image: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The board's corners found in ``image``: image px (N, 2, pixel (i, j) covering [i, i + 1)) and
    their mm on the board (N, 2); empty arrays where the board is not seen."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    corners, ids, _, _ = cv2.aruco.CharucoDetector(board()).detectBoard(grey)
    if ids is None or corners is None or len(ids) == 0:
        return np.zeros((0, 2)), np.zeros((0, 2))
    px = corners.reshape(-1, 2).astype(np.float64) + 0.5  # OpenCV puts pixel centres at integers
    return px, board_corners_mm()[ids.ravel()]


def board_sheet(dpi: int = 300) -> npt.NDArray[np.uint8]:
    """A printable A4 landscape page (at ``dpi``) with the board at true size, a 100 mm ruler to
    check the print's scale, and what to do with it.

    >>> page = board_sheet(dpi=50)
    >>> page.shape
    (413, 584)
    """
    px_mm = dpi / 25.4
    page = np.full((int(210 * px_mm), int(297 * px_mm)), 255, np.uint8)
    bw = SQUARES[0] * SQUARE_MM
    x0, y0 = int(round((297 - bw) / 2 * px_mm)), int(round(10 * px_mm))
    side = int(round(SQUARE_MM * px_mm))  # whole px per square: OpenCV refuses some other sizes
    w, h = SQUARES[0] * side, SQUARES[1] * side
    page[y0 : y0 + h, x0 : x0 + w] = board().generateImage((w, h), marginSize=0, borderBits=1)
    ruler_y = y0 + h + int(9 * px_mm)
    thick = max(1, int(round(px_mm / 4)))
    cv2.line(page, (x0, ruler_y), (x0 + int(round(100 * px_mm)), ruler_y), 0, thick)
    for t in range(0, 101, 10):
        xt = x0 + int(round(t * px_mm))
        cv2.line(page, (xt, ruler_y - int(3 * px_mm)), (xt, ruler_y), 0, thick)
    lines = [
        "100 mm. Print at 100 % and glue or tape it flat (a bent board bends the lens fit).",
        "Photograph it with the table camera 5-10 times, moved round the frame, its edges and corners.",
        "Then: tractorcam calibrate lens --images P1 --images P2 ... --out lens.json",
    ]
    scale = px_mm / 5.9 * 0.5  # Hershey simplex: capitals about 2 mm high
    for n, line in enumerate(lines):
        y = ruler_y + int((6 + 5 * n) * px_mm)
        cv2.putText(page, line, (x0, y), cv2.FONT_HERSHEY_SIMPLEX, scale, 0, thick)
    return page


@dataclass(frozen=True)
class LensFit:
    """A lens fitted from photos of the board, and how well the photos' corners agree with it."""

    lens: LensDistortion
    corners: tuple[int, ...]  # corners found in each photo given (photos under MIN_CORNERS left out)
    rms_before_px: float  # RMS distance of the corners from one homography per photo, pinhole camera
    rms_after_px: float  # the same through the fitted lens
    reach: float  # the farthest corner from the image's centre, in units of the lens's norm


def _lens(width: int, height: int, k1: float, k2: float) -> LensDistortion:
    return LensDistortion(k1=k1, k2=k2, cx=width / 2, cy=height / 2, norm=float(np.hypot(width, height) / 2))


def _residuals(
    views: Sequence[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]], lens: LensDistortion
) -> npt.NDArray[np.float64]:
    """Each corner's offset (px, flattened) from where its photo's homography through ``lens`` puts it."""
    out = []
    for px, mm in views:
        h, _ = cv2.findHomography(mm, lens.undistort(px), 0)
        if h is None:
            return np.full(2 * sum(len(p) for p, _ in views), 1e6)
        back = cv2.perspectiveTransform(mm.reshape(-1, 1, 2), h).reshape(-1, 2)
        out.append((lens.distort(back) - px).ravel())
    return np.concatenate(out)


def _rms(r: npt.NDArray[np.float64]) -> float:
    return float(np.sqrt(np.mean(r**2) * 2))


def _refine(
    views: Sequence[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]],
    width: int,
    height: int,
    k: npt.NDArray[np.float64],
    free: int,
) -> npt.NDArray[np.float64]:
    """Levenberg-Marquardt on the first ``free`` of (k1, k2), from ``k``; finite-difference Jacobian."""
    k = k.copy()
    r = _residuals(views, _lens(width, height, *k))
    damping = 1e-3
    for _ in range(30):
        jac = np.empty((len(r), free))
        for j in range(free):
            step = np.zeros(2)
            step[j] = 1e-5
            jac[:, j] = (_residuals(views, _lens(width, height, *(k + step))) - r) / 1e-5
        a, g = jac.T @ jac, jac.T @ r
        while damping < 1e9:
            delta = np.zeros(2)
            delta[:free] = -np.linalg.solve(a + damping * np.diag(np.diag(a) + 1e-12), g)
            trial = np.clip(k + delta, -MAX_K, MAX_K)
            r_trial = _residuals(views, _lens(width, height, *trial))
            if r_trial @ r_trial < r @ r:
                k, r, damping = trial, r_trial, max(damping / 10, 1e-9)
                break
            damping *= 10
        else:
            break
        if np.abs(delta).max() < 1e-7:
            break
    return k


def fit_lens_from_boards(images: Sequence[npt.NDArray[np.uint8]], min_corners: int = MIN_CORNERS) -> LensFit:
    """The lens (``k1``, and ``k2`` where it helps by :data:`K2_GAIN`) that best fits the board's
    corners in ``images`` (photos of the same camera, same size) to one homography per photo; photos
    with fewer than ``min_corners`` corners are left out. Raises :class:`BoardNotFoundError` when no
    photo has enough.

    >>> fit_lens_from_boards([np.zeros((480, 640), np.uint8)])
    Traceback (most recent call last):
    ...
    calibration.lens.BoardNotFoundError: found 0 of the board's 24 corners in the photo, need 12
    """
    if not images:
        raise BoardNotFoundError("no photo given")
    height, width = images[0].shape[:2]
    if any(im.shape[:2] != (height, width) for im in images):
        sizes = sorted({f"{im.shape[1]}x{im.shape[0]}" for im in images})
        raise ValueError(f"the photos are not all the same size ({', '.join(sizes)}): one camera, one mode")
    found = [detect_board(im) for im in images]
    counts = tuple(len(px) for px, _ in found)
    views = [(px, mm) for px, mm in found if len(px) >= min_corners]
    if not views:
        where = "in the photo" if len(images) == 1 else f"in any of the {len(images)} photos (at most)"
        raise BoardNotFoundError(
            f"found {max(counts)} of the board's {len(board_corners_mm())} corners {where}, need {min_corners}"
        )
    before = _rms(_residuals(views, _lens(width, height, 0.0, 0.0)))
    grid = np.linspace(-MAX_K, MAX_K, 41)
    costs = [_rms(_residuals(views, _lens(width, height, float(k), 0.0))) for k in grid]
    k = _refine(views, width, height, np.array([grid[int(np.argmin(costs))], 0.0]), free=1)
    after = _rms(_residuals(views, _lens(width, height, *k)))
    k12 = _refine(views, width, height, k, free=2)
    after12 = _rms(_residuals(views, _lens(width, height, *k12)))
    if after12 < (1 - K2_GAIN) * after:
        k, after = k12, after12
    lens = _lens(width, height, float(k[0]), float(k[1]))
    reach = max(
        float(np.max(np.hypot(px[:, 0] - lens.cx, px[:, 1] - lens.cy))) / lens.norm for px, _ in views
    )
    return LensFit(lens, counts, before, after, reach)


def save_lens(lens: LensDistortion, path: Path) -> None:
    """Write ``lens.json`` (the :class:`LensDistortion` as JSON)."""
    Path(path).write_text(lens.model_dump_json(indent=2) + "\n")


def load_lens(path: Path) -> LensDistortion:
    """Read a ``lens.json``; raises ``ValueError`` (pydantic's) when it is not one."""
    return LensDistortion.model_validate(json.loads(Path(path).read_text()))


def lens_for(lens: LensDistortion, width: int, height: int) -> LensDistortion:
    """``lens`` (fitted on frames of its own size: centred on them) for ``width`` × ``height``
    frames of the same camera: scaled when the size differs but the shape does not; raises
    ``ValueError`` when the frames are another shape (another crop of the sensor).

    >>> lens = LensDistortion(k1=-0.05, k2=0.0, cx=960, cy=720, norm=1200.0)
    >>> lens_for(lens, 1280, 960).norm
    800.0
    >>> lens_for(lens, 1280, 720)
    Traceback (most recent call last):
    ...
    ValueError: the lens was measured on 1920x1440 frames, this frame is 1280x720 (another shape)
    """
    w0, h0 = 2 * lens.cx, 2 * lens.cy
    if (w0, h0) == (width, height):
        return lens
    s = width / w0
    if abs(height / h0 - s) > 0.01 * s:
        raise ValueError(
            f"the lens was measured on {w0:g}x{h0:g} frames, this frame is {width}x{height} (another shape)"
        )
    return lens.model_copy(update={"cx": width / 2, "cy": height / 2, "norm": lens.norm * s})
