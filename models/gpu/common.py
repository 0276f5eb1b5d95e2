"""What every part of the GPU run shares: the repository's paths, the run's error, and the training
designs (art decks and randomised decks) that the run draws from and :func:`~models.gpu.packing.pack`
carries; never a held-out or selection design."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WEIGHTS = REPO / "models" / "weights"
SHIPPED_WEIGHTS = REPO / "vision" / "weights"
#: Share of scenes drawn from the training art decks (the rest from randomised decks).
ART_SHARE = 0.5


class GpuRunError(RuntimeError):
    """What a run needs is missing."""


# --------------------------------------------------------------------------- designs


def art_designs() -> tuple[str, ...]:
    """The training art decks (aisleriot, KDE) whose atlases are cached or can be made here."""
    from models.synth.designs import KDE_TRAIN, TRAIN
    from models.synth.faces import available_designs

    return tuple(d for d in available_designs(TRAIN + KDE_TRAIN) if not d.startswith("proc"))


def random_designs() -> tuple[str, ...]:
    """Procedural and randomised training decks whose fonts are on this machine.

    The held-out and selection variants (``proc5``, ``proc600`` …) are never among them.
    """
    from models.synth.designs import RANDOMISED, RANDOMISED_GLYPH, RANDOMISED_TTF, TRAIN

    out = [d.name for d in TRAIN if d.name.startswith("proc")]
    return tuple(out) + fonts_here(d.name for d in RANDOMISED + RANDOMISED_TTF + RANDOMISED_GLYPH)


def fonts_here(names: Iterable[str]) -> tuple[str, ...]:
    """The randomised decks (``procN``) among ``names`` whose outline fonts are on this machine."""
    from models.synth.randomised import random_variant

    out = []
    for name in names:
        v = random_variant(int(name[4:]))
        fonts = [f for f in (v.font, v.shape.font) if isinstance(f, str)]
        if all(Path(f).is_file() for f in fonts):
            out.append(name)
    return tuple(out)
