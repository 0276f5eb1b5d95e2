"""Where cards lie on the table (table millimetres), the way players lay them.

A :class:`Placement` is one physical card: identity, face up or down, centre, rotation and design.
Play shapes (single, fan, straight row, messy pile) are generated in the play's own frame (x along
the row, y towards the player) and then turned to face the seat that played them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calibration.table import Seat, default_zones

CARD_H_MM = 88.0

# angle (degrees, counter-clockwise in the image) that turns a card to be read by each seat
SEAT_ANGLE: dict[str, float] = {"S": 0.0, "E": 90.0, "N": 180.0, "W": -90.0}


@dataclass
class Placement:
    """One card on the table."""

    card: str  # vision.labels notation (``10H``, ``SJ``)
    face_up: bool
    x: float  # centre, table mm
    y: float
    angle: float  # degrees, counter-clockwise as seen by the camera; 0 = upright for S
    design: str
    role: str = "play"  # play | captured | pile | bottom | hand
    seat: str | None = None
    lift: float = 0.0  # mm above the table (only changes the shadow)


@dataclass
class Table:
    """Table size and zones in mm (square or rectangular)."""

    width: float = 900.0
    height: float = 900.0

    def zones(self) -> tuple[dict[Seat, list[tuple[float, float]]], list[tuple[float, float]]]:
        return default_zones(self.width, self.height)

    def zone_centre(self, seat: str) -> np.ndarray:
        """A point in the middle of a seat's zone (towards the centre, where plays land)."""
        zones, _ = self.zones()
        poly = np.array(zones[seat])  # outer edge first two points, inner last two
        outer = poly[:2].mean(axis=0)
        inner = poly[2:].mean(axis=0)
        return outer + 0.55 * (inner - outer)

    def seat_edge(self, seat: str) -> np.ndarray:
        """A point on the table edge in front of a seat."""
        w, h = self.width, self.height
        return {
            "S": np.array([w / 2, h]),
            "N": np.array([w / 2, 0.0]),
            "E": np.array([w, h / 2]),
            "W": np.array([0.0, h / 2]),
        }[seat]


def rot(angle_deg: float) -> np.ndarray:
    """2×2 rotation, counter-clockwise in an image whose y axis points down."""
    a = np.deg2rad(angle_deg)
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, s], [-s, c]])


def shape_offsets(
    rng: np.random.Generator, n: int, kind: str, card_w: float
) -> list[tuple[float, float, float]]:
    """Offsets (dx, dy, dangle) of ``n`` cards laid as ``kind`` in the play's frame, bottom card first."""
    h = CARD_H_MM
    if kind == "single" or n == 1:
        return [(0.0, 0.0, float(rng.normal(0, 4)))]
    if kind == "fan":
        spacing = card_w * rng.uniform(0.2, 0.38)
        step = rng.uniform(0, 7) if rng.random() < 0.7 else 0.0
        radius = h * rng.uniform(0.9, 2.0)
        out = []
        for k in range(n):
            t = k - (n - 1) / 2
            if step > 0:
                a = t * step
                ang = np.deg2rad(a)
                # rotate about a pivot below the cards, then stretch so spacing holds
                dx = radius * np.sin(ang) * spacing / (radius * np.sin(np.deg2rad(step)) + 1e-9)
                dy = radius * (1 - np.cos(ang))
                out.append((float(dx), float(dy), float(-a + rng.normal(0, 1))))
            else:
                out.append((t * spacing, float(rng.normal(0, 1.5)), float(rng.normal(0, 1.5))))
        return out
    if kind == "row":
        spacing = card_w * rng.uniform(0.55, 1.1)
        rows = 1 if n <= 8 else 2
        per = int(np.ceil(n / rows))
        out = []
        for k in range(n):
            r, c = divmod(k, per)
            out.append(
                (
                    (c - (per - 1) / 2) * spacing + rng.normal(0, 2),
                    r * h * rng.uniform(0.35, 0.6) - 20 * r,
                    float(rng.normal(0, 4)),
                )
            )
        return out
    if kind == "pile":
        r = card_w * 0.45
        return [
            (float(rng.normal(0, r)), float(rng.normal(0, r * 0.8)), float(rng.uniform(-50, 50)))
            for _ in range(n)
        ]
    raise ValueError(kind)


def lay(
    rng: np.random.Generator,
    cards: list[str],
    centre: np.ndarray,
    base_angle: float,
    kind: str,
    design: str,
    card_w: float,
    *,
    face_up: bool = True,
    role: str = "play",
    seat: str | None = None,
) -> list[Placement]:
    """Placements of ``cards`` laid as ``kind`` around ``centre`` and turned by ``base_angle``."""
    offs = shape_offsets(rng, len(cards), kind, card_w)
    r = rot(base_angle)
    out = []
    for card, (dx, dy, da) in zip(cards, offs, strict=True):
        p = centre + r @ np.array([dx, dy])
        out.append(Placement(card, face_up, float(p[0]), float(p[1]), base_angle + da, design, role, seat))
    return out
