"""Seeded random procedural decks: many suit shapes, fonts, inks and index layouts.

The hand-made procedural variants 0-5 share one club and one spade; a classifier trained on them and
on the 21 aisleriot themes learns those few shapes, and then reads an unseen design's clubs as
spades (the held-out ``plastic`` deck). This module draws a deck's look from a seed instead, within
ranges taken from printed decks, so training can show the classifier hundreds of club, spade, heart
and diamond shapes and a dozen fonts. Randomised designs are for training only (see
:data:`models.synth.designs.RANDOMISED`).

>>> random_variant(100) == random_variant(100)
True
>>> random_variant(100).shape != random_variant(101).shape
True
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from models.synth.fonts import FONT_FILES, SUIT_FONT_FILES
from models.synth.variants import SuitShape, Variant

FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_PLAIN,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
)
JOKER_MARKS = ("word", "star", "word_star")
#: Variants from this seed on write their indices in an outline font of
#: :data:`models.synth.fonts.FONT_FILES` instead of a Hershey font (the rest is drawn as before).
OUTLINE_FONT_FROM = 200
#: Variants from this seed on draw their suit symbols, most of the time (:data:`GLYPH_SHARE`), as the
#: suit glyphs of a font of :data:`models.synth.fonts.SUIT_FONT_FILES`: shapes made by type designers,
#: not by :func:`random_shape`'s ranges.
GLYPH_SUITS_FROM = 400
GLYPH_SHARE = 0.7


def random_shape(rng: np.random.Generator) -> SuitShape:
    """Suit symbols with every proportion drawn from a range around printed decks' shapes."""
    u = rng.uniform
    heart_r = u(0.42, 0.56)
    heart_x = u(0.4, 0.52)
    spade_r = u(0.36, 0.5)
    spade_x = u(0.36, 0.5)
    spade_y = u(0.08, 0.3)
    return SuitShape(
        diamond_w=u(0.55, 0.85),
        diamond_bulge=float(rng.choice([0.0, u(-0.12, -0.03), u(0.03, 0.1)])),
        heart_r=heart_r,
        heart_x=heart_x,
        heart_y=u(-0.52, -0.36),
        heart_w=heart_x + 0.96 * heart_r,
        heart_cut=u(-0.36, -0.22),
        spade_r=spade_r,
        spade_x=spade_x,
        spade_y=spade_y,
        spade_w=spade_x + 0.97 * spade_r,
        spade_cut=spade_y - u(0.04, 0.12),
        spade_stem=u(0.15, 0.4),
        club_r=u(0.28, 0.42),
        club_top=u(-0.6, -0.44),
        club_x=u(0.4, 0.56),
        club_y=u(0.0, 0.2),
        club_centre=u(0.12, 0.26),
        club_stem=u(0.15, 0.38),
        flared_stem=bool(rng.random() < 0.5),
        sx=u(0.85, 1.15),
    )


def _ink(rng: np.random.Generator, red: bool) -> tuple[int, int, int]:
    if red:  # BGR: crimson to orange-red
        return int(rng.integers(10, 70)), int(rng.integers(10, 80)), int(rng.integers(150, 236))
    grey = int(rng.integers(0, 60))
    tint = int(rng.integers(0, 70)) if rng.random() < 0.4 else 0  # navy / blue-black inks
    return min(255, grey + tint), grey, grey


def random_variant(seed: int) -> Variant:
    """The deck look of procedural variant ``seed`` (deterministic in ``seed``)."""
    rng = np.random.default_rng([7_919, seed])
    font: int | str = int(rng.choice(FONTS)) | (cv2.FONT_ITALIC if rng.random() < 0.15 else 0)
    font_sx = 1.0
    if seed >= OUTLINE_FONT_FROM:  # own stream: the Hershey decks' draws stay as they were
        extra = np.random.default_rng([7_919, seed, 1])
        font = str(extra.choice(FONT_FILES))
        font_sx = float(extra.uniform(0.7, 1.05)) if extra.random() < 0.6 else 1.0
    shape_font = None
    if seed >= GLYPH_SUITS_FROM:  # a third stream, for the same reason
        glyph = np.random.default_rng([7_919, seed, 2])
        if glyph.random() < GLYPH_SHARE:
            shape_font = str(glyph.choice(SUIT_FONT_FILES))
    base = int(rng.integers(222, 256))
    stock = tuple(min(255, int(base + rng.integers(-10, 6))) for _ in range(3))
    return Variant(
        font=font,
        thick=int(rng.integers(1, 5)),
        index_scale=float(rng.uniform(0.06, 0.115)),
        pip_beside=bool(rng.random() < 0.2),
        four_colour=bool(rng.random() < 0.1),
        stock=(stock[0], stock[1], stock[2]),
        border=bool(rng.random() < 0.5),
        back=(int(rng.integers(20, 200)), int(rng.integers(20, 200)), int(rng.integers(20, 200))),
        shape=replace(random_shape(rng), font=shape_font),
        black=_ink(rng, red=False),
        red=_ink(rng, red=True),
        margin=(float(rng.uniform(0.03, 0.07)), float(rng.uniform(0.025, 0.06))),
        pip_ratio=float(rng.uniform(0.6, 1.0)),
        pip_gap=float(rng.uniform(0.08, 0.35)),
        joker_mark=str(rng.choice(JOKER_MARKS)),
        font_sx=font_sx,
    )
