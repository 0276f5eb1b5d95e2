"""Procedural card decks drawn with OpenCV (no third-party art needed).

Each variant changes the font, the size and placement of the corner index, the colours (two- or
four-colour suits) and the card stock. Faces are BGRA ``uint8`` arrays with rounded, transparent
corners, ``FACE_H`` pixels high, same layout contract as the aisleriot faces: the corner index sits
top-left and again rotated 180° bottom-right.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from models.synth import fonts
from models.synth.randomised import random_variant
from models.synth.variants import BLACK, RED, SuitShape, Variant

#: A BGR colour as OpenCV draws it.
Colour = tuple[int, ...]

__all__ = ["BLACK", "RED", "SuitShape", "VARIANTS", "Variant", "draw_pip", "variant_params"]

FACE_H = 320
FACE_W = 228  # 63 x 88 mm poker card

RANK_TEXT = {"A": "A", "J": "J", "Q": "Q", "K": "K"}


VARIANTS: tuple[Variant, ...] = (
    Variant(cv2.FONT_HERSHEY_SIMPLEX, 3, 0.085, False, False, (250, 250, 250), True, (150, 40, 30)),
    Variant(cv2.FONT_HERSHEY_DUPLEX, 2, 0.075, False, False, (235, 245, 248), False, (40, 40, 170)),
    Variant(cv2.FONT_HERSHEY_TRIPLEX, 2, 0.10, False, False, (245, 248, 250), True, (60, 110, 40)),
    Variant(cv2.FONT_HERSHEY_SIMPLEX, 2, 0.07, True, True, (252, 252, 252), False, (120, 60, 20)),
    Variant(cv2.FONT_HERSHEY_COMPLEX, 2, 0.095, False, False, (225, 238, 245), True, (30, 30, 120)),
    Variant(cv2.FONT_HERSHEY_PLAIN, 3, 0.11, False, False, (248, 248, 248), False, (90, 90, 90)),
)

FOUR = {"S": (25, 25, 25), "H": (30, 30, 200), "D": (200, 110, 20), "C": (40, 140, 30)}


def variant_params(variant: int) -> Variant:
    """The drawing parameters of procedural variant ``variant``: 0-5 hand-made, any other number a
    seeded random deck (:func:`models.synth.randomised.random_variant`)."""
    if 0 <= variant < len(VARIANTS):
        return VARIANTS[variant]
    return random_variant(variant)


def suit_colour(v: Variant, suit: str) -> tuple[int, int, int]:
    if v.four_colour:
        return FOUR[suit]
    return v.red if suit in "HD" else v.black


def _stem(top: float, half: float, s: float, flared: bool) -> list[tuple[float, float]]:
    """A stem from (0, top) down to a foot ``half`` wide at y = s: a triangle, or concave (flared)."""
    if not flared:
        return [(0, top), (half, s), (-half, s)]
    ts = np.linspace(0.0, 1.0, 7)
    right = [(0.12 * half + 0.88 * half * t**2, top + (s - top) * t) for t in ts]
    return [*right, *[(-x, y) for x, y in reversed(right)]]


def draw_pip(
    img: np.ndarray,
    suit: str,
    cx: float,
    cy: float,
    size: float,
    colour: Colour,
    flip: bool = False,
    shape: SuitShape | None = None,
) -> None:
    """Draw a suit symbol of height ``size`` centred at (cx, cy); ``flip`` turns it upside down."""
    g = shape or SuitShape()
    if g.font is not None:
        if suit not in fonts.SUIT_CHARS:
            raise ValueError(suit)
        fonts.put_symbol(img, fonts.SUIT_CHARS[suit], (cx, cy), size, g.font, colour, sx=g.sx, flip=flip)
        return
    s = size / 2.0
    sign = -1.0 if flip else 1.0
    sh = 4  # fixed-point shift for sub-pixel drawing
    f = 1 << sh

    def P(x: float, y: float) -> tuple[int, int]:
        return int(round((cx + g.sx * x) * f)), int(round((cy + sign * y) * f))

    def circ(x: float, y: float, r: float) -> None:
        cv2.circle(img, P(x, y), int(round(r * f)), colour, -1, cv2.LINE_AA, sh)

    def poly(pts: Sequence[tuple[float, float]]) -> None:
        cv2.fillPoly(img, [np.array([P(x, y) for x, y in pts], np.int32)], colour, cv2.LINE_AA, sh)

    if suit == "D":
        w = g.diamond_w * s
        if g.diamond_bulge == 0.0:
            poly([(0, -s), (w, 0), (0, s), (-w, 0)])
        else:
            corners = [(0.0, -s), (w, 0.0), (0.0, s), (-w, 0.0)]
            pts = []
            for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1], strict=True):
                nx, ny = (y1 - y0), -(x1 - x0)  # outward normal (clockwise in image coordinates)
                norm = float(np.hypot(nx, ny)) or 1.0
                for t in np.linspace(0.0, 1.0, 8, endpoint=False):
                    b = g.diamond_bulge * s * 4 * t * (1 - t)
                    pts.append((x0 + (x1 - x0) * t + b * nx / norm, y0 + (y1 - y0) * t + b * ny / norm))
            poly(pts)
    elif suit == "H":
        r = g.heart_r * s
        circ(-g.heart_x * s, g.heart_y * s, r)
        circ(g.heart_x * s, g.heart_y * s, r)
        poly([(-g.heart_w * s, g.heart_cut * s), (g.heart_w * s, g.heart_cut * s), (0, s)])
    elif suit == "S":
        r = g.spade_r * s
        circ(-g.spade_x * s, g.spade_y * s, r)
        circ(g.spade_x * s, g.spade_y * s, r)
        poly([(-g.spade_w * s, g.spade_cut * s), (g.spade_w * s, g.spade_cut * s), (0, -s)])
        poly(_stem(g.spade_y * s, g.spade_stem * s, s, g.flared_stem))
    elif suit == "C":
        r = g.club_r * s
        circ(0, g.club_top * s, r)
        circ(-g.club_x * s, g.club_y * s, r)
        circ(g.club_x * s, g.club_y * s, r)
        circ(0, 0.0, g.club_centre * s)
        poly(_stem(0.0, g.club_stem * s, s, g.flared_stem))
    else:
        raise ValueError(suit)


def _round_alpha(h: int, w: int, r: int) -> np.ndarray:
    a = np.zeros((h, w), np.uint8)
    cv2.rectangle(a, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(a, (0, r), (w - 1, h - 1 - r), 255, -1)
    for x, y in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(a, (x, y), r, 255, -1, cv2.LINE_AA)
    return a


def _measure(text: str, v: Variant, scale: float, thick: int) -> tuple[int, int]:
    """Width and height above the baseline of ``text`` in the variant's font."""
    if isinstance(v.font, str):
        return fonts.text_size(text, v.font, scale, _stroke(thick), v.font_sx)
    (tw, th), _ = cv2.getTextSize(text, v.font, scale, thick)
    return tw, th


