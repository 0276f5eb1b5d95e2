"""Hands and forearms reaching over the table (the commonest occluder of an overhead card camera).

Shapes are built in table millimetres (forearm, sleeve, palm, fingers, thumb) and drawn by
:class:`models.synth.scene.Renderer`, which shades them and marks their pixels in the id map.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.synth.layout import Table

SKIN = [(150, 180, 230), (120, 160, 215), (95, 135, 190), (70, 100, 150), (50, 70, 110), (165, 195, 235)]


@dataclass
class Arm:
    """A forearm reaching from beyond the table edge to ``tip`` (table mm)."""

    seat: str
    start: tuple[float, float]
    tip: tuple[float, float]
    skin: tuple[int, int, int]
    sleeve: tuple[int, int, int]
    width: float = 75.0  # forearm width mm
    height_mm: float = 60.0  # above the table (shadow offset)
    spread: float = 0.5  # finger spread 0..1


def random_arm(rng: np.random.Generator, table: Table, seat: str, target: np.ndarray | None = None) -> Arm:
    """A forearm from ``seat`` reaching to ``target`` (default: the seat's zone); the visible arm is
    350–650 mm long, as from a person sitting at that edge."""
    edge = table.seat_edge(seat)
    out = edge - np.array([table.width / 2, table.height / 2])
    out = out / np.linalg.norm(out)
    side = np.array([-out[1], out[0]])
    if target is None:
        target = table.zone_centre(seat) + rng.normal(0, 60, 2)
    shoulder = edge + out * rng.uniform(250, 450) + side * rng.normal(0, 150)
    d = np.asarray(target, float) - shoulder
    reach = float(np.linalg.norm(d))
    length = min(reach, float(rng.uniform(350, 650)))
    start = np.asarray(target, float) - d / max(reach, 1e-6) * length
    base = SKIN[rng.integers(len(SKIN))]
    r, g, b = (int(np.clip(c * rng.uniform(0.85, 1.1), 0, 255)) for c in base)
    skin = (r, g, b)
    s0, s1, s2 = (int(c) for c in rng.integers(10, 230, 3))
    sleeve = (s0, s1, s2)
    return Arm(
        seat,
        (float(start[0]), float(start[1])),
        (float(target[0]), float(target[1])),
        skin,
        sleeve,
        float(rng.uniform(60, 85)),
        float(rng.uniform(30, 120)),
        float(rng.uniform(0, 1)),
    )


def _ellipse(c: np.ndarray, a: float, b: float, ang: float, n: int = 24) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    pts = np.stack([a * np.cos(t), b * np.sin(t)], axis=1)
    r = np.array([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
    return np.asarray(c + pts @ r.T)


def arm_polygons(arm: Arm) -> list[tuple[np.ndarray, str]]:
    """Polygons (table mm) of an arm: sleeve, forearm, palm, fingers, each tagged skin/sleeve."""
    s, t = np.array(arm.start), np.array(arm.tip)
    d = t - s
    length = np.linalg.norm(d)
    u = d / length
    n = np.array([-u[1], u[0]])
    ang = np.arctan2(u[1], u[0])
    palm_c = t - u * 55
    wrist = palm_c - u * 55
    w = arm.width / 2
    polys: list[tuple[np.ndarray, str]] = []
    forearm = np.array([s + n * w * 1.1, wrist + n * w * 0.8, wrist - n * w * 0.8, s - n * w * 1.1])
    polys.append((forearm, "skin"))
    cuff = wrist - u * min(length * 0.5, 120)
    sleeve = np.array([s + n * w * 1.3, cuff + n * w * 1.05, cuff - n * w * 1.05, s - n * w * 1.3])
    polys.append((sleeve, "sleeve"))
    polys.append((_ellipse(palm_c, 55, 45, ang), "skin"))
    for k in range(4):
        off = (k - 1.5) * (16 + 8 * arm.spread)
        base = palm_c + u * 35 + n * off
        fa = ang + np.deg2rad((k - 1.5) * 8 * arm.spread)
        tip = base + np.array([np.cos(fa), np.sin(fa)]) * 38
        polys.append((_ellipse((base + tip) / 2, 34, 9, fa, 16), "skin"))
    th_a = ang + (1 if arm.spread > 0.5 else -1) * np.deg2rad(60)
    th_base = palm_c + n * 40 * (1 if arm.spread > 0.5 else -1)
    polys.append((_ellipse(th_base + np.array([np.cos(th_a), np.sin(th_a)]) * 25, 30, 11, th_a, 16), "skin"))
    return polys
