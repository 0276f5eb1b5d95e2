"""The library of card designs and the one place where the train / held-out split is recorded.

Two kinds of design:

* ``aisleriot``: SVG themes of Debian's ``gnome-cards-data`` (GPL-3+ artwork, rendered and sliced
  at run time into a cache outside the repository; see :mod:`models.synth.faces`).
* ``kde``: SVG decks of Debian's ``kdegames-card-data-kf5`` (one element per card, e.g.
  ``queen_heart``; GPL-2+, GPL-3+ or LGPL-2+ artwork, rendered at run time like the aisleriot
  themes). Only decks with a French-suited top-left index that no aisleriot theme already draws.
* ``kennard``: Adrian Kennard's deck (CC0-1.0; one SVG per card, from the npm registry, converted
  into the cache by :mod:`models.synth.kennard`), art that neither Debian package draws.
* ``procedural``: decks drawn by this project with OpenCV (:mod:`models.synth.procedural`), always
  available, so nothing essential depends on apt.

Joker mapping: every aisleriot sheet has two jokers in row 5. Column 0 is the black/monochrome one
(small joker ``SJ``), column 1 the coloured/red one (big joker ``BJ``). Where the two jokers are not
told apart by colour (both coloured, or identical) the theme's jokers are *not used*
(``jokers=False``); that was decided by looking at every sheet.

Evaluation (the test figures) always uses :data:`HELDOUT`; choosing between readers uses
:data:`HELDOUT_VAL` (and the training designs' ``val``), never :data:`HELDOUT`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["aisleriot", "kde", "kennard", "procedural"]
IndexStyle = Literal["anglo", "french", "german", "russian"]


@dataclass(frozen=True)
class Design:
    """One card design (a whole deck's look)."""

    name: str
    kind: Kind
    source: str = ""  # aisleriot: file name under the cards directory; procedural: variant id
    jokers: bool = True  # False: the two jokers cannot be told apart, never rendered face up
    index_style: IndexStyle = (
        "anglo"  # letters used for A/J/Q/K (french 1/V/D/R, german B/D/K, russian Т/В/Д/К)
    )
    licence: str = "GPL-3.0-or-later (gnome-cards-data)"
    corners: tuple[str, ...] = ("tl", "br")  # corners printing an index: tl, br (180° copy), tr, bl (mirrors)
    court_indices: bool = True  # False: J/Q/K carry no regular corner index, never rendered face up


def _a(
    name: str,
    source: str | None = None,
    *,
    jokers: bool = True,
    style: IndexStyle = "anglo",
    corners: tuple[str, ...] = ("tl", "br"),
    court: bool = True,
) -> Design:
    return Design(
        name=name,
        kind="aisleriot",
        source=(source or name) + ".svgz",
        jokers=jokers,
        index_style=style,
        corners=corners,
        court_indices=court,
    )


def _k(name: str, source: str, licence: str = "GPL-2.0-or-later (kdegames-card-data-kf5)") -> Design:
    return Design(name=name, kind="kde", source=source, jokers=False, licence=licence)


def procedural_design(variant: int) -> Design:
    """A procedural deck by its variant number (``procN``; randomised from variant 100 on)."""
    return Design(
        name=f"proc{variant}",
        kind="procedural",
        source=str(variant),
        licence="AGPL-3.0-or-later (this project)",
    )


#: French-suited aisleriot themes. Skipped: swiss-xvii (Swiss suits), tarocco (Italian 14-card
#: layout), atlasnye_skat (skat deck).
AISLERIOT: tuple[Design, ...] = (
    _a("ancient_french", style="french"),
    _a("anglo", jokers=False),  # both jokers coloured (blue vs yellow hat)
    _a("anglo_bitmap", jokers=False),
    _a("anglo_modern"),
    _a("anglo_modern_4_color"),
    _a("anglo_poker"),
    _a("atlasnye"),
    _a("atlasnye_ru", "Атласные", style="russian"),
    _a("bellot"),
    _a("berlin", style="german"),
    _a("dondorf", jokers=False, corners=("tl", "br", "tr", "bl")),  # identical jokers; 4 indices
    _a("gnomangelo"),
    _a("gnomangelo_bitmap"),
    _a("guyenne-classic", court=False),  # J/Q/K without corner index
    _a("lattmann", style="german"),
    _a("neoclassical"),
    _a("neoclassical_4_color"),
    _a("orell"),
    _a("ornamental", jokers=False),  # red vs green joker
    _a("paris"),
    _a("plastic"),
    _a("rheinland", style="german"),
    _a("simplistic"),
    _a("slavic_costumes", style="russian"),
    _a("tango", jokers=False),  # both coloured
    _a("tango_nuevo", corners=("tl",)),  # index only top-left
    _a("tigullio"),
)

PROCEDURAL: tuple[Design, ...] = tuple(procedural_design(v) for v in range(6))

ALL: tuple[Design, ...] = AISLERIOT + PROCEDURAL

#: Seeded random procedural decks (:mod:`models.synth.randomised`), ``proc100`` … ``proc199``: many
#: suit shapes, fonts and inks for the *classifier's face tiles only*. Never held out, never in the
#: scene splits (so the documented scene datasets stay regenerable byte for byte).
RANDOMISED: tuple[Design, ...] = tuple(procedural_design(v) for v in range(100, 200))
#: The same with indices in outline fonts of Debian's font packages (``proc200`` … ``proc399``,
#: :mod:`models.synth.fonts`): serif, sans and condensed glyphs for the classifier's face tiles.
RANDOMISED_TTF: tuple[Design, ...] = tuple(procedural_design(v) for v in range(200, 400))
#: The same with, in most decks, suit symbols from fonts' suit glyphs (``proc400`` … ``proc599``,
#: :data:`models.synth.randomised.GLYPH_SUITS_FROM`): more club and spade shapes for the face tiles.
RANDOMISED_GLYPH: tuple[Design, ...] = tuple(procedural_design(v) for v in range(400, 600))

#: KDE decks (``kdegames-card-data-kf5``) with an index like the aisleriot ones and art of their own
#: (skipped: dondorf, gm-paris, nicu-ornamental and tigullio-international, which aisleriot also
#: draws; the oxygen decks, rank and suit in opposite corners; future; xskat-german; konqi-modern and
#: xskat-french, whose cards are 72-px embedded bitmaps).
#: None prints its jokers as elements this loader finds, so none shows a joker.
#: Like :data:`RANDOMISED`, never in the documented scene splits ``train`` / ``val`` / ``heldout``.
KDE_TRAIN: tuple[Design, ...] = (
    _k("kde_jolly_royal", "svg-jolly-royal/jolly-royal.svgz"),
    _k("kde_penguins", "svg-penguins/penguins.svgz", "GPL-3.0-or-later (kdegames-card-data-kf5)"),
)
#: Adrian Kennard's deck: club and spade shapes from art no other source here
#: draws, for the *classifier's face tiles only* (like :data:`KDE_TRAIN`). Its jokers carry no corner
#: mark, so none is shown face up.
KENNARD_TRAIN: tuple[Design, ...] = (
    Design(
        "kennard", kind="kennard", jokers=False, licence="CC0-1.0 (Adrian Kennard, npm @letele/playing-cards)"
    ),
)
#: Held out for *model selection* (split ``heldout_val``): unseen designs that are not the test's
#: :data:`HELDOUT`, so choosing a reader on them leaves the held-out test figures untouched.
HELDOUT_VAL: tuple[Design, ...] = (
    _k("kde_ancient_egyptians", "svg-ancient-egyptians/Ancient_Egyptians.svgz"),
    _k("kde_standard", "svg-standard/standard.svgz"),
)

#: Also held out for model selection (split ``heldout_val_proc``): 40 seeded
#: random decks (``proc600`` … ``proc639``, glyph-suit era of :mod:`models.synth.randomised`) that no
#: training set draws. Unlike the KDE decks of :data:`HELDOUT_VAL` they print small indices, as the
#: test's decks do, and jokers (share of indices under 24 px, longer box side: test 60 %, heldout_val
#: 26 %, heldout_val_proc 74 %; 300 scenes each, seed 1; most club ↔ spade errors are under 24 px).
HELDOUT_VAL_PROC: tuple[Design, ...] = tuple(procedural_design(v) for v in range(600, 640))

BY_NAME: dict[str, Design] = {
    d.name: d
    for d in ALL
    + RANDOMISED
    + RANDOMISED_TTF
    + RANDOMISED_GLYPH
    + KDE_TRAIN
    + KENNARD_TRAIN
    + HELDOUT_VAL
    + HELDOUT_VAL_PROC
}

#: Held out from training: ~20 % of the aisleriot themes (6 of 27, sibling themes kept together so
#: no near-copy leaks into training) plus one procedural variant.
HELDOUT_NAMES: tuple[str, ...] = (
    "tigullio",
    "plastic",
    "paris",
    "guyenne-classic",  # sibling of paris (same jokers and pips)
    "gnomangelo",
    "gnomangelo_bitmap",
    "proc5",
)
HELDOUT: tuple[Design, ...] = tuple(BY_NAME[n] for n in HELDOUT_NAMES)
TRAIN: tuple[Design, ...] = tuple(d for d in ALL if d.name not in HELDOUT_NAMES)


#: The dataset splits and the designs each may draw, in the order that seeds their images
#: (:data:`models.synth.dataset.SPLITS`): append new splits, never reorder.
SPLIT_DESIGNS: dict[str, tuple[Design, ...]] = {
    "train": TRAIN,
    "val": TRAIN,
    "heldout": HELDOUT,
    "heldout_val": HELDOUT_VAL,
    "heldout_val_proc": HELDOUT_VAL_PROC,
}


def designs_for_split(split: str) -> tuple[Design, ...]:
    """Designs a dataset split may use (:data:`SPLIT_DESIGNS`): ``heldout`` → :data:`HELDOUT`,
    ``heldout_val`` → :data:`HELDOUT_VAL`, ``heldout_val_proc`` → :data:`HELDOUT_VAL_PROC`,
    ``train``/``val`` → :data:`TRAIN`.

    >>> [d.name for d in designs_for_split("heldout_val")]
    ['kde_ancient_egyptians', 'kde_standard']
    """
    if split not in SPLIT_DESIGNS:
        raise ValueError(f"unknown split {split!r} ({', '.join(SPLIT_DESIGNS)})")
    return SPLIT_DESIGNS[split]