def _put(
    img: np.ndarray, text: str, org: tuple[int, int], v: Variant, scale: float, colour: Colour, thick: int
) -> None:
    """``cv2.putText`` for a Hershey font, :func:`models.synth.fonts.put_text` for an outline font."""
    if isinstance(v.font, str):
        fonts.put_text(img, text, org, v.font, scale, colour, _stroke(thick), v.font_sx)
    else:
        fonts.hershey_text(img, text, org, v.font, scale, colour, thick, cv2.LINE_AA)


def _stroke(thick: int) -> int:
    """An outline font's extra stroke for a Hershey thickness (1-4): bolder only at 4 and above."""
    return max(0, thick - 3)


def _text_size(text: str, v: Variant, height: float) -> tuple[float, int, int]:
    _, th = _measure(text, v, 1.0, v.thick)
    scale = height / max(th, 1)
    tw, th = _measure(text, v, scale, v.thick)
    return scale, tw, th


def _star_points(cx: float, cy: float, outer: float, inner: float) -> np.ndarray:
    """The 10 vertices (float, x y) of a five-pointed star centred at (cx, cy), a point upwards."""
    t = np.pi / 2 + np.arange(10) * np.pi / 5
    r = np.where(np.arange(10) % 2 == 0, outer, inner)
    return np.stack([cx + r * np.cos(t), cy - r * np.sin(t)], 1)


