"""Printed matter on the table (score sheets, rule cards, book pages, box labels): negatives only.

Real tables carry paper with text on it, and a corner-index reader that learned the vertical word
JOKER of many joker marks reads such text as the small joker (docs/experiments/reader-history.md).
This draws seeded random words (Hershey fonts, dark ink, sometimes vertical) on a light paper patch
that is laid on the table under the cards; it gets no labels, so the networks learn to ignore it.

>>> import numpy as np
>>> patch = printed_patch(np.random.default_rng(0), letter_px=14.0)
>>> patch.ndim, patch.shape[2], patch.dtype.name
(3, 4, 'uint8')
"""

from __future__ import annotations

import string
from typing import cast

import cv2
import numpy as np
import numpy.typing as npt

from models.synth.fonts import hershey_text

FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
    cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
)


def _font_scale(font: int, letter_px: float) -> float:
    """The ``cv2.putText`` scale at which ``font``'s capitals are ``letter_px`` tall."""
    return letter_px / max(cv2.getTextSize("H", font, 1.0, 1)[0][1], 1)


def _word(rng: np.random.Generator) -> str:
    letters = string.ascii_uppercase if rng.random() < 0.4 else string.ascii_lowercase
    if rng.random() < 0.15:
        letters = string.digits
    return "".join(letters[int(rng.integers(len(letters)))] for _ in range(int(rng.integers(1, 9))))


def printed_patch(rng: np.random.Generator, letter_px: float) -> npt.NDArray[np.uint8]:
    """A BGRA paper patch with lines of random words whose capitals are about ``letter_px`` tall.

    The patch is opaque (alpha 255) paper, turned by a random angle (a quarter of them vertical
    text), with transparent corners after the turn.
    """
    font = FONTS[int(rng.integers(len(FONTS)))]
    scale = _font_scale(font, letter_px)
    thick = max(1, int(round(scale * rng.uniform(1.0, 2.2))))
    line_h = int(letter_px * rng.uniform(1.5, 2.2))
    rows = int(rng.integers(1, 7))
    width = int(letter_px * rng.uniform(6, 22))
    height = line_h * rows + int(letter_px)
    paper = np.array([rng.uniform(215, 255), rng.uniform(215, 255), rng.uniform(215, 255)])
    ink = np.array([rng.uniform(0, 70)] * 3) if rng.random() < 0.8 else rng.uniform(0, 160, 3)
    img = np.empty((height, width, 3), np.float32)
    img[:] = paper
    for r in range(rows):
        x = int(rng.uniform(0, letter_px))
        y = int(letter_px * 0.5) + line_h * (r + 1) - (line_h - int(letter_px)) // 2
        while x < width:
            word = _word(rng)
            hershey_text(img, word, (x, y), font, scale, ink.tolist(), thick, cv2.LINE_AA)
            x += cv2.getTextSize(word + " ", font, scale, thick)[0][0]
    angle = 90.0 * int(rng.integers(4)) if rng.random() < 0.25 else float(rng.uniform(-30, 30))
    rgba = np.dstack([np.clip(img, 0, 255).astype(np.uint8), np.full((height, width), 255, np.uint8)])
    side = int(np.hypot(height, width)) + 2
    m = cv2.getRotationMatrix2D((width / 2, height / 2), angle, 1.0)
    m[:, 2] += np.array((side / 2 - width / 2, side / 2 - height / 2))
    return cast(
        "npt.NDArray[np.uint8]",
        cv2.warpAffine(rgba, m, (side, side), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0, 0)),
    )


