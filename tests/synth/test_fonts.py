"""Outline-font indices of the randomised decks (models.synth.fonts, RANDOMISED_TTF)."""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np
import pytest

import models.synth.fonts as fonts
from models.synth.designs import ALL, BY_NAME, HELDOUT, HELDOUT_VAL, RANDOMISED, RANDOMISED_TTF
from models.synth.faces import load_faces
from models.synth.fonts import FONT_FILES, FontNotFoundError, put_text, text_size
from models.synth.procedural import FACE_H, FACE_W, draw_face
from models.synth.randomised import OUTLINE_FONT_FROM, random_variant


def test_module_doctests() -> None:
    result = doctest.testmod(fonts)
    assert result.attempted >= 4 and result.failed == 0


def test_every_listed_font_is_installed_and_distinct() -> None:
    """scripts/apt-packages.txt installs every face; none is listed twice."""
    missing = [f for f in FONT_FILES if not Path(f).is_file()]
    assert not missing, f"run bash scripts/setup: {missing}"
    assert len(set(FONT_FILES)) == len(FONT_FILES) >= 30


def _ink(img: np.ndarray) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(img[:, :, 0] < 200)
    return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())


@pytest.mark.parametrize("font", FONT_FILES[::7])
@pytest.mark.parametrize("text", ["10", "Q", "6"])
def test_drawn_ink_matches_the_measured_size(font: str, text: str) -> None:
    """put_text's ink sits right of org and above the baseline, as large as text_size says."""
    img = np.full((160, 200, 3), 255, np.uint8)
    x, base = 20, 120
    w, h = text_size(text, font, 0.8)
    put_text(img, text, (x, base), font, 0.8, (0, 0, 0))
    x0, y0, x1, y1 = _ink(img)
    assert abs((x1 - x0 + 1) - w) <= 3 and abs((base - y0) - h) <= 3
    assert x0 >= x - 12 and y1 <= base + (25 if text == "Q" else 3)  # only Q's tail goes below


def test_size_scales_and_squeeze_narrows() -> None:
    font = FONT_FILES[0]
    w1, h1 = text_size("10", font, 0.4)
    w2, h2 = text_size("10", font, 0.8)
    assert 1.8 < w2 / w1 < 2.2 and 1.8 < h2 / h1 < 2.2
    narrow, _ = text_size("10", font, 0.8, sx=0.7)
    assert abs(narrow - 0.7 * w2) <= 2
    img = np.full((100, 100, 3), 255, np.uint8)
    put_text(img, "10", (10, 80), font, 0.6, (0, 0, 0), sx=0.7)
    x0, _, x1, _ = _ink(img)
    assert abs((x1 - x0 + 1) - text_size("10", font, 0.6, sx=0.7)[0]) <= 3


def test_text_at_the_edge_is_clipped_not_an_error() -> None:
    img = np.full((30, 30, 3), 255, np.uint8)
    put_text(img, "K", (20, 10), FONT_FILES[0], 0.5, (0, 0, 255))
    put_text(img, "K", (-200, -200), FONT_FILES[0], 0.5, (0, 0, 255))  # wholly outside: nothing
    assert (img[:, :20] == 255).all() and (img[:, 20:, 2] > 200).all() and (img[:, 20:, 0] < 255).any()


def test_missing_font_is_a_clear_error() -> None:
    with pytest.raises(FontNotFoundError, match="scripts/setup"):
        text_size("7", "/nonexistent/font.otf", 1.0)


def test_outline_font_decks_are_training_only_and_leave_the_hershey_decks_alone() -> None:
    names = {d.name for d in RANDOMISED_TTF}
    assert len(names) == 200 and all(BY_NAME[n].kind == "procedural" for n in names)
    assert not names & {d.name for d in ALL + HELDOUT + HELDOUT_VAL + RANDOMISED}
    assert all(isinstance(random_variant(s).font, int) for s in range(100, OUTLINE_FONT_FROM))
    assert all(random_variant(s).font_sx == 1.0 for s in range(100, OUTLINE_FONT_FROM))
    ttf = [random_variant(s) for s in range(OUTLINE_FONT_FROM, OUTLINE_FONT_FROM + 200)]
    assert all(isinstance(v.font, str) and v.font in FONT_FILES for v in ttf)
    assert len({v.font for v in ttf}) >= 30  # most faces are used
    assert any(v.font_sx < 0.9 for v in ttf) and any(v.font_sx == 1.0 for v in ttf)


def test_outline_font_faces_print_their_rank_in_the_corner() -> None:
    """The corner of a 6 and of a 9 differ (the glyph is drawn), and an index is drawn in its ink."""
    faces = load_faces("proc205").faces
    six, nine = faces["6C"], faces["9C"]
    assert six.shape == (FACE_H, FACE_W, 4)
    corner = (slice(0, FACE_H // 6), slice(0, FACE_W // 4))
    ink6 = six[corner][:, :, :3].max(2) < 128
    ink9 = nine[corner][:, :, :3].max(2) < 128
    assert ink6.sum() > 30 and ink9.sum() > 30
    assert (ink6 ^ ink9).sum() > 0.2 * ink6.sum()
    assert (draw_face(205, "6C") == six).all()  # seeded: drawn the same twice


def test_outline_font_deck_index_box_hugs_its_printed_index() -> None:
    """The index box found on the drawn faces covers the rank and pip in the top-left corner, so the
    face tiles' labels of these decks frame what the classifier must read."""
    fs = load_faces("proc230")
    x1, y1, x2, y2 = fs.index_box
    assert 0 <= x1 < x2 <= FACE_W / 3 and 0 <= y1 < y2 <= FACE_H / 3
    for card in ("10H", "QS", "6C"):
        face = fs.faces[card][:, :, :3].astype(int)
        ink = (face.max(2) - face.min(2) > 60) | (face.max(2) < 110)  # coloured or dark pixels
        box = ink[int(y1) : int(np.ceil(y2)), int(x1) : int(np.ceil(x2))]
        assert box.sum() > 40, card
        # nothing of the index lies just outside the box, on its right or below it
        right = ink[int(y1) : int(y2), int(np.ceil(x2)) + 2 : int(np.ceil(x2)) + 6]
        assert right.sum() < 0.1 * box.sum(), card
