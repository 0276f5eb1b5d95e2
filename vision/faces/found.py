"""What both parts of the faces step speak of: the art cards (:data:`ART_CARDS`) and a card found
by its face (:class:`FaceMatch`), whether by its keypoints (:mod:`vision.faces.matcher`) or under
another card (:mod:`vision.faces.under`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from engine.cards import JOKER_NAMES
from vision.labels import SUITS

#: The cards whose art is matched: the court cards (suit by suit) and the two jokers.
ART_CARDS: tuple[str, ...] = tuple(f"{rank}{suit}" for suit in SUITS for rank in "JQK") + JOKER_NAMES


@dataclass(frozen=True)
class FaceMatch:
    """One card found by its face: the card, how many matches agree on it, and the face's outline in
    the image (4 × 2, the face's top-left, top-right, bottom-right, bottom-left corners); ``covered``:
    found from the strip of it that shows under another card (:meth:`UnderSearch.covered_copies`);
    ``located``: a card its corners named, located by its face (:meth:`UnderSearch.locate`) to look
    under it, which :func:`place_faces` does not add (its corners' reading stands)."""

    card: str
    matches: int
    quad: npt.NDArray[np.float64]
    covered: bool = False
    located: bool = False

    @property
    def centre(self) -> npt.NDArray[np.float64]:
        """The middle of the card."""
        return np.asarray(self.quad.mean(axis=0), np.float64)

    @property
    def box(self) -> tuple[float, float, float, float]:
        """The axis-aligned box round the card (x1, y1, x2, y2)."""
        lo, hi = self.quad.min(axis=0), self.quad.max(axis=0)
        return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))

    @property
    def score(self) -> float:
        """A confidence from the number of agreeing matches: ``m / (m + 4)`` (12 → 0.75, 36 → 0.9).

        >>> FaceMatch("KS", 36, np.zeros((4, 2))).score
        0.9
        """
        return self.matches / (self.matches + 4)

    def index_points(self) -> npt.NDArray[np.float64]:
        """Where a corner index's middle lies on this card: a tenth of the card in from each corner
        (4 × 2), the places a corner reading of this card puts its box."""
        q = self.quad
        pts = []
        for a, b in ((0.1, 0.1), (0.9, 0.1), (0.9, 0.9), (0.1, 0.9)):  # across, down
            top, bottom = q[0] + a * (q[1] - q[0]), q[3] + a * (q[2] - q[3])
            pts.append(top + b * (bottom - top))
        return np.array(pts, np.float64)

    def width(self) -> float:
        """The card's shorter side in pixels (the mean of the face's top and bottom edges)."""
        q = self.quad
        return float((np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2)
