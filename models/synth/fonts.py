"""Outline fonts for the randomised decks' indices, drawn with Pillow like ``cv2.putText`` draws Hershey.

The first randomised decks (``proc100`` … ``proc199``) write their ranks in OpenCV's six Hershey
stroke fonts. A classifier trained on those and on the aisleriot / KDE decks still misreads unseen
designs' glyphs: 6 ↔ 9, 10 ↔ Q, 7 ↔ K on the ``heldout_val`` decks (docs/experiments/reader-history.md, twelfth
session). Printed decks use serif, sans and condensed type, so :data:`FONT_FILES` lists such faces
from Debian's font packages (``scripts/apt-packages.txt``; read at run time, never stored): the
TrueType-font decks ``proc200`` … ``proc399`` draw their indices with them
(:data:`models.synth.designs.RANDOMISED_TTF`).

The two functions mirror OpenCV's: :func:`text_size` gives the ink width and height above the
baseline of ``text`` at ``scale`` (``scale`` 1 is a 100-px font), :func:`put_text` draws it with its
left end and baseline at ``org``, anti-aliased, squeezed horizontally by ``sx``.

>>> font = FONT_FILES[0]
>>> w, h = text_size("10", font, 0.5)
>>> 20 < w < 60 and 25 < h < 45
True
>>> img = np.full((60, 60, 3), 255, np.uint8)
>>> put_text(img, "7", (5, 50), font, 0.5, (0, 0, 0))
>>> bool((img < 128).any()) and bool((img[51:] == 255).all())
True
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
import numpy.typing as npt

_URW = "/usr/share/fonts/opentype/urw-base35/"
_GYRE = "/usr/share/texmf/fonts/opentype/public/tex-gyre/"
_LIB = "/usr/share/fonts/opentype/linux-libertine/"
_FREE = "/usr/share/fonts/opentype/freefont/"
_DJ = "/usr/share/fonts/truetype/dejavu/"
_LIBN = "/usr/share/fonts/truetype/liberation/"

#: Upright serif, sans and condensed faces, regular and bold (packages fonts-urw-base35,
#: fonts-texgyre, fonts-linuxlibertine, fonts-ebgaramond, fonts-freefont-otf, fonts-dejavu-core,
#: fonts-dejavu-extra, fonts-liberation, fonts-crosextra-caladea). Script, symbol and mono faces are
#: left out: card indices are not written in them.
FONT_FILES: tuple[str, ...] = (
    _URW + "NimbusRoman-Regular.otf",
    _URW + "NimbusRoman-Bold.otf",
    _URW + "NimbusSans-Regular.otf",
    _URW + "NimbusSans-Bold.otf",
    _URW + "NimbusSansNarrow-Regular.otf",
    _URW + "NimbusSansNarrow-Bold.otf",
    _URW + "C059-Roman.otf",
    _URW + "C059-Bold.otf",
    _URW + "P052-Roman.otf",
    _URW + "P052-Bold.otf",
    _URW + "URWBookman-Light.otf",
    _URW + "URWBookman-Demi.otf",
    _URW + "URWGothic-Book.otf",
    _URW + "URWGothic-Demi.otf",
    _GYRE + "texgyrebonum-bold.otf",
    _GYRE + "texgyreheroscn-regular.otf",
    _GYRE + "texgyreheroscn-bold.otf",
    _GYRE + "texgyrepagella-bold.otf",
    _GYRE + "texgyreschola-bold.otf",
    _GYRE + "texgyretermes-bold.otf",
    _LIB + "LinLibertine_R.otf",
    _LIB + "LinLibertine_RB.otf",
    _LIB + "LinBiolinum_R.otf",
    _LIB + "LinBiolinum_RB.otf",
    "/usr/share/fonts/opentype/ebgaramond/EBGaramond12-Regular.otf",
    "/usr/share/fonts/opentype/ebgaramond/EBGaramond12-Bold.otf",
    _FREE + "FreeSerif.otf",
    _FREE + "FreeSerifBold.otf",
    _FREE + "FreeSans.otf",
    _FREE + "FreeSansBold.otf",
    _DJ + "DejaVuSerif.ttf",
    _DJ + "DejaVuSerif-Bold.ttf",
    _DJ + "DejaVuSerifCondensed-Bold.ttf",
    _DJ + "DejaVuSans.ttf",
    _DJ + "DejaVuSansCondensed-Bold.ttf",
    _LIBN + "LiberationSerif-Regular.ttf",
    _LIBN + "LiberationSerif-Bold.ttf",
    _LIBN + "LiberationSansNarrow-Regular.ttf",
    _LIBN + "LiberationSansNarrow-Bold.ttf",
    "/usr/share/fonts/truetype/crosextra/Caladea-Bold.ttf",
)
#: Upright faces whose suit symbols (U+2660 ♠, 2663 ♣, 2665 ♥, 2666 ♦) are drawn differently: the
#: glyph-suit decks ``proc400`` … ``proc599`` draw their pips with them
#: (:data:`models.synth.designs.RANDOMISED_GLYPH`). Bold and regular cuts of one family often differ.
SUIT_FONT_FILES: tuple[str, ...] = (
    _FREE + "FreeSans.otf",
    _FREE + "FreeSansBold.otf",
    _FREE + "FreeSerif.otf",
    _FREE + "FreeSerifBold.otf",
    _FREE + "FreeMono.otf",
    _LIB + "LinLibertine_R.otf",
    _LIB + "LinLibertine_RB.otf",
    _LIB + "LinBiolinum_R.otf",
    _LIB + "LinBiolinum_RB.otf",
    _URW + "C059-Roman.otf",
    _URW + "C059-Bold.otf",
    _URW + "NimbusSans-Regular.otf",
    _URW + "NimbusRoman-Bold.otf",
    _URW + "P052-Roman.otf",
    _URW + "URWBookman-Demi.otf",
    _URW + "URWGothic-Book.otf",
    _DJ + "DejaVuSans.ttf",
    _DJ + "DejaVuSans-Bold.ttf",
    _DJ + "DejaVuSerif.ttf",
    _LIBN + "LiberationSans-Regular.ttf",
    _LIBN + "LiberationSerif-Bold.ttf",
    _GYRE + "texgyreadventor-regular.otf",
    _GYRE + "texgyreadventor-bold.otf",
    _GYRE + "texgyrepagella-regular.otf",
)
#: The filled suit symbols' characters.
SUIT_CHARS: dict[str, str] = {"S": "\u2660", "C": "\u2663", "H": "\u2665", "D": "\u2666"}
BASE_PX = 100  # font size in pixels at scale 1


class FontNotFoundError(FileNotFoundError):
    """A font file of :data:`FONT_FILES` is missing (install the packages of ``scripts/apt-packages.txt``)."""


@lru_cache(maxsize=512)
def _font(path: str, px: int) -> Any:  # a PIL.ImageFont.FreeTypeFont (PIL is imported lazily)
    from PIL import ImageFont

    if not Path(path).is_file():
        raise FontNotFoundError(f"font not found: {path} (bash scripts/setup installs the font packages)")
    return ImageFont.truetype(path, max(1, px))


@lru_cache(maxsize=4096)
def _ink(text: str, path: str, scale: float, stroke: int) -> tuple[np.ndarray, int, int]:
    """The rendered glyphs cropped to their ink (``uint8`` coverage, read-only: it is cached) and the
    crop's (left, top) offset from the left end of the baseline. Pillow's bounding box also counts the
    side bearings, so the ink is measured on the rendering."""
    from PIL import Image, ImageDraw

    empty = np.zeros((0, 0), np.uint8)
    font = _font(path, int(round(scale * BASE_PX)))
    left, top, right, bottom = (int(v) for v in font.getbbox(text, anchor="ls", stroke_width=stroke))
    if right <= left or bottom <= top:
        return empty, 0, 0
    mask = Image.new("L", (right - left, bottom - top), 0)
    ImageDraw.Draw(mask).text(
        (-left, -top), text, fill=255, font=font, anchor="ls", stroke_width=stroke, stroke_fill=255
    )
    cov = np.asarray(mask)
    ys, xs = np.nonzero(cov > 0)
    if not len(xs):
        return empty, 0, 0
    ink = cov[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()
    ink.flags.writeable = False
    return ink, left + int(xs.min()), top + int(ys.min())


def _ink_box(text: str, path: str, scale: float, stroke: int) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) of the ink relative to the left end of the baseline."""
    ink, left, top = _ink(text, path, scale, stroke)
    if not ink.size:
        return 0, 0, 0, 0
    return left, top, left + ink.shape[1], top + ink.shape[0]


