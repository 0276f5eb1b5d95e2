"""Procedural table surfaces (felt, cloth, wood, plastic) in table coordinates, 1 px per ``mm_per_px`` mm."""

from __future__ import annotations

from typing import cast

import cv2
import numpy as np
import numpy.typing as npt

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
        fine = np.asarray(cv2.GaussianBlur(fine, (0, 0), 0.8))
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
            return np.asarray(np.clip(img * shade[..., None], 0, 255).astype(np.float32))
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
        streak = np.asarray(cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC))
        streak = cast(
            "npt.NDArray[np.float32]", cv2.GaussianBlur(streak, (0, 0), sigmaX=0.1, sigmaY=max(0.4, 0.4 * mm))
        )
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
        speck = np.asarray(cv2.GaussianBlur(speck, (0, 0), max(0.5, rng.uniform(0.4, 1.2) * mm)))
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
        return np.asarray(np.clip(img, 0, 255).astype(np.float32))
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


#: Surfaces the table textures above do not draw, and on which a phone photo's cards often lie:
#: drawn only where asked (:func:`bare_surface`), so every seeded table texture stays as it was.
BARE_KINDS = ("speckled", "terrazzo", "granite", "plain", "paper")


def bare_surface(rng: np.random.Generator, px: int, kind: str | None = None) -> np.ndarray:
    """A ``px`` × ``px`` float32 BGR surface of a kind in :data:`BARE_KINDS`: counter tops and floors
    speckled with small dark dots, stone chips, granite, plain bright laminate or paper with an
    uneven light. Negatives for the localiser: nothing on them is a card.

    >>> s = bare_surface(np.random.default_rng(0), 64, "speckled")
    >>> s.shape, s.dtype.name, bool(s.min() >= 0 and s.max() <= 255)
    ((64, 64, 3), 'float32', True)
    """
    kind = kind or BARE_KINDS[int(rng.integers(len(BARE_KINDS)))]
    if kind not in BARE_KINDS:
        raise ValueError(f"bare surface {kind!r}: one of {BARE_KINDS}")
    h = w = px
    light = float(rng.uniform(150, 250))
    base = np.clip(light * rng.uniform(0.85, 1.1, 3), 0, 255).astype(np.float32)
    if kind == "granite" or (kind == "terrazzo" and rng.random() < 0.3):
        base = np.clip(rng.uniform(40, 200) * rng.uniform(0.8, 1.15, 3), 0, 255).astype(np.float32)
    img = np.broadcast_to(base, (h, w, 3)).astype(np.float32).copy()
    if kind == "speckled":  # small dark (or coloured) dots, 1-6 px across, hundreds to thousands
        n = int(rng.integers(px * px // 800, px * px // 60 + 1))
        xs, ys = rng.uniform(0, w, n), rng.uniform(0, h, n)
        radii = np.exp(rng.uniform(np.log(0.6), np.log(3.2), n))
        dark = rng.random() < 0.75
        canvas = img.astype(np.uint8)  # drawn in 8 bits: OpenCV 5 draws on 8-bit images only
        for x, y, r in zip(xs, ys, radii, strict=True):
            c = rng.uniform(0, 90, 3) if dark else rng.uniform(0, 255, 3)
            cv2.circle(canvas, (int(x * 4), int(y * 4)), max(1, int(r * 4)), c.tolist(), -1, cv2.LINE_AA, 2)
        img = np.asarray(cv2.GaussianBlur(canvas.astype(np.float32), (0, 0), float(rng.uniform(0.3, 0.9))))
    elif kind == "terrazzo":  # stone chips of a few colours and sizes
        colours = rng.uniform(0, 255, (int(rng.integers(2, 5)), 3))
        canvas = img.astype(np.uint8)
        for _ in range(int(rng.integers(px * px // 3000, px * px // 400 + 1))):
            c = colours[int(rng.integers(len(colours)))]
            centre = rng.uniform(0, px, 2)
            k = int(rng.integers(3, 7))
            r = float(np.exp(rng.uniform(np.log(1.5), np.log(max(2.0, px / 40)))))
            ang = np.sort(rng.uniform(0, 2 * np.pi, k))
            pts = centre + np.stack([np.cos(ang), np.sin(ang)], 1) * r * rng.uniform(0.5, 1.0, (k, 1))
            cv2.fillPoly(canvas, [pts.astype(np.int32)], c.tolist(), cv2.LINE_AA)
        img = canvas.astype(np.float32)
    elif kind == "granite":  # crystals: thresholded noise at two scales, three tones
        for scale, tone in ((px / 60, rng.uniform(0, 80, 3)), (px / 150, rng.uniform(120, 255, 3))):
            noise = cv2.GaussianBlur(rng.standard_normal((h, w)).astype(np.float32), (0, 0), max(0.5, scale))
            mask = (noise > np.quantile(noise, rng.uniform(0.6, 0.85))).astype(np.float32)[..., None]
            img = img * (1 - mask) + tone[None, None, :] * mask
    elif kind == "paper":  # fibres: faint streaks along one direction
        streak = cv2.resize(rng.standard_normal((h, max(2, w // 30))).astype(np.float32), (w, h))
        img *= (1 + 0.03 * streak)[..., None]
    # uneven light across the surface, and grain
    img *= (1 + rng.uniform(0.05, 0.3) * smooth_noise(rng, h, w, 2))[..., None]
    img += rng.normal(0, rng.uniform(1, 5), img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.float32)
