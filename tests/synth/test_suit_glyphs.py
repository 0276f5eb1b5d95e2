"""Suit symbols drawn from fonts' suit glyphs (models.synth.fonts.put_symbol, RANDOMISED_GLYPH)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from models.synth.designs import (
    ALL,
    BY_NAME,
    HELDOUT,
    HELDOUT_VAL,
    RANDOMISED,
    RANDOMISED_GLYPH,
    RANDOMISED_TTF,
)
from models.synth.fonts import SUIT_CHARS, SUIT_FONT_FILES, put_symbol
from models.synth.procedural import SuitShape, draw_face, draw_pip
from models.synth.randomised import GLYPH_SUITS_FROM, random_variant


def _ink_box(img: np.ndarray) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(img[:, :, 0] < 128)
    return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())


def test_every_suit_font_is_installed_distinct_and_draws_all_four_suits() -> None:
    missing = [f for f in SUIT_FONT_FILES if not Path(f).is_file()]
    assert not missing, f"run bash scripts/setup: {missing}"
    assert len(set(SUIT_FONT_FILES)) == len(SUIT_FONT_FILES) >= 20
    clubs = set()
    for font in SUIT_FONT_FILES:
        for suit in "SCHD":
            img = np.full((60, 60, 3), 255, np.uint8)
            put_symbol(img, SUIT_CHARS[suit], (30, 30), 30, font, (0, 0, 0))
            assert (img < 128).sum() > 100, (font, suit)
        img = np.full((60, 60, 3), 255, np.uint8)
        put_symbol(img, SUIT_CHARS["C"], (30, 30), 30, font, (0, 0, 0))
        clubs.add(hashlib.sha1((img[:, :, 0] < 128).tobytes()).hexdigest())
    assert len(clubs) >= 10  # many different club shapes, not one glyph copied between fonts


@pytest.mark.parametrize("font", SUIT_FONT_FILES[::5])
def test_symbol_is_as_tall_as_asked_and_centred(font: str) -> None:
    img = np.full((100, 100, 3), 255, np.uint8)
    put_symbol(img, SUIT_CHARS["S"], (50, 40), 36, font, (0, 0, 0))
    x0, y0, x1, y1 = _ink_box(img)
    assert abs((y1 - y0 + 1) - 36) <= 2
    assert abs((y0 + y1) / 2 - 40) <= 1.5 and abs((x0 + x1) / 2 - 50) <= 1.5


def test_flip_turns_the_symbol_upside_down() -> None:
    font = SUIT_FONT_FILES[0]
    up = np.full((80, 80, 3), 255, np.uint8)
    down = up.copy()
    put_symbol(up, SUIT_CHARS["S"], (40, 40), 40, font, (0, 0, 0))
    put_symbol(down, SUIT_CHARS["S"], (40, 40), 40, font, (0, 0, 0), flip=True)
    a, b = up[:, :, 0] < 128, down[:, :, 0] < 128
    assert (a ^ b).sum() > 0.2 * a.sum()  # a spade is not symmetric top to bottom
    assert abs(int(a.sum()) - int(b.sum())) <= 0.02 * a.sum()
    # a spade's point is up: more ink in the lower half; turned, more in the upper half
    assert a[40:].sum() > a[:40].sum() and b[:40].sum() > b[40:].sum()


def test_draw_pip_uses_the_font_glyph_and_still_refuses_unknown_suits() -> None:
    font = SUIT_FONT_FILES[3]
    by_font = np.full((60, 60, 3), 255, np.uint8)
    by_shape = by_font.copy()
    draw_pip(by_font, "C", 30, 30, 30, (0, 0, 0), shape=SuitShape(font=font))
    draw_pip(by_shape, "C", 30, 30, 30, (0, 0, 0), shape=SuitShape())
    expected = np.full((60, 60, 3), 255, np.uint8)
    put_symbol(expected, SUIT_CHARS["C"], (30, 30), 30, font, (0, 0, 0))
    assert (by_font == expected).all() and not (by_font == by_shape).all()
    with pytest.raises(ValueError):
        draw_pip(by_font, "X", 30, 30, 30, (0, 0, 0), shape=SuitShape(font=font))


def test_glyph_decks_are_training_only_and_leave_older_decks_alone() -> None:
    names = {d.name for d in RANDOMISED_GLYPH}
    assert len(names) == 200 and all(BY_NAME[n].kind == "procedural" for n in names)
    assert not names & {d.name for d in ALL + HELDOUT + HELDOUT_VAL + RANDOMISED + RANDOMISED_TTF}
    assert all(random_variant(s).shape.font is None for s in range(100, GLYPH_SUITS_FROM))
    glyph = [random_variant(s) for s in range(GLYPH_SUITS_FROM, GLYPH_SUITS_FROM + 200)]
    with_font = [v for v in glyph if v.shape.font is not None]
    assert 0.55 * len(glyph) < len(with_font) < 0.85 * len(glyph)  # GLYPH_SHARE 0.7, the rest drawn shapes
    assert all(v.shape.font in SUIT_FONT_FILES for v in with_font)
    assert len({v.shape.font for v in with_font}) >= 18


def test_a_glyph_deck_face_shows_its_font_club() -> None:
    """A glyph deck's club face differs from its spade face in the corner, and is drawn the same twice."""
    seed = next(s for s in range(GLYPH_SUITS_FROM, GLYPH_SUITS_FROM + 50) if random_variant(s).shape.font)
    club, spade = draw_face(seed, "5C"), draw_face(seed, "5S")
    corner = (slice(0, club.shape[0] // 4), slice(0, club.shape[1] // 4))
    ink_c = club[corner][:, :, :3].max(2) < 128
    ink_s = spade[corner][:, :, :3].max(2) < 128
    assert ink_c.sum() > 30 and (ink_c ^ ink_s).sum() > 0.1 * ink_c.sum()
    assert (draw_face(seed, "5C") == club).all()