def text_size(text: str, path: str, scale: float, stroke: int = 0, sx: float = 1.0) -> tuple[int, int]:
    """Ink width and ink height above the baseline of ``text`` (like ``cv2.getTextSize``'s size)."""
    left, top, right, _ = _ink_box(text, path, scale, stroke)
    return max(1, int(round((right - left) * sx))), max(1, -top)


def _alpha(text: str, path: str, scale: float, stroke: int, sx: float) -> tuple[np.ndarray, int, int]:
    """The ink-tight coverage (float, 0-1) of ``text`` and its (left, top) offset from the baseline's
    left end, squeezed horizontally by ``sx``."""
    ink, left, top = _ink(text, path, scale, stroke)
    if not ink.size:
        return np.zeros((0, 0), np.float32), 0, 0
    alpha = ink.astype(np.float32) / 255.0
    if sx != 1.0:
        h, w = ink.shape
        alpha = cast(
            "npt.NDArray[np.float32]",
            cv2.resize(alpha, (max(1, int(round(w * sx))), h), interpolation=cv2.INTER_AREA),
        )
    return alpha, int(round(left * sx)), top


def _blend(img: np.ndarray, alpha: np.ndarray, x0: int, y0: int, colour: tuple[int, ...]) -> None:
    """Paint ``colour`` into ``img`` through ``alpha`` placed with its top-left at (x0, y0), clipped."""
    ih, iw = img.shape[:2]
    a0, b0 = max(0, -x0), max(0, -y0)
    a1, b1 = min(alpha.shape[1], iw - x0), min(alpha.shape[0], ih - y0)
    if a1 <= a0 or b1 <= b0:
        return
    a = alpha[b0:b1, a0:a1, None]
    region = img[y0 + b0 : y0 + b1, x0 + a0 : x0 + a1]
    ink = np.array(colour[:3], np.float32)
    region[:] = np.clip(region * (1 - a) + ink * a, 0, 255).astype(img.dtype)


