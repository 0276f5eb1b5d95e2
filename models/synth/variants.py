"""The drawing parameters of a procedural deck (:mod:`models.synth.procedural` draws them,
:mod:`models.synth.randomised` draws random ones)."""

from __future__ import annotations

from dataclasses import dataclass

RED = (30, 30, 200)
BLACK = (25, 25, 25)


@dataclass(frozen=True)
class SuitShape:
    """Geometry of the four suit symbols, in half-heights of the symbol (the defaults: variants 0-5).

    Randomised variants (:mod:`models.synth.randomised`) draw these so the classifier sees many club
    and spade shapes, not one.
    """

    diamond_w: float = 0.72  # half-width
    diamond_bulge: float = 0.0  # sides bowed out (+) or in (-), share of the half-height
    heart_r: float = 0.5  # lobe radius
    heart_x: float = 0.47  # lobe centre, ± x
    heart_y: float = -0.45  # lobe centre y (up is negative)
    heart_w: float = 0.95  # half-width of the lower triangle's top edge
    heart_cut: float = -0.3  # y of that edge
    spade_r: float = 0.46
    spade_x: float = 0.45
    spade_y: float = 0.2
    spade_w: float = 0.9
    spade_cut: float = 0.12
    spade_stem: float = 0.3  # half-width of the stem's foot
    club_r: float = 0.36
    club_top: float = -0.52  # y of the top lobe
    club_x: float = 0.5
    club_y: float = 0.12
    club_centre: float = 0.2  # radius of the filled centre
    club_stem: float = 0.28
    flared_stem: bool = False  # concave (trumpet) stems instead of straight triangles
    sx: float = 1.0  # horizontal stretch of every symbol
    font: str | None = None  # draw the symbols as this font's suit glyphs instead (models.synth.fonts)


@dataclass(frozen=True)
class Variant:
    """Drawing parameters of one procedural deck (fields after ``back`` default to variants 0-5)."""

    font: int | str  # a cv2 Hershey font id, or an outline font file (models.synth.fonts)
    thick: int
    index_scale: float  # rank text height / face height
    pip_beside: bool  # small suit pip right of the rank instead of below it
    four_colour: bool
    stock: tuple[int, int, int]  # card background, BGR
    border: bool
    back: tuple[int, int, int]
    shape: SuitShape = SuitShape()
    black: tuple[int, int, int] = BLACK  # ink of spades, clubs and the small joker
    red: tuple[int, int, int] = RED  # ink of hearts, diamonds and the big joker
    margin: tuple[float, float] = (0.045, 0.04)  # index offset from the corner, share of face w, h
    pip_ratio: float = 0.8  # index pip height / rank text height
    pip_gap: float = 0.2  # gap between rank and pip below it, share of the rank's height
    joker_mark: str = "word"  # word: JOKER downwards; star: a star; word_star: a shorter word + star
    font_sx: float = 1.0  # horizontal squeeze of an outline font's glyphs (condensed type)
