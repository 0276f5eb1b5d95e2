"""Printed matter on the table (score sheets, rule cards, book pages, box labels): negatives only.

Real tables carry paper with text on it, and a corner-index reader that learned the vertical word
JOKER of many joker marks reads such text as the small joker (models/MODEL_CARD.md, eighth session).
This draws seeded random words (Hershey fonts, dark ink, sometimes vertical) on a light paper patch
that is laid on the table under the cards; it gets no labels, so the networks learn to ignore it.

>>> import numpy as np
>>> patch = printed_patch(np.random.default_rng(0), letter_px=14.0)
>>> patch.ndim, patch.shape[2], patch.dtype.name
(3, 4, 'uint8')
"""

from __future__ import annotations

import string

import cv2
import numpy as np
import numpy.typing as npt

FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
    cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
)


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
    base_h = cv2.getTextSize("H", font, 1.0, 1)[0][1]
    scale = letter_px / max(base_h, 1)
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
            cv2.putText(img, word, (x, y), font, scale, ink.tolist(), thick, cv2.LINE_AA)
            x += cv2.getTextSize(word + " ", font, scale, thick)[0][0]
    angle = 90.0 * int(rng.integers(4)) if rng.random() < 0.25 else float(rng.uniform(-30, 30))
    rgba = np.dstack([np.clip(img, 0, 255).astype(np.uint8), np.full((height, width), 255, np.uint8)])
    side = int(np.hypot(height, width)) + 2
    m = cv2.getRotationMatrix2D((width / 2, height / 2), angle, 1.0)
    m[:, 2] += (side / 2 - width / 2, side / 2 - height / 2)
    return cv2.warpAffine(rgba, m, (side, side), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0, 0))


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
