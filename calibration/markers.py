"""Calibrating a table from printed ArUco markers (``../shared/spec/cli.md``, *Table set-up commands*).

Four markers of OpenCV's ``DICT_4X4_50``, IDs 0–3, ``marker_mm`` square, printed upright, lie in the
table's corners with their outer corner on the table's corner: ID 0 at N-W (table mm ``[0, m]²``),
1 at N-E, 2 at S-E, 3 at S-W; table x runs W → E, y N → S. Each marker found gives four points
whose table position is known, so two markers (eight points spread over the table) already fix the
image → table homography; with fewer the calibration is refused, naming the missing markers.

>>> corners = marker_corners_mm(900.0, 800.0, 60.0)
>>> corners[0].tolist(), corners[2][0].tolist()
([[0.0, 0.0], [60.0, 0.0], [60.0, 60.0], [0.0, 60.0]], [840.0, 740.0])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table import LensDistortion, TableGeometry, default_zones

DICTIONARY = cv2.aruco.DICT_4X4_50
MARKER_IDS = (0, 1, 2, 3)
CORNER_NAMES = {0: "N-W", 1: "N-E", 2: "S-E", 3: "S-W"}
#: Markers a calibration needs at least (eight points, spread over the table).
MIN_MARKERS = 2


class MarkersMissingError(ValueError):
    """Too few of the four corner markers were found; the message names the missing ones."""


def marker_corners_mm(
    width_mm: float, height_mm: float, marker_mm: float
) -> dict[int, npt.NDArray[np.float64]]:
    """Table mm of each marker's four corners, in ArUco's order (its top-left, top-right,
    bottom-right, bottom-left as printed upright, top towards N)."""
    m = marker_mm
    origins = {
        0: (0.0, 0.0),
        1: (width_mm - m, 0.0),
        2: (width_mm - m, height_mm - m),
        3: (0.0, height_mm - m),
    }
    return {
        i: np.array([[x, y], [x + m, y], [x + m, y + m], [x, y + m]], np.float64)
        for i, (x, y) in origins.items()
    }


def parse_table_size(text: str, name: str = "table size") -> tuple[float, float]:
    """``WxH`` in mm; raises ``ValueError`` with a one-line message that calls it ``name`` (a command
    line passes its option's name).

    >>> parse_table_size("900x800")
    (900.0, 800.0)
    >>> parse_table_size("90x80")
    Traceback (most recent call last):
    ...
    ValueError: table size '90x80': each side between 200 and 5000 mm
    """
    try:
        w, h = (float(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"{name} {text!r} is not WxH in mm (e.g. 900x900)") from None
    if not (200 <= w <= 5000 and 200 <= h <= 5000):
        raise ValueError(f"{name} {text!r}: each side between 200 and 5000 mm")
    return w, h


def sharpest(images: Iterable[npt.NDArray[np.uint8]], n: int = 10) -> npt.NDArray[np.uint8] | None:
    """The sharpest (variance of the Laplacian) of the first ``n`` images, None when there is none:
    a moving hand or a camera still focusing blurs some of a source's first frames."""
    best, best_score = None, -1.0
    for k, image in enumerate(images):
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
        score = float(cv2.Laplacian(grey, cv2.CV_64F).var())
        if score > best_score:
            best, best_score = image, score
        if k + 1 >= max(1, n):
            break
    return None if best is None else np.asarray(best, np.uint8)


def detect_markers(image: npt.NDArray[np.uint8]) -> dict[int, npt.NDArray[np.float64]]:
    """Image px of the corners of each table marker (IDs 0–3) found in ``image``."""
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX  # corners to a tenth of a pixel
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(DICTIONARY), params)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    corners, ids, _ = detector.detectMarkers(grey)
    found: dict[int, npt.NDArray[np.float64]] = {}
    for c, i in zip(corners, [] if ids is None else ids.ravel().tolist(), strict=False):
        if i in MARKER_IDS and i not in found:
            # OpenCV puts pixel centres at integers; table.json's pixels cover [i, i + 1)
            found[int(i)] = c.reshape(4, 2).astype(np.float64) + 0.5
    return found


@dataclass(frozen=True)
class Calibration:
    """A table's geometry from its markers, and how well the markers agree with it."""

    geometry: TableGeometry
    markers: tuple[int, ...]
    reprojection_px: float  # RMS distance of the markers' corners from where the geometry puts them
    card_px: tuple[float, float]  # a card's width and height in px at the table's centre


