"""Procedural table surfaces (felt, cloth, wood, plastic) in table coordinates, 1 px per ``mm_per_px`` mm."""

from __future__ import annotations

import cv2
import numpy as np

KINDS = ("felt", "cloth", "wood", "laminate")


def smooth_noise(rng: np.random.Generator, h: int, w: int, cells: int) -> np.ndarray:
    """Low-frequency noise in [-1, 1] of size (h, w), ``cells`` random values across the longer side."""
    gh = max(2, int(round(cells * h / max(h, w))) + 1)
    gw = max(2, int(round(cells * w / max(h, w))) + 1)
    g = rng.uniform(-1, 1, (gh, gw)).astype(np.float32)
    return cv2.resize(g, (w, h), interpolation=cv2.INTER_CUBIC)


def _palette(rng: np.random.Generator, kind: str) -> np.ndarray:
    if kind == "felt":
        choices = [(40, 110, 30), (35, 90, 40), (110, 60, 20), (30, 40, 120), (60, 60, 60), (90, 40, 30)]
    elif kind == "cloth":
        choices = [
            (200, 200, 200),
            (150, 170, 190),
            (60, 60, 150),
            (170, 140, 110),
            (90, 120, 70),
            (40, 40, 40),
        ]
    elif kind == "wood":
        choices = [(60, 100, 150), (40, 70, 110), (90, 140, 190), (30, 50, 80)]
    else:
        choices = [(220, 220, 215), (180, 190, 200), (120, 120, 120), (210, 230, 240)]
    base = np.array(choices[rng.integers(len(choices))], np.float32)
    return np.clip(base * rng.uniform(0.8, 1.2, 3), 0, 255)


def table_texture(
    rng: np.random.Generator, size_mm: float, px: int = 720, kind: str | None = None
) -> np.ndarray:
    """A square BGR table surface ``px`` × ``px`` covering ``size_mm`` mm (float32, 0..255)."""
    kind = kind or KINDS[rng.integers(len(KINDS))]
    base = _palette(rng, kind)
    h = w = px
    low = smooth_noise(rng, h, w, 6)
    if kind == "felt":
        fine = rng.normal(0, 1, (h, w)).astype(np.float32)
        fine = cv2.GaussianBlur(fine, (0, 0), 0.8)
        shade = 1 + 0.06 * low + 0.05 * fine
    elif kind == "cloth":
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        period = rng.uniform(1.5, 3.0) * px / size_mm  # a thread every 1.5..3 mm
        weave = np.sin(2 * np.pi * x / period) * np.sin(2 * np.pi * y / period)
        shade = 1 + 0.05 * low + 0.05 * weave + 0.03 * rng.normal(0, 1, (h, w)).astype(np.float32)
        if rng.random() < 0.4:  # checks or stripes
            cell = rng.uniform(20, 60) * px / size_mm
            chk = ((x // cell + (y // cell) * (rng.random() < 0.5)) % 2).astype(np.float32)
            alt = _palette(rng, "cloth")
            img = base[None, None, :] * (1 - chk[..., None]) + alt[None, None, :] * chk[..., None]
            return np.clip(img * shade[..., None], 0, 255).astype(np.float32)
    elif kind == "wood":
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        warp = smooth_noise(rng, h, w, 4) * rng.uniform(10, 40)
        freq = rng.uniform(0.08, 0.25) * size_mm / px
        ring = np.sin(2 * np.pi * freq * (y + warp + 3 * smooth_noise(rng, h, w, 40)))
        streak = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), sigmaX=8, sigmaY=0.6)
        shade = 1 + 0.12 * ring + 0.08 * streak + 0.05 * low
        if rng.random() < 0.5:
            shade = shade.T.copy()
        # planks
        if rng.random() < 0.5:
            plank = rng.uniform(90, 200) * px / size_mm
            seams = np.abs((x % plank) - plank / 2) > plank / 2 - 1.2
            shade = shade * np.where(seams, 0.6, 1.0).astype(np.float32)
    else:
        shade = 1 + 0.03 * low + 0.02 * rng.normal(0, 1, (h, w)).astype(np.float32)
    img = base[None, None, :] * shade[..., None]
    return np.clip(img, 0, 255).astype(np.float32)


def background(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """What lies around the table: a dark floor / room, float32 BGR."""
    base = rng.uniform(20, 90, 3).astype(np.float32)
    low = smooth_noise(rng, h, w, 5)
    return np.clip(base[None, None, :] * (1 + 0.3 * low[..., None]), 0, 255).astype(np.float32)
