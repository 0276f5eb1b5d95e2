"""Where cards lie on the table (table millimetres), the way players lay them.

A :class:`Placement` is one physical card: identity, face up or down, centre, rotation and design.
Play shapes (single, fan, straight row, messy pile) are generated in the play's own frame (x along
the row, y towards the player) and then turned to face the seat that played them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from calibration.table import Seat, default_zones
from engine.seats import SeatName
from models.synth.faces import FaceSet, load_faces

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
    role: str = "play"  # play | declare | captured | pile | bottom | hand
    seat: str | None = None
    lift: float = 0.0  # mm above the table (only changes the shadow)
    shadow: bool = True  # cast a shadow (a held fan casts one, from its middle card)


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
        poly = np.array(zones[cast(SeatName, seat)])  # outer edge first two points, inner last two
        outer = poly[:2].mean(axis=0)
        inner = poly[2:].mean(axis=0)
        return np.asarray(outer + 0.55 * (inner - outer))

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
        spread = card_w * 0.45
        return [
            (float(rng.normal(0, spread)), float(rng.normal(0, spread * 0.8)), float(rng.uniform(-50, 50)))
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


# --------------------------------------------------------------------------- random tables

PLAY_SIZES = (1, 1, 1, 2, 2, 2, 3, 4, 4, 5, 6, 6, 8, 10, 12, 14)


def _deck_pool(rng: np.random.Generator, fs: FaceSet, decks: int) -> list[str]:
    pool = [c for c in fs.cards() for _ in range(decks)]
    return [pool[i] for i in rng.permutation(len(pool))]


def _take_play(rng: np.random.Generator, pool: list[str], n: int) -> list[str]:
    """n cards for one play; pairs and tractors give identical cards side by side."""
    out: list[str] = []
    while len(out) < n and pool:
        c = pool.pop()
        out.append(c)
        if len(out) < n and rng.random() < 0.55 and c in pool:  # its twin from another deck
            pool.remove(c)
            out.append(c)
    return out


def random_layout(
    rng: np.random.Generator, table: Table, design: str, second: str | None = None
) -> list[Placement]:
    """A table in the middle of a deal: a trick in progress, captured points, piles, maybe the bottom."""
    fs = load_faces(design)
    cw = CARD_H_MM * fs.size[0] / fs.size[1]
    decks = int(rng.choice([2, 2, 3, 1]))
    pool = _deck_pool(rng, fs, decks)
    out: list[Placement] = []
    seats = ["S", "E", "N", "W"]
    # face-down piles near the seats (tricks already turned over)
    for seat in seats:
        if rng.random() < 0.55:
            edge = table.seat_edge(seat)
            c = table.zone_centre(seat) + (edge - table.zone_centre(seat)) * rng.uniform(0.3, 0.6)
            side = np.array([-(edge - c)[1], (edge - c)[0]])
            c = c + side / (np.linalg.norm(side) + 1e-9) * rng.normal(0, 120)
            cards = [pool.pop() for _ in range(min(len(pool), int(rng.integers(3, 16))))]
            out += lay(
                rng,
                cards,
                c,
                float(rng.uniform(0, 360)),
                "pile",
                design,
                cw,
                face_up=False,
                role="pile",
                seat=seat,
            )
    # the bottom, face down (or face up at the end)
    if rng.random() < 0.3:
        seat = seats[rng.integers(4)]
        c = (
            table.zone_centre(seat) * 0.5
            + np.array([table.width, table.height]) * 0.25
            + rng.normal(0, 40, 2)
        )
        cards = [pool.pop() for _ in range(min(len(pool), 8))]
        up = rng.random() < 0.4
        out += lay(
            rng,
            cards,
            c,
            float(rng.uniform(0, 360)),
            "row" if up else "pile",
            design,
            cw,
            face_up=up,
            role="bottom",
            seat=seat,
        )
    # defenders' captured point cards, face up in the centre
    if rng.random() < 0.7:
        pts = [c for c in pool if c[:-1] in ("5", "10", "K")]
        k = int(rng.integers(1, 13))
        chosen = pts[:k]
        for c in chosen:
            pool.remove(c)
        zones, centre = table.zones()
        cc = np.array(centre).mean(axis=0) + rng.normal(0, 25, 2)
        kind = str(rng.choice(["row", "fan", "pile"]))
        out += lay(
            rng,
            chosen,
            cc,
            float(rng.choice([0, 90, 180, -90]) + rng.normal(0, 10)),
            kind,
            design,
            cw,
            role="captured",
        )
    # the players' own hands, held at the table edge (backs to the camera)
    for seat in seats:
        if rng.random() < 0.35 and pool:
            held = [pool.pop() for _ in range(min(len(pool), int(rng.integers(4, 11))))]
            out += held_fan(rng, table, seat, held, design, cw)
    # the trick in progress
    leader = int(rng.integers(4))
    n_plays = int(rng.integers(1, 5))
    n = int(rng.choice(PLAY_SIZES))
    for j in range(n_plays):
        seat = seats[(leader + j) % 4]
        cards = _take_play(rng, pool, n)
        if not cards:
            break
        kind = (
            "single"
            if len(cards) == 1
            else str(rng.choice(["fan", "fan", "row", "pile"], p=[0.4, 0.2, 0.3, 0.1]))
        )
        angle = SEAT_ANGLE[seat] + (rng.uniform(-180, 180) if rng.random() < 0.2 else rng.normal(0, 8))
        c = table.zone_centre(seat) + rng.normal(0, 35, 2)
        d = second if (second and rng.random() < 0.5) else design
        out += lay(rng, cards, c, angle, kind, d, cw, role="play", seat=seat)
    return out


def closeup_layout(rng: np.random.Generator, table: Table, design: str) -> list[Placement]:
    """A hand of 6–20 fanned cards in the middle of the table (close-up photos)."""
    fs = load_faces(design)
    cw = CARD_H_MM * fs.size[0] / fs.size[1]
    pool = _deck_pool(rng, fs, 2)
    n = int(rng.integers(6, 21))
    cards = _take_play(rng, pool, n)
    c = np.array([table.width / 2, table.height / 2]) + rng.normal(0, 10, 2)
    return lay(rng, cards, c, float(rng.uniform(-180, 180)), "fan", design, cw, role="hand")


def loose_layout(rng: np.random.Generator, table: Table, design: str) -> list[Placement]:
    """1–5 cards dropped anywhere near the middle of a surface (phone photos of loose cards)."""
    fs = load_faces(design)
    pool = _deck_pool(rng, fs, 2)
    n = int(rng.integers(1, 6))
    c = np.array([table.width / 2, table.height / 2])
    out = []
    for card in _take_play(rng, pool, n):
        p = c + rng.normal(0, 55, 2)
        out.append(
            Placement(
                card,
                bool(rng.random() < 0.9),
                float(p[0]),
                float(p[1]),
                float(rng.uniform(0, 360)),
                design,
                role="loose",
            )
        )
    return out


def held_fan(
    rng: np.random.Generator,
    table: Table,
    seat: str,
    cards: list[str],
    design: str,
    card_w: float,
    anchor: np.ndarray | None = None,
) -> list[Placement]:
    """A player's hand of cards held at the table edge in front of ``seat``: a tight fan seen from
    the back (face down to the camera), at most 8 cards drawn, lifted above the table."""
    edge = table.seat_edge(seat)
    inward = np.array([table.width / 2, table.height / 2]) - edge
    inward /= np.linalg.norm(inward)
    if anchor is None:
        side = np.array([-inward[1], inward[0]])
        anchor = edge + inward * rng.uniform(20, 90) + side * rng.normal(0, 60)
    shown = cards[-8:]
    out = lay(
        rng,
        shown,
        anchor,
        SEAT_ANGLE[seat] + float(rng.normal(0, 6)),
        "fan",
        design,
        card_w,
        face_up=False,
        role="hand",
        seat=seat,
    )
    for i, p in enumerate(out):
        p.lift = 60.0
        p.shadow = i == len(out) // 2
    return out


def apply_h(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Apply a 3×3 homography to (N, 2) points."""
    p = np.asarray(pts, float).reshape(-1, 2)
    q = np.hstack([p, np.ones((len(p), 1))]) @ h.T
    return np.asarray(q[:, :2] / q[:, 2:3])