def calibrate(
    image: npt.NDArray[np.uint8],
    width_mm: float = 900.0,
    height_mm: float = 900.0,
    marker_mm: float = 60.0,
    *,
    lens: bool | LensDistortion = True,
) -> Calibration:
    """The table's geometry from the markers in ``image``, with the lens's radial distortion when
    three or more markers show it (:func:`fit_lens`; ``lens=False``: a pinhole camera; a
    :class:`LensDistortion`, e.g. ``lens.json`` from a ChArUco board: that lens, not fitted,
    :func:`calibration.lens.lens_for` the frame's size); raises :class:`MarkersMissingError`, and
    ``ValueError`` for a lens measured on frames of another shape."""
    found = detect_markers(image)
    if len(found) < MIN_MARKERS:
        missing = [f"{i} ({CORNER_NAMES[i]})" for i in MARKER_IDS if i not in found]
        raise MarkersMissingError(
            f"found {len(found)} of the 4 corner markers, need {MIN_MARKERS}: missing {', '.join(missing)}"
        )
    table_pts = marker_corners_mm(width_mm, height_mm, marker_mm)
    ids = tuple(sorted(found))
    px = np.concatenate([found[i] for i in ids])
    mm = np.concatenate([table_pts[i] for i in ids])
    h, w = image.shape[:2]
    if isinstance(lens, LensDistortion):
        from calibration.lens import lens_for

        distortion: LensDistortion | None = lens_for(lens, w, h)
    else:
        distortion = fit_lens(px, mm, w, h) if lens else None
    to_table, _ = cv2.findHomography(distortion.undistort(px) if distortion is not None else px, mm, 0)
    if to_table is None:
        raise MarkersMissingError("the markers found do not fix the table's geometry (all in a line?)")
    to_image = np.linalg.inv(to_table)
    to_image /= to_image[2, 2]
    zones, centre = default_zones(width_mm, height_mm)
    geometry = TableGeometry(
        version=1,
        image_width=w,
        image_height=h,
        image_to_table=to_table.tolist(),
        table_to_image=to_image.tolist(),
        table_width_mm=width_mm,
        table_height_mm=height_mm,
        zones=zones,
        centre=centre,
        markers={str(i): [(float(x), float(y)) for x, y in found[i]] for i in ids},
        distortion=distortion,
    )
    back = geometry.table_to_pixel(mm)
    rms = float(np.sqrt(np.mean(np.sum((back - px) ** 2, axis=1))))
    cx, cy = width_mm / 2, height_mm / 2
    cw, ch = geometry.card_width_mm, geometry.card_height_mm
    c = geometry.table_to_pixel(np.array([[cx, cy], [cx + cw, cy], [cx, cy + ch]]))
    card = (float(np.linalg.norm(c[1] - c[0])), float(np.linalg.norm(c[2] - c[0])))
    return Calibration(geometry, ids, rms, card)


#: The lens distortion :func:`fit_lens` searches: ``k1`` within this bound (the renderer's and a
#: Raspberry Pi camera's wide lenses lie well inside), and keeps only when it explains the markers
#: better by this factor than a pinhole camera does.
MAX_K1 = 0.25
LENS_GAIN = 0.8


def _residual(px: npt.NDArray[np.float64], mm: npt.NDArray[np.float64], lens: LensDistortion) -> float:
    """RMS px between the markers' corners and where the homography fitted through ``lens`` puts them."""
    h, _ = cv2.findHomography(lens.undistort(px), mm, 0)
    if h is None:
        return float("inf")
    back = cv2.perspectiveTransform(mm.reshape(-1, 1, 2), np.linalg.inv(h)).reshape(-1, 2)
    return float(np.sqrt(np.mean(np.sum((lens.distort(back) - px) ** 2, axis=1))))