def _star(img: np.ndarray, cx: float, cy: float, r: float, colour: Colour) -> None:
    """A filled five-pointed star of outer radius ``r`` centred at (cx, cy), drawn sub-pixel."""
    pts = _star_points(cx, cy, r, 0.42 * r)
    cv2.fillPoly(img, [np.round(pts * 16).astype(np.int32)], colour, cv2.LINE_AA, 4)


def _draw_joker_mark(img: np.ndarray, v: Variant, colour: Colour, th_target: float, mx: int, my: int) -> None:
    """The joker's corner mark: JOKER written downwards, a star, or a shorter word over a star."""
    if v.joker_mark == "star":
        _star(img, mx + 0.55 * th_target, my + 0.6 * th_target, 0.55 * th_target, colour)
        return
    y = my
    height = th_target * (0.4 if v.joker_mark == "word" else 0.3)
    for ch in "JOKER":
        scale, tw, th = _text_size(ch, v, height)
        _put(img, ch, (mx + int(0.5 * (th_target * 0.5 - tw)), y + th), v, scale, colour, max(1, v.thick - 1))
        y += int(th * 1.3)
    if v.joker_mark == "word_star":
        _star(img, mx + 0.25 * th_target, y + 0.35 * th_target, 0.3 * th_target, colour)


def _draw_index(img: np.ndarray, v: Variant, rank: str, suit: str | None, colour: Colour) -> None:
    h, w = img.shape[:2]
    th_target = v.index_scale * h
    mx, my = int(v.margin[0] * w), int(v.margin[1] * h)
    if suit is None:
        _draw_joker_mark(img, v, colour, th_target, mx, my)
        return
    text = RANK_TEXT.get(rank, rank)
    scale, tw, th = _text_size(text, v, th_target)
    if rank == "10":  # squeeze the two digits
        scale *= 0.8
        tw, th = _measure(text, v, scale, v.thick)
    _put(img, text, (mx, my + th), v, scale, colour, v.thick)
    pip = th_target * v.pip_ratio
    if v.pip_beside:
        draw_pip(img, suit, mx + tw + 0.6 * pip, my + th / 2, pip, colour, shape=v.shape)
    else:
        cx = mx + max(tw, pip) / 2 if rank == "10" else mx + tw / 2
        draw_pip(img, suit, cx, my + th + v.pip_gap * th + pip / 2, pip, colour, shape=v.shape)


# pip positions for 2..10 in a (3 columns x 7 rows) grid: (col 0..2, row 0..6)
_LAYOUT: dict[int, list[tuple[int, float]]] = {
    2: [(1, 0), (1, 6)],
    3: [(1, 0), (1, 3), (1, 6)],
    4: [(0, 0), (2, 0), (0, 6), (2, 6)],
    5: [(0, 0), (2, 0), (1, 3), (0, 6), (2, 6)],
    6: [(0, 0), (2, 0), (0, 3), (2, 3), (0, 6), (2, 6)],
    7: [(0, 0), (2, 0), (1, 1.5), (0, 3), (2, 3), (0, 6), (2, 6)],
    8: [(0, 0), (2, 0), (1, 1.5), (0, 3), (2, 3), (1, 4.5), (0, 6), (2, 6)],
    9: [(0, 0), (2, 0), (0, 2), (2, 2), (1, 3), (0, 4), (2, 4), (0, 6), (2, 6)],
    10: [(0, 0), (2, 0), (1, 1), (0, 2), (2, 2), (0, 4), (2, 4), (1, 5), (0, 6), (2, 6)],
}


