"""Things that lie on a real table besides cards: paper, boxes, phones, cups, pens.

They are drawn into the table surface (under every card), through the camera homography, with a
soft shadow, so the detector learns that printed text and coloured blocks are not card indices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from models.synth.fonts import hershey_text
from models.synth.layout import Table, apply_h, rot

KINDS = ("paper", "box", "phone", "cup", "pen", "coaster")


@dataclass
class Item:
    """One object on the table (table mm)."""

    kind: str
    x: float
    y: float
    w: float
    h: float
    angle: float
    colour: tuple[float, float, float]
    seed: int

    def outline(self) -> np.ndarray:
        """Polygon of the object's footprint (table mm)."""
        if self.kind in ("cup", "coaster"):
            t = np.linspace(0, 2 * np.pi, 40, endpoint=False)
            pts = np.stack([self.w / 2 * np.cos(t), self.w / 2 * np.sin(t)], axis=1)
        else:
            hw, hh = self.w / 2, self.h / 2
            pts = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]])
        return (rot(self.angle) @ pts.T).T + [self.x, self.y]

    def draw(self, canvas: np.ndarray, view: np.ndarray, look: Any, px_per_mm: float) -> None:
        """Draw onto a float32 BGR canvas (in place)."""
        h, w = canvas.shape[:2]
        poly = apply_h(view, self.outline())
        x0, y0 = np.floor(poly.min(axis=0)).astype(int) - 8
        x1, y1 = np.ceil(poly.max(axis=0)).astype(int) + 8
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
        if x1 <= x0 or y1 <= y0:
            return
        rw, rh = x1 - x0, y1 - y0
        mask = np.zeros((rh, rw), np.uint8)
        q = ((poly - [x0 + 0.5, y0 + 0.5]) * 16).round().astype(np.int32)
        cv2.fillPoly(mask, [q], 255, cv2.LINE_AA, 4)
        a = mask.astype(np.float32) / 255
        roi = canvas[y0:y1, x0:x1]
        # shadow
        off = max(1, int(round(px_per_mm * (4 if self.kind in ("box", "cup") else 1.5))))
        sh = np.zeros_like(a)
        sh[off:, off:] = a[:-off, :-off]
        sh = np.asarray(cv2.blur(sh, (2 * off + 1, 2 * off + 1)))
        roi *= (1 - 0.35 * sh)[..., None]
        layer = np.empty((rh, rw, 3), np.float32)
        layer[:] = self.colour
        rng = np.random.default_rng(self.seed)
        hc = view @ _item_affine(self)
        if self.kind == "paper":  # lines of "text"
            for k in range(int(rng.integers(6, 25))):
                yy = -self.h / 2 + 15 + k * 7.5
                if yy > self.h / 2 - 10:
                    break
                xa = -self.w / 2 + 12
                xb = xa + rng.uniform(0.3, 1.0) * (self.w - 24)
                seg = apply_h(hc, np.array([[xa, yy], [xb, yy]])) - [x0, y0]
                cv2.line(
                    layer,
                    tuple(seg[0].astype(int)),
                    tuple(seg[1].astype(int)),
                    (60, 60, 60),
                    max(1, int(px_per_mm * 0.7)),
                    cv2.LINE_AA,
                )
        elif self.kind in ("box", "coaster"):  # printed blocks and letters
            for _ in range(int(rng.integers(2, 7))):
                cx, cy = rng.uniform(-0.4, 0.4) * self.w, rng.uniform(-0.4, 0.4) * max(self.h, 1)
                bw, bh = rng.uniform(0.1, 0.4) * self.w, rng.uniform(0.1, 0.4) * max(self.h, 1)
                box = apply_h(
                    hc,
                    np.array(
                        [[cx - bw, cy - bh], [cx + bw, cy - bh], [cx + bw, cy + bh], [cx - bw, cy + bh]]
                    ),
                ) - [x0, y0]
                cv2.fillPoly(layer, [box.astype(np.int32)], tuple(float(c) for c in rng.uniform(0, 255, 3)))
            if rng.random() < 0.7:
                org = apply_h(hc, np.array([[-0.3 * self.w, 0.0]]))[0] - [x0, y0]
                text = "".join(chr(int(c)) for c in rng.integers(65, 91, int(rng.integers(2, 6))))
                hershey_text(
                    layer,
                    text,
                    tuple(org.astype(int)),
                    cv2.FONT_HERSHEY_DUPLEX,
                    px_per_mm * self.w / 120,
                    tuple(float(c) for c in rng.uniform(0, 255, 3)),
                    max(1, int(px_per_mm * 2)),
                    cv2.LINE_AA,
                )
        elif self.kind == "phone":
            screen = apply_h(
                hc,
                np.array(
                    [
                        [-self.w / 2 + 4, -self.h / 2 + 8],
                        [self.w / 2 - 4, -self.h / 2 + 8],
                        [self.w / 2 - 4, self.h / 2 - 8],
                        [-self.w / 2 + 4, self.h / 2 - 8],
                    ]
                ),
            )
            cv2.fillPoly(
                layer,
                [(screen - [x0, y0]).astype(np.int32)],
                (25, 20, 20) if rng.random() < 0.6 else tuple(float(c) for c in rng.uniform(40, 200, 3)),
            )
        elif self.kind == "cup":
            c = apply_h(hc, np.array([[0.0, 0.0]]))[0] - [x0, y0]
            r = self.w / 2 * px_per_mm
            cv2.circle(
                layer,
                tuple(c.astype(int)),
                max(1, int(r * 0.82)),
                tuple(0.5 * np.array(self.colour)),
                -1,
                cv2.LINE_AA,
            )
            cv2.circle(layer, tuple(c.astype(int)), max(1, int(r * 0.7)), (30, 50, 80), -1, cv2.LINE_AA)
        layer += np.asarray(rng.normal(0, 3, layer.shape)).astype(np.float32)
        roi *= (1 - a)[..., None]
        roi += layer * a[..., None]


def _item_affine(it: Item) -> np.ndarray:
    r = rot(it.angle)
    return np.array([[r[0, 0], r[0, 1], it.x], [r[1, 0], r[1, 1], it.y], [0, 0, 1]])


def clutter(rng: np.random.Generator, table: Table, view: np.ndarray) -> list[Item]:
    """0–3 random objects on the table."""
    items = []
    for _ in range(int(rng.choice([0, 0, 1, 1, 2, 3]))):
        kind = str(rng.choice(KINDS))
        size = {
            "paper": (210, 297),
            "box": (rng.uniform(60, 200), rng.uniform(60, 200)),
            "phone": (72, 150),
            "cup": (85, 85),
            "pen": (9, 140),
            "coaster": (100, 100),
        }[kind]
        colour = {"paper": (235, 238, 240), "phone": (30, 30, 30), "pen": tuple(rng.uniform(0, 255, 3))}.get(
            kind, tuple(rng.uniform(30, 240, 3))
        )
        x, y = rng.uniform(0, table.width), rng.uniform(0, table.height)
        items.append(
            Item(
                kind,
                float(x),
                float(y),
                float(size[0]),
                float(size[1]),
                float(rng.uniform(0, 360)),
                (float(colour[0]), float(colour[1]), float(colour[2])),
                int(rng.integers(1 << 30)),
            )
        )
    return items