def fit_lens(
    px: npt.NDArray[np.float64], mm: npt.NDArray[np.float64], width: int, height: int
) -> LensDistortion | None:
    """The radial lens distortion (``k1``, centred on the image, :class:`LensDistortion`) that best
    fits marker corners ``px`` (image) to ``mm`` (table) through one homography: a coarse scan of
    ``k1`` then a golden-section search. None when a pinhole camera fits as well (within
    :data:`LENS_GAIN`), or with fewer than three markers (their corners cannot tell the lens from
    the perspective).

    >>> from calibration.table import LensDistortion
    >>> truth = LensDistortion(k1=-0.05, cx=960, cy=720, norm=1200.0)
    >>> mm = np.concatenate(list(marker_corners_mm(900.0, 900.0, 60.0).values()))
    >>> px = truth.distort(mm * 1.5 + [285.0, 45.0])
    >>> round(fit_lens(px, mm, 1920, 1440).k1, 3)
    -0.05
    """
    if len(px) < 12:
        return None

    def lens(k1: float) -> LensDistortion:
        return LensDistortion(k1=k1, cx=width / 2, cy=height / 2, norm=float(np.hypot(width, height) / 2))

    def cost(k1: float) -> float:
        return _residual(px, mm, lens(k1))

    grid = np.linspace(-MAX_K1, MAX_K1, 26)
    costs = [cost(float(k)) for k in grid]
    i = int(np.argmin(costs))
    lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, len(grid) - 1)])
    g = (np.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = cost(a), cost(b)
    for _ in range(40):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = cost(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = cost(b)
    k1 = (lo + hi) / 2
    if cost(k1) >= LENS_GAIN * cost(0.0):
        return None
    return lens(k1)


def overlay(
    image: npt.NDArray[np.uint8], cal: Calibration, found: dict[int, npt.NDArray[np.float64]]
) -> npt.NDArray[np.uint8]:
    """``image`` with the markers found, a 100 mm grid, the play zones and the centre drawn in, for a
    person to check the calibration by eye."""
    out = image.copy()
    g = cal.geometry
    for x in np.arange(0.0, g.table_width_mm + 0.1, 100.0):
        a, b = g.table_to_pixel(np.array([[x, 0.0], [x, g.table_height_mm]]))
        cv2.line(out, tuple(int(v) for v in a), tuple(int(v) for v in b), (200, 200, 200), 1, cv2.LINE_AA)
    for y in np.arange(0.0, g.table_height_mm + 0.1, 100.0):
        a, b = g.table_to_pixel(np.array([[0.0, y], [g.table_width_mm, y]]))
        cv2.line(out, tuple(int(v) for v in a), tuple(int(v) for v in b), (200, 200, 200), 1, cv2.LINE_AA)
    for seat, poly in g.zones.items():
        pts = g.table_to_pixel(np.array(poly)).astype(np.int32)
        cv2.polylines(out, [pts], True, (0, 200, 255), 2, cv2.LINE_AA)
        mid = pts.mean(0).astype(int)
        cv2.putText(out, seat, (int(mid[0]), int(mid[1])), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 200, 255), 2)
    cv2.polylines(
        out, [g.table_to_pixel(np.array(g.centre)).astype(np.int32)], True, (255, 120, 0), 2, cv2.LINE_AA
    )
    for i, c in found.items():
        cv2.polylines(out, [c.astype(np.int32)], True, (0, 255, 0), 2, cv2.LINE_AA)
        cv2.putText(out, str(i), tuple(int(v) for v in c[0]), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 255, 0), 2)
    return out


