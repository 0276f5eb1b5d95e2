"""Table geometry (``table.json``): how camera pixels map to the table and where each seat plays.

Coordinates: table millimetres with the origin at the table's top-left corner as seen by the camera
when unrotated, x to the right (towards E), y downwards (towards S). Seats: S bottom, E right,
N top, W left. Image coordinates are continuous pixels: pixel (i, j) covers [i, i+1) × [j, j+1).

A pixel maps to the table in two steps: undo the lens distortion (:meth:`LensDistortion.undistort`,
a closed formula), then apply the homography ``image_to_table``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from engine.seats import SeatName

Seat = SeatName  # the engine's seat names (engine.seats)
Point = tuple[float, float]


class LensDistortion(BaseModel):
    """Radial distortion: an undistorted pixel is ``c + (p - c) * (1 + k1 r² + k2 r⁴)`` for a distorted
    pixel ``p``, ``r = |p - c| / norm``."""

    model_config = ConfigDict(extra="forbid")

    k1: float = Field(
        0.0, title="k1", description="Quadratic radial coefficient (negative: barrel in the image)."
    )
    k2: float = Field(0.0, title="k2", description="Quartic radial coefficient.")
    cx: float = Field(title="Centre x", description="Distortion centre, image px.")
    cy: float = Field(title="Centre y", description="Distortion centre, image px.")
    norm: float = Field(title="Radius norm", description="Radius (px) that r is measured in units of.")

    def undistort(self, pts: np.ndarray) -> np.ndarray:
        """Distorted image points (N, 2) → undistorted (pinhole) image points."""
        p = np.asarray(pts, float).reshape(-1, 2)
        c = np.array([self.cx, self.cy])
        d = p - c
        r2 = (d**2).sum(axis=1, keepdims=True) / self.norm**2
        return np.asarray(c + d * (1 + self.k1 * r2 + self.k2 * r2**2))

    def distort(self, pts: np.ndarray, iters: int = 20) -> np.ndarray:
        """Inverse of :meth:`undistort` (fixed-point iteration; exact to < 1e-6 px for mild lenses)."""
        u = np.asarray(pts, float).reshape(-1, 2)
        c = np.array([self.cx, self.cy])
        du = u - c
        d = du.copy()
        for _ in range(iters):
            r2 = (d**2).sum(axis=1, keepdims=True) / self.norm**2
            d = du / (1 + self.k1 * r2 + self.k2 * r2**2)
        return np.asarray(c + d)


class TableGeometry(BaseModel):
    """Calibration of one table camera, written as ``table.json``."""

    model_config = ConfigDict(extra="forbid")

    version: int = Field(1, title="Format version", description="Version of this file format.")
    image_width: int = Field(title="Image width", description="Camera frame width in px.")
    image_height: int = Field(title="Image height", description="Camera frame height in px.")
    image_to_table: list[list[float]] = Field(
        title="Homography image → table",
        description="3×3 matrix mapping undistorted image px (homogeneous) to table mm.",
    )
    table_to_image: list[list[float]] = Field(
        title="Homography table → image",
        description="3×3 inverse of image_to_table: table mm to undistorted image px.",
    )
    table_width_mm: float = Field(title="Table width", description="Table extent along x (W→E), mm.")
    table_height_mm: float = Field(title="Table height", description="Table extent along y (N→S), mm.")
    zones: dict[Seat, list[Point]] = Field(
        title="Play zones",
        description="Per seat, the polygon (table mm) where that player lays cards for the current trick.",
    )
    centre: list[Point] = Field(
        title="Centre area",
        description="Polygon (table mm) where the defenders' captured point cards lie face up.",
    )
    card_width_mm: float = Field(63.0, title="Card width", description="Card width, mm.")
    card_height_mm: float = Field(88.0, title="Card height", description="Card height, mm.")
    distortion: LensDistortion | None = Field(
        None, title="Lens distortion", description="Radial lens model; absent for an ideal pinhole camera."
    )
    markers: dict[str, list[Point]] | None = Field(
        None,
        title="Corner markers",
        description="Image px of each corner marker's four corners when calibrated (ID → corners); "
        "lets the table service see that the camera moved. Absent for a table not calibrated from markers.",
    )

    # ----------------------------------------------------------------- helpers

    def pixel_to_table(self, pts: np.ndarray) -> np.ndarray:
        """Image px (N, 2), as recorded by the camera → table mm (N, 2)."""
        p = np.asarray(pts, float).reshape(-1, 2)
        if self.distortion is not None:
            p = self.distortion.undistort(p)
        return _apply(np.array(self.image_to_table), p)

    def table_to_pixel(self, pts: np.ndarray) -> np.ndarray:
        """Table mm (N, 2) → image px (N, 2) as recorded (with lens distortion)."""
        p = _apply(np.array(self.table_to_image), np.asarray(pts, float).reshape(-1, 2))
        if self.distortion is not None:
            p = self.distortion.distort(p)
        return p

    def seat_of(self, pt_mm: Point) -> Seat | None:
        """The seat whose play zone contains a table point, if any."""
        for seat, poly in self.zones.items():
            if _inside(pt_mm, poly):
                return seat
        return None

    def in_centre(self, pt_mm: Point) -> bool:
        """Whether a table point lies in the centre area."""
        return _inside(pt_mm, self.centre)

    def save(self, path: Path) -> None:
        """Write as JSON."""
        Path(path).write_text(self.model_dump_json(indent=2))

    @classmethod
    def load(cls, path: Path) -> TableGeometry:
        """Read a ``table.json``."""
        return cls.model_validate(json.loads(Path(path).read_text()))


def default_zones(width_mm: float, height_mm: float) -> tuple[dict[Seat, list[Point]], list[Point]]:
    """Four trapezoid play zones between the table edge and a central square, and the centre square.

    >>> zones, centre = default_zones(1000.0, 800.0)
    >>> sorted(zones), centre[0], centre[2]
    (['E', 'N', 'S', 'W'], (330.0, 264.0), (670.0, 536.0))
    >>> _inside((500.0, 100.0), zones["N"]), _inside((500.0, 100.0), zones["S"])
    (True, False)
    """
    m = 0.05 * min(width_mm, height_mm)
    cw, ch = 0.17 * width_mm, 0.17 * height_mm
    mx, my = width_mm / 2, height_mm / 2
    o = [(m, m), (width_mm - m, m), (width_mm - m, height_mm - m), (m, height_mm - m)]  # NW NE SE SW
    c = [(mx - cw, my - ch), (mx + cw, my - ch), (mx + cw, my + ch), (mx - cw, my + ch)]
    zones: dict[Seat, list[Point]] = {
        "N": [o[0], o[1], c[1], c[0]],
        "E": [o[1], o[2], c[2], c[1]],
        "S": [o[2], o[3], c[3], c[2]],
        "W": [o[3], o[0], c[0], c[3]],
    }
    return zones, c


def _apply(h: np.ndarray, p: np.ndarray) -> np.ndarray:
    q = np.hstack([p, np.ones((len(p), 1))]) @ h.T
    return np.asarray(q[:, :2] / q[:, 2:3])


def _inside(pt: Point, poly: list[Point]) -> bool:
    x, y = pt
    n = len(poly)
    inside = False
    for i in range(n):
        x1, y1 = poly[i]
        x2, y2 = poly[(i + 1) % n]
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside
