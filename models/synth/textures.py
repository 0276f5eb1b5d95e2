"""Procedural table surfaces (felt, cloth, wood, plastic) in table coordinates, 1 px per ``mm_per_px`` mm."""

from __future__ import annotations

import cv2
import numpy as np

KINDS = ("felt", "cloth", "wood", "laminate", "carpet", "rug")


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
    elif kind in ("carpet", "rug"):
        choices = [
            (110, 140, 170),
            (70, 90, 110),
            (150, 160, 170),
            (60, 60, 70),
            (90, 110, 150),
            (40, 50, 80),
        ]
    else:
        choices = [(220, 220, 215), (180, 190, 200), (120, 120, 120), (210, 230, 240), (60, 90, 130)]
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
        fine = rng.standard_normal((h, w), dtype=np.float32)
        fine = cv2.GaussianBlur(fine, (0, 0), 0.8)
        shade = 1 + 0.06 * low + 0.05 * fine
    elif kind == "cloth":
        y = np.arange(h, dtype=np.float32)[:, None]
        x = np.arange(w, dtype=np.float32)[None, :]
        period = rng.uniform(1.5, 3.0) * px / size_mm  # a thread every 1.5..3 mm
        weave = np.sin(2 * np.pi * x / period) * np.sin(2 * np.pi * y / period)
        shade = 1 + 0.05 * low + 0.05 * weave + 0.03 * rng.standard_normal((h, w), dtype=np.float32)
        if rng.random() < 0.4:  # checks or stripes
            cell = rng.uniform(20, 60) * px / size_mm
            chk = ((x // cell + (y // cell) * (rng.random() < 0.5)) % 2).astype(np.float32)
            alt = _palette(rng, "cloth")
            img = base[None, None, :] * (1 - chk[..., None]) + alt[None, None, :] * chk[..., None]
            return np.clip(img * shade[..., None], 0, 255).astype(np.float32)
    elif kind == "wood":
        mm = px / size_mm
        y = np.arange(h, dtype=np.float32)[:, None] / mm
        warp = smooth_noise(rng, h, w, 3) * rng.uniform(3, 12) + smooth_noise(rng, h, w, 12) * rng.uniform(
            0.5, 2
        )
        period = rng.uniform(2.5, 9.0)  # mm between growth rings
        ring = np.sin(2 * np.pi * (y + warp) / period)
        ring = np.sign(ring) * np.abs(ring) ** 0.5
        # long fibres: noise stretched ~25 mm along the grain (resize instead of a huge blur kernel)
        coarse = rng.standard_normal((h, max(4, int(w / max(1.0, 25 * mm)))), dtype=np.float32)
        streak = cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC)
        streak = cv2.GaussianBlur(streak, (0, 0), sigmaX=0.1, sigmaY=max(0.4, 0.4 * mm))
        streak /= streak.std() + 1e-6
        shade = 1 + 0.07 * ring + 0.06 * streak + 0.08 * low
        if rng.random() < 0.6:  # planks
            plank = rng.uniform(90, 200) * mm
            seam = (np.abs((y * mm % plank) - plank / 2) > plank / 2 - max(1.0, 0.8 * mm)).astype(np.float32)
            shade = shade * (1 - 0.45 * seam)
            shade = shade * (1 + 0.08 * np.sin(np.floor(y * mm / plank) * 2.3))
        if rng.random() < 0.5:
            shade = shade.T.copy()
    elif kind in ("carpet", "rug"):
        # loops of yarn: speckles a few mm wide in two or three tones
        mm = px / size_mm
        speck = rng.standard_normal((h, w), dtype=np.float32)
        speck = cv2.GaussianBlur(speck, (0, 0), max(0.5, rng.uniform(0.4, 1.2) * mm))
        speck /= speck.std() + 1e-6
        alt = _palette(rng, kind)
        mix = np.clip(0.5 + rng.uniform(0.3, 0.6) * speck, 0, 1)
        if kind == "rug":  # stripes of varying width
            y = np.arange(h, dtype=np.float32)[:, None] / mm
            stripes = (np.sin(y / rng.uniform(4, 20)) + 0.6 * np.sin(y / rng.uniform(1.5, 6) + 1.0)) > 0
            mix = np.clip(mix * 0.5 + 0.5 * stripes.astype(np.float32), 0, 1)
            mix = np.broadcast_to(mix, (h, w)).copy()
            if rng.random() < 0.5:
                mix = mix.T.copy()
        img = base[None, None, :] * (1 - mix[..., None]) + alt[None, None, :] * mix[..., None]
        img *= (1 + 0.08 * low)[..., None]
        return np.clip(img, 0, 255).astype(np.float32)
    else:
        shade = 1 + 0.03 * low + 0.02 * rng.standard_normal((h, w), dtype=np.float32)
    img = base[None, None, :] * shade[..., None]
    return np.clip(img, 0, 255).astype(np.float32)


def background(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """What lies around the table: a dark floor / room, float32 BGR."""
    base = rng.uniform(20, 90, 3).astype(np.float32)
    sh, sw = max(2, h // 4), max(2, w // 4)
    low = smooth_noise(rng, sh, sw, 5)
    small = np.clip(base[None, None, :] * (1 + 0.3 * low[..., None]), 0, 255).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