def sheet(marker_mm: float = 60.0, dpi: int = 300) -> npt.NDArray[np.uint8]:
    """A printable A4 page (at ``dpi``) with the four markers at true size, each named with its
    corner, a 100 mm ruler to check the print's scale, and how to lay them."""
    px_mm = dpi / 25.4
    page = np.full((int(297 * px_mm), int(210 * px_mm)), 255, np.uint8)
    side = int(round(marker_mm * px_mm))
    dictionary = cv2.aruco.getPredefinedDictionary(DICTIONARY)
    margin = int(25 * px_mm)
    gap = (page.shape[1] - 2 * margin - 2 * side) // 1
    text = cv2.FONT_HERSHEY_SIMPLEX
    scale = px_mm / 5.9  # Hershey simplex at this scale: capitals about 4 mm high
    for k, i in enumerate(MARKER_IDS):
        x = margin + (k % 2) * (side + gap)
        y = margin + (k // 2) * (side + int(35 * px_mm))
        page[y : y + side, x : x + side] = cv2.aruco.generateImageMarker(dictionary, i, side)
        cv2.putText(
            page,
            f"ID {i}: {CORNER_NAMES[i]} corner, top edge N",
            (x, y + side + int(8 * px_mm)),
            text,
            scale * 0.5,
            0,
            2,
        )
    ruler_y = margin + 2 * (side + int(35 * px_mm)) + int(10 * px_mm)
    x0 = margin
    cv2.line(page, (x0, ruler_y), (x0 + int(round(100 * px_mm)), ruler_y), 0, 3)
    for t in range(0, 101, 10):
        xt = x0 + int(round(t * px_mm))
        cv2.line(page, (xt, ruler_y - int(3 * px_mm)), (xt, ruler_y), 0, 3)
    lines = [
        "100 mm: measure it; print again at 100 % if it is not 100 mm.",
        f"Markers are {marker_mm:g} mm. Cut each out with a 1 cm white margin. Lay it in its",
        "table corner, the black square's outer corner on the table's corner, the white",
        "margin hanging over the edge (not folded under), its top edge towards N.",
        "Then: tractorcam calibrate --image FRAME --out table.json --table-size WxH",
    ]
    for n, line in enumerate(lines):
        cv2.putText(page, line, (x0, ruler_y + int((10 + 8 * n) * px_mm)), text, scale * 0.45, 0, 2)
    return page


class CameraWatch:
    """Whether the camera still sees the table as when it was calibrated: the corner markers found in
    a frame against where ``table.json`` recorded them; and, once the camera has settled in a new
    place, the table calibrated again there.

    :meth:`check` says ``ok``, ``moved``, ``unseen`` or ``recalibrated``. A frame in which no
    recorded marker is found (hands or arms over them) is ``unseen`` and changes nothing. The camera
    counts as moved once the markers seen are off their place by more than ``tolerance_px`` (the
    median over their corners) in ``patience`` checks in a row, and as back once they are within it
    again. While it has moved, ``recalibrate``: once at least two markers lie still (within
    ``tolerance_px`` of where the look before found them) in ``patience`` looks in a row, the table is
    calibrated again from them (:func:`calibrate`, the table's size and marker size as before; the
    zones as they were in table mm) and :attr:`geometry` is the new calibration: reading goes on.
    """

    def __init__(
        self,
        geometry: TableGeometry,
        tolerance_px: float = 6.0,
        patience: int = 3,
        *,
        recalibrate: bool = True,
        marker_mm: float | None = None,
    ) -> None:
        if not geometry.markers:
            raise ValueError("table.json records no markers (calibrate it from markers)")
        self.geometry = geometry
        self.tolerance_px = tolerance_px
        self.patience = patience
        self.recalibrate = recalibrate
        self.marker_mm = marker_mm if marker_mm is not None else marker_mm_of(geometry)
        self.moved = False
        self.recalibrations = 0
        self.offset_px = 0.0
        self._streak = 0
        self._still = 0
        self._last: dict[int, npt.NDArray[np.float64]] = {}
        self._expect(geometry)

    def _expect(self, geometry: TableGeometry) -> None:
        assert geometry.markers is not None
        self.expected = {int(k): np.array(v, np.float64) for k, v in geometry.markers.items()}

    def check(self, image: npt.NDArray[np.uint8]) -> str:
        """``ok``, ``moved``, ``unseen`` or ``recalibrated`` after looking at ``image``."""
        seen = detect_markers(image)
        found = {i: c for i, c in seen.items() if i in self.expected}
        if not found:
            return "moved" if self.moved else "unseen"
        shift = np.concatenate([np.linalg.norm(c - self.expected[i], axis=1) for i, c in found.items()])
        self.offset_px = float(np.median(shift))
        if self.offset_px > self.tolerance_px:
            self._streak += 1
            if self._streak >= self.patience:
                self.moved = True
        else:
            self._streak = 0
            self.moved = False
            self._still = 0
        if self.moved and self.recalibrate and self._settled(seen, image):
            return "recalibrated"
        return "moved" if self.moved else "ok"

    def _settled(self, seen: dict[int, npt.NDArray[np.float64]], image: npt.NDArray[np.uint8]) -> bool:
        """Count the looks the markers lie still in their new place; calibrate again after
        ``patience`` of them. True when it did."""
        common = [i for i in seen if i in self._last]
        still = len(seen) >= MIN_MARKERS and bool(common)
        if still:
            moves = np.concatenate([np.linalg.norm(seen[i] - self._last[i], axis=1) for i in common])
            still = float(np.median(moves)) <= self.tolerance_px
        self._last = seen
        self._still = self._still + 1 if still else 0
        if self._still < self.patience:
            return False
        old = self.geometry
        try:
            # the camera moved, its lens did not: a calibration's lens is kept, not fitted again
            lens: bool | LensDistortion = old.distortion if old.distortion is not None else True
            cal = calibrate(image, old.table_width_mm, old.table_height_mm, self.marker_mm, lens=lens)
        except MarkersMissingError:
            return False
        self.geometry = cal.geometry.model_copy(
            update={
                "zones": old.zones,
                "centre": old.centre,
                "card_width_mm": old.card_width_mm,
                "card_height_mm": old.card_height_mm,
            }
        )
        self._expect(self.geometry)
        self.moved, self._streak, self._still, self.offset_px = False, 0, 0, 0.0
        self.recalibrations += 1
        return True


def marker_mm_of(geometry: TableGeometry) -> float:
    """The markers' size a calibration used: from their recorded corners through its homography
    (table.json keeps the corners in image px), rounded to the millimetre.

    >>> frame_corners = {"0": [(0.0, 0.0), (60.0, 0.0), (60.0, 60.0), (0.0, 60.0)]}
    >>> eye = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    >>> g = TableGeometry(image_width=900, image_height=900, image_to_table=eye, table_to_image=eye,
    ...     table_width_mm=900, table_height_mm=900, zones={}, centre=[], markers=frame_corners)
    >>> marker_mm_of(g)
    60.0
    """
    assert geometry.markers is not None
    sides = []
    for corners in geometry.markers.values():
        mm = geometry.pixel_to_table(np.array(corners, np.float64))
        sides += [float(np.linalg.norm(mm[(k + 1) % 4] - mm[k])) for k in range(4)]
    return float(round(np.median(sides)))