def lay_printed(canvas: npt.NDArray[np.float32], rng: np.random.Generator, letter_px: float) -> None:
    """Lay one printed patch at a random place on a float BGR canvas (in place)."""
    patch = printed_patch(rng, letter_px)
    h, w = canvas.shape[:2]
    ph, pw = patch.shape[:2]
    x0 = int(rng.integers(-pw // 2, max(w - pw // 2, 1)))
    y0 = int(rng.integers(-ph // 2, max(h - ph // 2, 1)))
    xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x0 + pw, w), min(y0 + ph, h)
    if xa >= xb or ya >= yb:
        return
    part = patch[ya - y0 : yb - y0, xa - x0 : xb - x0].astype(np.float32)
    alpha = part[:, :, 3:4] / 255.0
    canvas[ya:yb, xa:xb] = canvas[ya:yb, xa:xb] * (1 - alpha) + part[:, :, :3] * alpha


#: kinds of printed sheet on a table: (name, width mm range, height mm range, capital height mm range)
SHEETS = (
    ("page", (110.0, 210.0), (150.0, 297.0), (1.6, 4.0)),  # book page, letter, rules digest
    ("score", (100.0, 210.0), (140.0, 297.0), (3.0, 9.0)),  # score sheet: a grid with marks in it
    ("card", (55.0, 100.0), (80.0, 140.0), (2.0, 6.0)),  # rule card, flyer
    ("label", (35.0, 120.0), (25.0, 90.0), (4.0, 18.0)),  # box label, packaging
)


def _text_lines(
    img: npt.NDArray[np.float32],
    rng: np.random.Generator,
    box: tuple[int, int, int, int],
    letter_px: float,
    ink: list[float],
) -> None:
    """Fill ``box`` (x0, y0, x1, y1) of ``img`` with lines of random words, capitals ``letter_px`` tall."""
    font = FONTS[int(rng.integers(len(FONTS)))]
    scale = _font_scale(font, letter_px)
    thick = max(1, int(round(scale * rng.uniform(1.0, 2.0))))
    line_h = max(2, int(letter_px * rng.uniform(1.4, 2.2)))
    x0, y0, x1, y1 = box
    y = y0 + int(letter_px) + 1
    while y <= y1:
        x = x0 + int(rng.uniform(0, 3 * letter_px)) if rng.random() < 0.2 else x0
        end = x0 + (x1 - x0) * (rng.uniform(0.3, 1.0) if rng.random() < 0.15 else 1.0)
        while True:
            word = _word(rng)
            wx = cv2.getTextSize(word + " ", font, scale, thick)[0][0]
            if x + wx > end:
                break
            hershey_text(img, word, (x, y), font, scale, ink, thick, cv2.LINE_AA)
            x += wx
        y += line_h


def printed_sheet(
    rng: np.random.Generator, kind: str, width_px: int, height_px: int, letter_px: float
) -> npt.NDArray[np.float32]:
    """A float BGR sheet of ``kind`` (see :data:`SHEETS`): pages of dense text, score grids, labels.

    >>> import numpy as np
    >>> printed_sheet(np.random.default_rng(0), "score", 120, 160, 6.0).shape
    (160, 120, 3)
    """
    if kind not in {k for k, *_ in SHEETS}:
        raise ValueError(f"unknown sheet kind {kind!r}")
    img = np.empty((height_px, width_px, 3), np.float32)
    if kind == "label" and rng.random() < 0.6:
        img[:] = rng.uniform(20, 255, 3)
    else:
        img[:] = [rng.uniform(205, 255)] * 3 + rng.uniform(-8, 8, 3)
    ink = [float(v) for v in ([rng.uniform(0, 70)] * 3 if rng.random() < 0.8 else rng.uniform(0, 170, 3))]
    margin = int(min(width_px, height_px) * rng.uniform(0.04, 0.12))
    x0, y0, x1, y1 = margin, margin, width_px - margin, height_px - margin
    if kind in ("page", "card") and rng.random() < 0.5:  # a heading in bigger letters
        head = letter_px * rng.uniform(1.6, 3.0)
        _text_lines(img, rng, (x0, y0, x1, y0 + int(head * 1.5)), head, ink)
        y0 += int(head * 2.5)
    if kind == "score":  # ruled grid; each cell holds a short mark (digits, letters, ticks)
        cols, rows = int(rng.integers(2, 7)), int(rng.integers(6, 25))
        cw, rh = (x1 - x0) / cols, (y1 - y0) / rows
        line = max(1, int(letter_px / 6))
        for c in range(cols + 1):
            cv2.line(img, (int(x0 + c * cw), y0), (int(x0 + c * cw), y1), ink, line, cv2.LINE_AA)
        for r in range(rows + 1):
            cv2.line(img, (x0, int(y0 + r * rh)), (x1, int(y0 + r * rh)), ink, line, cv2.LINE_AA)
        marks = string.digits * 3 + "AJQK+-/"
        for r in range(rows):
            for c in range(cols):
                if rng.random() < 0.6:
                    text = "".join(
                        marks[int(rng.integers(len(marks)))] for _ in range(int(rng.integers(1, 4)))
                    )
                    font = FONTS[int(rng.integers(len(FONTS)))]
                    lp = min(letter_px, rh * 0.7)
                    scale = _font_scale(font, lp)
                    org = (int(x0 + c * cw + rng.uniform(0.05, 0.4) * cw), int(y0 + (r + 0.5) * rh + lp / 2))
                    hershey_text(img, text, org, font, scale, ink, max(1, int(scale * 1.5)), cv2.LINE_AA)
    else:
        _text_lines(img, rng, (x0, y0, x1, y1), letter_px, ink)
    return img


def lay_sheets(
    canvas: npt.NDArray[np.float32],
    view: npt.NDArray[np.float64],
    table_mm: tuple[float, float],
    rng: np.random.Generator,
    px_per_mm: float,
    near: list[tuple[float, float]],
    count: int,
) -> None:
    """Lay ``count`` printed sheets on the table surface of a float BGR ``canvas`` (in place).

    ``view`` maps table mm to image px; a sheet lies near one of the ``near`` points (table mm, e.g.
    the cards in play) half the time, anywhere on the table otherwise, at any angle.
    """
    h, w = canvas.shape[:2]
    for _ in range(count):
        kind, (wa, wb), (ha, hb), (la, lb) = SHEETS[int(rng.integers(len(SHEETS)))]
        sw, sh, letter_mm = rng.uniform(wa, wb), rng.uniform(ha, hb), rng.uniform(la, lb)
        res = float(np.clip(px_per_mm * 1.3, 1.0, 6.0))  # sheet px per mm: a little above the camera's
        res = min(res, 2000.0 / max(sw, sh))
        sheet = printed_sheet(rng, kind, max(8, int(sw * res)), max(8, int(sh * res)), letter_mm * res)
        if near and rng.random() < 0.5:
            cx, cy = near[int(rng.integers(len(near)))]
            cx, cy = cx + rng.normal(0, 120), cy + rng.normal(0, 120)
        else:
            cx, cy = rng.uniform(0, table_mm[0]), rng.uniform(0, table_mm[1])
        a = np.radians(rng.uniform(0, 360))
        place = np.array([[np.cos(a), -np.sin(a), cx], [np.sin(a), np.cos(a), cy], [0, 0, 1]])
        to_mm = np.array([[1 / res, 0, -sw / 2], [0, 1 / res, -sh / 2], [0, 0, 1]])
        half = np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1]])
        m = np.linalg.inv(half) @ view @ place @ to_mm @ half  # sheet px centres -> image px centres
        opaque = np.dstack([sheet, np.ones(sheet.shape[:2], np.float32)])  # BGR + coverage, one warp
        warped = cv2.warpPerspective(opaque, m, (w, h), flags=cv2.INTER_LINEAR)
        alpha = warped[:, :, 3:4]
        canvas *= 1 - alpha
        canvas += warped[:, :, :3] * alpha