def _centre(
    img: np.ndarray, v: Variant, rank: str, suit: str, colour: Colour, rng: np.random.Generator
) -> None:
    h, w = img.shape[:2]
    x0, x1, y0, y1 = 0.36 * w, 0.64 * w, 0.2 * h, 0.8 * h
    if rank == "A":
        draw_pip(img, suit, w / 2, h / 2, 0.3 * h, colour, shape=v.shape)
        return
    if rank in ("J", "Q", "K"):
        fx0, fy0, fx1, fy1 = int(0.24 * w), int(0.16 * h), int(0.76 * w), int(0.84 * h)
        cols = [tuple(int(c) for c in rng.integers(30, 230, 3)) for _ in range(3)]
        cv2.rectangle(img, (fx0, fy0), (fx1, fy1), cols[0], -1)
        cv2.rectangle(img, (fx0, fy0), (fx1, fy1), colour, 2, cv2.LINE_AA)
        for i in range(6):
            yy = int(fy0 + (i + 0.5) * (fy1 - fy0) / 6)
            cv2.ellipse(
                img, (w // 2, yy), (int(0.18 * w), int(0.04 * h)), 0, 0, 360, cols[1 + i % 2], -1, cv2.LINE_AA
            )
        scale, tw, th = _text_size(rank, v, 0.18 * h)
        _put(img, rank, (w // 2 - tw // 2, h // 2 + th // 2), v, scale, colour, v.thick + 2)
        draw_pip(img, suit, fx0 + 0.09 * w, fy0 + 0.07 * h, 0.08 * h, colour, shape=v.shape)
        draw_pip(img, suit, fx1 - 0.09 * w, fy1 - 0.07 * h, 0.08 * h, colour, flip=True, shape=v.shape)
        return
    n = int(rank)
    for c, r in _LAYOUT[n]:
        cx = x0 + c * (x1 - x0) / 2
        cy = y0 + r * (y1 - y0) / 6
        draw_pip(img, suit, cx, cy, 0.11 * h, colour, flip=r > 3, shape=v.shape)


def draw_face(variant: int, card: str) -> np.ndarray:
    """BGRA face of ``card`` (``"10H"``, ``"SJ"``, ``"BJ"``, or ``"back"``) for a procedural variant."""
    v = variant_params(variant)
    h, w = FACE_H, FACE_W
    rng = np.random.default_rng(variant * 1000 + sum(map(ord, card)))
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = v.stock
    if card == "back":
        img[:] = v.back
        step = 14
        light = tuple(min(255, c + 70) for c in v.back)
        for k in range(-h, w + h, step):
            cv2.line(img, (k, 0), (k + h, h), light, 2, cv2.LINE_AA)
            cv2.line(img, (k, h), (k + h, 0), light, 2, cv2.LINE_AA)
        cv2.rectangle(img, (10, 10), (w - 11, h - 11), (245, 245, 245), 6)
    else:
        if card in ("SJ", "BJ"):
            colour = v.black if card == "SJ" else v.red
            rank, suit = "", None
        else:
            rank, suit = card[:-1], card[-1]
            colour = suit_colour(v, suit)
        for rot in range(2):
            _draw_index(img, v, rank, suit, colour)
            img = np.ascontiguousarray(img[::-1, ::-1])
            if rot == 0 and suit is None:
                # the joker's centre: a star, multicoloured for the big joker
                pts = _star_points(w / 2, h / 2, 0.3 * w, 0.13 * w)
                fill = (30, 30, 30) if card == "SJ" else (20, 180, 240)
                cv2.fillPoly(img, [pts.astype(np.int32)], fill, cv2.LINE_AA)
                if card == "BJ":
                    cv2.circle(img, (w // 2, h // 2), int(0.08 * w), v.red, -1, cv2.LINE_AA)
        if suit is not None:
            _centre(img, v, rank, suit, colour, rng)
        if v.border:
            cv2.rectangle(img, (5, 5), (w - 6, h - 6), (170, 170, 170), 1, cv2.LINE_AA)
    alpha = _round_alpha(h, w, int(0.055 * w))
    # a thin grey edge like a real card's cut
    edge = cv2.morphologyEx(alpha, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)) > 0
    img[edge] = (img[edge] * 0.6 + 60).astype(np.uint8)
    return np.dstack([img, alpha])
