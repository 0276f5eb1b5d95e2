"""Seeded random procedural decks (training-only designs with many suit shapes)."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import models.synth.randomised as randomised
from models.facetiles import FaceTileSettings, compose_tile
from models.synth.designs import ALL, BY_NAME, HELDOUT, RANDOMISED, TRAIN, designs_for_split
from models.synth.faces import load_faces
from models.synth.procedural import VARIANTS, SuitShape, draw_pip, variant_params
from models.synth.randomised import random_shape, random_variant

SAMPLE = ("proc100", "proc117", "proc142", "proc199")


def test_module_doctests() -> None:
    result = doctest.testmod(randomised)
    assert result.attempted >= 2 and result.failed == 0


def test_randomised_designs_are_training_only_and_outside_the_scene_splits() -> None:
    names = {d.name for d in RANDOMISED}
    assert len(names) == 100
    assert not names & {d.name for d in HELDOUT}
    assert not names & {d.name for d in ALL}  # the scene splits' design lists are unchanged
    assert not names & {d.name for d in designs_for_split("train")}
    assert all(BY_NAME[n].kind == "procedural" for n in names)
    assert {d.name for d in TRAIN} | {d.name for d in HELDOUT} == {d.name for d in ALL}


def test_hand_made_variants_keep_their_parameters() -> None:
    for v, variant in enumerate(VARIANTS):
        assert variant_params(v) is variant
        assert variant.shape == SuitShape()


def test_random_variants_are_seeded_and_varied() -> None:
    assert random_variant(123) == random_variant(123)
    variants = [random_variant(s) for s in range(100, 140)]
    shapes = [v.shape for v in variants]
    assert len(set(shapes)) == len(shapes)
    club_r = [s.club_r for s in shapes]
    assert min(club_r) >= 0.28 and max(club_r) <= 0.42 and max(club_r) - min(club_r) > 0.08
    assert len({v.font for v in variants}) >= 4
    assert {v.joker_mark for v in variants} == {"word", "star", "word_star"}
    assert any(s.flared_stem for s in shapes) and not all(s.flared_stem for s in shapes)
    for v in variants:
        b, g, r = v.red
        assert r > 140 and r > b + 80 and r > g + 70  # hearts stay red
        assert max(v.black) < 140  # spades stay dark


def _symbol(suit: str, shape: SuitShape) -> np.ndarray:
    img = np.full((80, 80, 3), 255, np.uint8)
    draw_pip(img, suit, 40, 40, 60, (0, 0, 0), shape=shape)
    return img[:, :, 0] < 128


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_club_and_spade_differ_and_fit_their_box(seed: int) -> None:
    shape = random_shape(np.random.default_rng(seed))
    club, spade = _symbol("C", shape), _symbol("S", shape)
    assert (club ^ spade).sum() > 0.15 * max(club.sum(), spade.sum())
    for suit in "CSHD":
        ink = _symbol(suit, shape)
        ys, xs = np.nonzero(ink)
        assert ink.sum() > 400, suit
        # a symbol of height 60 centred at (40, 40): its ink stays near that box
        assert ys.min() >= 7 and ys.max() <= 73 and xs.min() >= 2 and xs.max() <= 78, suit


def test_flared_stem_is_narrower_at_the_top() -> None:
    straight = _symbol("S", SuitShape(spade_stem=0.35))
    flared = _symbol("S", SuitShape(spade_stem=0.35, flared_stem=True))
    # rows in the stem, below the lobes (the symbol spans y 10-70)
    assert flared[62:66].sum() < straight[62:66].sum()
    assert abs(int(flared[69].sum()) - int(straight[69].sum())) <= 4


@pytest.mark.parametrize("name", SAMPLE)
def test_randomised_faces_have_matching_corner_indices(name: str) -> None:
    fs = load_faces(name)
    w, h = fs.size
    x1, y1, x2, y2 = fs.index_box
    assert 0 <= x1 < x2 <= w / 2 and 0 <= y1 < y2 <= h / 2
    for card in ("10H", "AS", "QC", "7D", "SJ", "BJ"):
        boxes = fs.index_boxes(card)
        f = fs.faces[card][:, :, :3].astype(int)
        tl = [int(round(v)) for v in boxes["tl"]]
        br = [int(round(v)) for v in boxes["br"]]
        top = f[tl[1] : tl[3], tl[0] : tl[2]]
        rot = f[::-1, ::-1][h - br[3] : h - br[1], w - br[2] : w - br[0]]
        assert top.shape == rot.shape and top.size > 0
        assert np.abs(top - rot).mean() < 12, card
        assert top.std() > 20, card  # there is ink in the corner label


@pytest.mark.parametrize("name", SAMPLE)
def test_randomised_faces_compose_into_labelled_tiles(name: str) -> None:
    rng = np.random.default_rng(0)
    settings = FaceTileSettings(face_down_share=0.0, index_px=(30.0, 40.0))
    labels = [lab for _ in range(4) for lab in compose_tile(rng, [load_faces(name)], settings)[1]]
    assert len(labels) >= 4
    assert all(0 <= cid < 54 for cid, _ in labels)
