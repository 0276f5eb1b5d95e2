"""Naming a card's two visible indices together.

A card whose two opposite corners both show gives the classifier two readings of one name. Read
apart, a small or odd index often comes out as another card: the card is then counted once right
and once wrong, or not at all when both readings stay below ``conf``. Before naming, every pair of
proposals that could be one suit card's two indices whatever their class (:func:`vision.instances.diagonal_pairs`:
opposite reading directions, on the card's diagonal, at a card's distance) is read jointly: the
product of the two readings over the 52 suit cards, renormalised. When the joint reading's best
card reaches ``joint_conf`` and each corner alone gives that card at least ``floor`` (two
different cards that happen to lie like one card's corners keep their own names), both rows become
the joint reading. Pairs are taken surest first and a corner joins one pair at most; the grouping
(:func:`vision.instances.group_corners`, same geometry) then counts the pair as one card.

Jokers are left out (their marks have no standard place or size), and so is every corner without a
reading direction. Chosen on the selection splits (docs/experiments/reader-history.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from vision.classifier import SUITED
from vision.detections import Detections
from vision.instances import InstanceConfig, diagonal_pairs
from vision.settings import SHIPPED

#: Settings chosen on the selection splits (docs/experiments/reader-history.md).


class PairNamingError(ValueError):
    """Bad settings for naming pairs of corners together."""


@dataclass(frozen=True)
class PairNaming:
    """``joint_conf``: the probability the joint reading's best card needs; ``floor``: the least
    probability each corner's own reading must give that card."""

    joint_conf: float = SHIPPED.pair_naming.joint_conf
    floor: float = SHIPPED.pair_naming.floor

    def __post_init__(self) -> None:
        if not 0 < self.joint_conf <= 1:
            raise PairNamingError(f"joint_conf must be in (0, 1], got {self.joint_conf}")
        if not 0 <= self.floor < 1:
            raise PairNamingError(f"floor must be in [0, 1), got {self.floor}")


def name_pairs(
    det: Detections, p: npt.NDArray[np.float32], naming: PairNaming, instances: InstanceConfig
) -> npt.NDArray[np.float32]:
    """``p`` (N, 54 or 55 class probabilities of ``det``'s boxes) with every accepted pair's two rows
    replaced by their joint reading (zero on jokers and background); ``p`` itself is not changed.

    >>> from vision.labels import class_id
    >>> boxes = np.array([[0, 0, 10, 10], [51, 62, 61, 72]], np.float32)
    >>> up = np.array([[0.0, -1.0], [0.0, 1.0]], np.float32)
    >>> det = Detections(boxes, np.ones(2, np.float32), np.zeros(2, np.int64), up)
    >>> p = np.full((2, 55), 0.001, np.float32)
    >>> p[0, class_id("6H")], p[0, class_id("8H")] = 0.55, 0.4  # the small index: 6 or 8?
    >>> p[1, class_id("6H")], p[1, class_id("8H")] = 0.1, 0.85  # its twin reads 8 clearly
    >>> q = name_pairs(det, p, PairNaming(), InstanceConfig(index_pair_ratio=8.0))
    >>> [int(row.argmax()) == class_id("8H") for row in q], round(float(q[0].max()), 2)
    ([True, True], 0.86)
    """
    if p.shape[0] != len(det):
        raise PairNamingError(f"{p.shape[0]} rows of probabilities for {len(det)} boxes")
    out = p.copy()
    logp = np.log(np.maximum(p[:, :SUITED].astype(np.float64), 1e-9))
    accepted = []
    for i, j in diagonal_pairs(det, instances):
        z = logp[i] + logp[j]
        q = np.exp(z - z.max())
        q /= q.sum()
        k = int(q.argmax())
        if q[k] >= naming.joint_conf and p[i, k] >= naming.floor and p[j, k] >= naming.floor:
            accepted.append((float(q[k]), i, j, q))
    accepted.sort(key=lambda a: -a[0])
    used: set[int] = set()
    for _, i, j, q in accepted:
        if i in used or j in used:
            continue
        used.update((i, j))
        row = np.zeros(p.shape[1], np.float32)
        row[:SUITED] = q
        out[i] = out[j] = row
    return out