def put_text(
    img: np.ndarray,
    text: str,
    org: tuple[int, int],
    path: str,
    scale: float,
    colour: tuple[int, ...],
    stroke: int = 0,
    sx: float = 1.0,
) -> None:
    """Draw ``text`` into BGR ``img`` in place, baseline's left end at ``org`` (clipped at the edges)."""
    alpha, left, top = _alpha(text, path, scale, stroke, sx)
    if alpha.size:
        _blend(img, alpha, int(org[0] + left), int(org[1] + top), colour)


def put_symbol(
    img: np.ndarray,
    char: str,
    centre: tuple[float, float],
    height: float,
    path: str,
    colour: tuple[int, ...],
    sx: float = 1.0,
    flip: bool = False,
) -> None:
    """Draw the glyph ``char`` with its ink ``height`` px tall and its ink box centred at ``centre``
    (turned 180° if ``flip``): a suit symbol of :data:`SUIT_FONT_FILES`.

    >>> img = np.full((40, 40, 3), 255, np.uint8)
    >>> put_symbol(img, SUIT_CHARS["C"], (20, 20), 20, SUIT_FONT_FILES[0], (0, 0, 0))
    >>> ys = np.nonzero((img < 128).any(axis=2))[0]
    >>> 8 <= int(ys.min()) <= 12 and 28 <= int(ys.max()) <= 31
    True
    """
    probe = 1.0
    _, top, _, bottom = _ink_box(char, path, probe, 0)
    if bottom <= top:
        raise ValueError(f"{path} draws no ink for {char!r}")
    scale = probe * height / (bottom - top)
    alpha, _, _ = _alpha(char, path, scale, 0, sx)
    if not alpha.size:
        return
    if flip:
        alpha = alpha[::-1, ::-1]
    h, w = alpha.shape
    _blend(img, alpha, int(round(centre[0] - w / 2)), int(round(centre[1] - h / 2)), colour)


def hershey_text(
    img: np.ndarray,
    text: str,
    org: tuple[int, int],
    font: int,
    scale: float,
    colour: tuple[float, ...] | list[float],
    thickness: int = 1,
    line_type: int = cv2.LINE_AA,
) -> None:
    """``cv2.putText`` on an image of any depth. OpenCV 5 draws text on 8-bit images only; on a float
    image there the text's coverage is drawn into an 8-bit mask and blended in with ``colour``.

    >>> img = np.zeros((40, 80, 3), np.float32)
    >>> hershey_text(img, "AB", (5, 30), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (200.0, 100.0, 50.0), 2)
    >>> 150 < float(img[..., 0].max()) <= 200.0 and float(img[:5].max()) == 0.0
    True
    """
    try:
        cv2.putText(img, text, org, font, scale, colour, thickness, line_type)
        return
    except cv2.error:
        if img.dtype == np.uint8:
            raise
    mask = np.zeros(img.shape[:2], np.uint8)
    cv2.putText(mask, text, org, font, scale, 255, thickness, line_type)
    ys, xs = np.nonzero(mask)
    if not len(ys):
        return
    a = (mask[ys, xs].astype(np.float32) / 255.0).reshape(-1, *([1] * (img.ndim - 2)))
    ink = np.asarray(colour, np.float32)[: img.shape[2]] if img.ndim == 3 else np.float32(colour[0])
    img[ys, xs] = (img[ys, xs] * (1 - a) + ink * a).astype(img.dtype)
