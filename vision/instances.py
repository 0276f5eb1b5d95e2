"""Corner-index detections → physical cards.

A card prints its index (rank + suit) in two opposite corners, rotated 180° from each other. The
detector finds indices, so one card can give 0, 1 or 2 detections of its class. Two detections of
the same class belong to one card when their distance fits the card: the distance between the two
index centres of one card is about ``index_pair_ratio`` × the index size (or, with a rectified table
of known card size, the exact expected distance). Per class, candidate pairs whose distance fits
within ``tolerance`` (a band below and above the expected distance) become edges of a graph and a
maximum-cardinality, maximum-weight matching (networkx) picks the pairs; every matched pair and every unmatched detection is one card. So two
identical cards from different decks count twice, while the two corners of one card count once.

When the detections carry reading directions (``Detections.up``, from the orientation head of
:mod:`vision.orientation`), a pair must also read in opposite directions: the second index of a card
is printed turned 180°, while two identical cards fanned side by side show theirs turned alike
(``InstanceConfig.use_orientation``; an unknown direction refuses nothing). With both directions
known, a pair that lies along the card's diagonal as each index reads it (``InstanceConfig.diagonal``,
:func:`diagonal_angle`: few pairs of two cards do) may lie in a wider distance band
(``diagonal_tolerance``): decks whose index is small or large for the card no longer split in two.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import networkx as nx
import numpy as np

from engine.cards import AnyCard, parse_any
from vision.detections import Detections
from vision.labels import class_id, class_name
from vision.settings import SHIPPED

# Geometry of a standard poker card (63 × 88 mm, index ≈ 20 mm tall centred ≈ 6 × 13 mm in from the
# corner): the two index centres are ≈ 80 mm apart, 4.0 × the index height. Measured on the renderer's
# 27 training designs (index box vs face size) the ratio is 4.2 for most, 5.1 for a rank-beside-pip
# index and 2.3 for one very tall index; the tolerance keeps the common range. Decks that print all
# four corners put two same-card indices a card's width apart (≈ 0.64 of the diagonal), and a
# partly hidden index gives a small box, so its card's real distance looks long: hence a band wider
# below and above than ±35 % (``grouping.tolerance`` and ``grouping.index_pair_ratio`` of the
# settings file, :mod:`vision.settings`, chosen on the selection splits, docs/experiments/reader-history.md).
INDEX_OFFSET_FRACTION = (6 / 63, 13 / 88)
# A joker's corner mark (a star, an emblem, the word JOKER) has no standard size: over the renderer's
# designs its tl–br distance is 2.3 to 12 times its box side. Joker corners are therefore paired at
# the distance the *suit* cards' indices in the same image give (every card of a deck has the same
# size); only when no suit card is seen does the joker's own box set the scale, at this ratio (the
# middle of the common range; ``tolerance`` then covers ≈ 4.2–10.5).
JOKER_PAIR_RATIO = 7.0
JOKER_CLASSES = (class_id("SJ"), class_id("BJ"))
# Seen from one index (its glyphs upright), a card's other index lies down and to one side, along
# the line of the two index centres: atan(51 / 62) ≈ 39° from straight down for a 63 × 88 mm card
# (tl–br: to the right; tr–bl of a four-index deck: to the left, seen the same way from both ends).
# Measured with the orientation head on the selection splits' true corners:
# 5–95 % of one card's pairs at 19–53°, both ends within 13–63° for 99 %; of two cards' opposite
# same-class pairs, 23–35 % pass. A pair on the diagonal may lie in the wider band
# ``grouping.diagonal_tolerance`` (decks whose index is large or small for the card); any other pair
# keeps ``grouping.tolerance`` (the settings file, :mod:`vision.settings`; ``grouping.diagonal`` is
# the window of angles). Refusing pairs off the diagonal was measured too: it split more cards of the
# training designs than it saved (docs/experiments/reader-history.md).


class InstanceConfigError(ValueError):
    """Bad settings for grouping corners into cards."""


@dataclass(frozen=True)
class InstanceConfig:
    """How corner detections are grouped.

    ``card_size_px``: (width, height) of a card in the image when known (rectified table), else the
    expected distance is estimated from each index box's size with ``index_pair_ratio``.
    ``tolerance``: (below, above): a pair's distance may lie from ``1 - below`` to ``1 + above`` times
    the expected one.
    ``merge_four_index``: decks with an index in all four corners give two crossing pairs per card
    (tl–br, tr–bl) sharing one midpoint; such pairs are merged into one card.
    ``use_orientation``: refuse a pair whose two indices read the same way (both reading directions
    known, :func:`opposite`).
    ``diagonal``: (low, high) degrees: with both reading directions known, a suit card's pair that
    lies on the card's diagonal as both indices read it (:func:`on_diagonal`) may lie within the
    distance band ``diagonal_tolerance`` (same form as ``tolerance``); None: ``tolerance`` for all.
    """

    index_pair_ratio: float = SHIPPED.grouping.index_pair_ratio
    card_size_px: tuple[float, float] | None = None
    tolerance: tuple[float, float] = SHIPPED.grouping.tolerance
    merge_four_index: bool = True
    use_orientation: bool = True
    diagonal: tuple[float, float] | None = SHIPPED.grouping.diagonal
    diagonal_tolerance: tuple[float, float] = SHIPPED.grouping.diagonal_tolerance

    def __post_init__(self) -> None:
        for name in ("tolerance", "diagonal_tolerance"):
            below, above = getattr(self, name)
            if not (0 < below < 1 and above > 0):
                raise InstanceConfigError(
                    f"{name} (below, above) must have 0 < below < 1 and above > 0, got {getattr(self, name)}"
                )
        if self.diagonal is not None and not (0 <= self.diagonal[0] < self.diagonal[1] <= 90):
            raise InstanceConfigError(
                f"diagonal (low, high) must have 0 <= low < high <= 90, got {self.diagonal}"
            )
        if self.index_pair_ratio <= 0:
            raise InstanceConfigError(f"index_pair_ratio must be positive, got {self.index_pair_ratio}")


@dataclass(frozen=True)
class CardInstance:
    """One physical card: identity, confidence, box (x1, y1, x2, y2) and how many corners were seen.

    ``card`` is the engine's :data:`~engine.cards.AnyCard`: a named card or one not named in full
    (``??``, ``K?``, ``?H``, ``?J``); text in the notation given for it is parsed.

    >>> CardInstance("10h", 21, 0.9, (0.0, 0.0, 1.0, 1.0), 2).card
    Card('10H')
    """

    card: AnyCard
    class_id: int
    score: float
    box: tuple[float, float, float, float]
    corners: int

    def __post_init__(self) -> None:
        if isinstance(self.card, str):
            object.__setattr__(self, "card", parse_any(self.card))

    def to_json(self) -> dict[str, object]:
        """The ``detect --json`` entry."""
        return {"card": str(self.card), "score": round(self.score, 4), "box": [round(v, 1) for v in self.box]}


def _box_sides(det: Detections) -> np.ndarray:
    return np.asarray(np.maximum(det.xyxy[:, 2] - det.xyxy[:, 0], det.xyxy[:, 3] - det.xyxy[:, 1]))


def suit_index_size(det: Detections) -> float | None:
    """Median box side of the suit cards' indices (not jokers), or None when there is none."""
    suit = ~np.isin(det.class_id, JOKER_CLASSES)
    return float(np.median(_box_sides(det)[suit])) if suit.any() else None


def expected_pair_distance(
    det: Detections,
    i: int,
    j: int,
    config: InstanceConfig,
    suit_size: float | None = None,
    sides: np.ndarray | None = None,
) -> float:
    """Expected centre distance of two opposite indices of one card.

    From the calibrated card size when known; else from the two boxes' size, except for jokers,
    whose marks are measured against ``suit_size`` (:func:`suit_index_size`) when given.
    ``sides``: the boxes' long sides, when the caller has them already.
    """
    if config.card_size_px is not None:
        return card_pair_distance(config.card_size_px)
    joker = int(det.class_id[i]) in JOKER_CLASSES
    if joker and suit_size is not None:
        return float(config.index_pair_ratio * suit_size)
    if sides is None:
        sides = _box_sides(det)
    ratio = JOKER_PAIR_RATIO if joker else config.index_pair_ratio
    return float(ratio * (sides[i] + sides[j]) / 2)


def card_pair_distance(card_size_px: tuple[float, float]) -> float:
    """Centre distance of a card's two opposite indices, from the card's (width, height) in px.

    >>> round(card_pair_distance((63.0, 88.0)), 1)
    80.3
    """
    w, h = card_size_px
    ox, oy = INDEX_OFFSET_FRACTION
    return math.hypot(w * (1 - 2 * ox), h * (1 - 2 * oy))


def diagonal_pairs(det: Detections, config: InstanceConfig) -> list[tuple[int, int]]:
    """Pairs (i < j) of ``det`` that could be one *suit* card's two indices whatever their class:
    both reading directions known and opposite, each on the card's diagonal as the other reads it
    (:func:`on_diagonal` with ``config.diagonal``), and their distance within
    ``config.diagonal_tolerance`` of the expected one (calibrated card size, else
    ``index_pair_ratio`` × the two boxes' mean side). None when ``config.diagonal`` is None or
    ``det`` has no directions. What :mod:`vision.pairnaming` reads jointly.

    >>> boxes = np.array([[0, 0, 10, 10], [51, 62, 61, 72], [51, 0, 61, 10]], np.float32)
    >>> up = np.array([[0.0, -1.0], [0.0, 1.0], [0.0, 1.0]], np.float32)
    >>> det = Detections(boxes, np.ones(3, np.float32), np.zeros(3, np.int64), up)
    >>> diagonal_pairs(det, InstanceConfig(index_pair_ratio=8.0))
    [(0, 1)]
    """
    if config.diagonal is None or det.up is None or len(det) < 2:
        return []
    up = det.up.astype(np.float64)
    c = det.centers.astype(np.float64)
    v = c[None, :, :] - c[:, None, :]  # v[i, j]: from i to j
    low, high = config.diagonal
    ta = _diagonal_angles(up[:, None, :], v)  # seen from i
    tb = _diagonal_angles(up[None, :, :], -v)  # seen from j
    with np.errstate(invalid="ignore"):
        fits = (
            ((up @ up.T) < 0)
            & (np.abs(ta) >= low)
            & (np.abs(ta) <= high)
            & (np.abs(tb) >= low)
            & (np.abs(tb) <= high)
            & (ta * tb > 0)
        )
        if config.card_size_px is not None:
            expected = np.full(fits.shape, card_pair_distance(config.card_size_px))
        else:
            sides = _box_sides(det).astype(np.float64)
            expected = config.index_pair_ratio * (sides[:, None] + sides[None, :]) / 2
        ratio = np.linalg.norm(v, axis=2) / np.maximum(expected, 1e-9)
        below, above = config.diagonal_tolerance
        fits &= (ratio >= 1 - below) & (ratio <= 1 + above)
    i, j = np.nonzero(np.triu(fits, 1))
    return [(int(a), int(b)) for a, b in zip(i, j, strict=True)]


def _diagonal_angles(up: np.ndarray, v: np.ndarray) -> np.ndarray:
    """:func:`diagonal_angle` on broadcast arrays of directions and vectors (last axis x, y)."""
    along = -(v * up).sum(-1)
    right = v[..., 0] * -up[..., 1] + v[..., 1] * up[..., 0]
    return np.asarray(np.degrees(np.arctan2(right, along)))


def opposite(up_a: np.ndarray, up_b: np.ndarray) -> bool:
    """Whether two reading directions (unit vectors) could be one card's two indices: more than 90°
    apart, or either unknown (NaN).

    >>> opposite(np.array([0.0, -1.0]), np.array([0.1, 0.99])), opposite(np.array([0.0, -1.0]), np.array([0.7, -0.7]))
    (True, False)
    >>> opposite(np.array([0.0, -1.0]), np.array([np.nan, np.nan]))
    True
    """
    dot = float(up_a @ up_b)
    return bool(np.isnan(dot) or dot < 0)


def diagonal_angle(up: np.ndarray, v: np.ndarray) -> float:
    """Degrees from the card-down direction (``-up``) to ``v``, positive towards the card's right as
    the index reads (image px, y down).

    >>> up = np.array([0.0, -1.0])  # an upright index
    >>> round(diagonal_angle(up, np.array([0.0, 10.0]))), round(diagonal_angle(up, np.array([5.0, 5.0])))
    (0, 45)
    >>> round(diagonal_angle(up, np.array([-5.0, 5.0])))
    -45
    """
    return float(_diagonal_angles(np.asarray(up, np.float64), np.asarray(v, np.float64)))


def on_diagonal(up_a: np.ndarray, up_b: np.ndarray, v: np.ndarray, window: tuple[float, float]) -> bool:
    """Whether index b (at ``v`` from index a) lies where a card's other index would, seen from both:
    :func:`diagonal_angle` within ``window`` in size and of one sign from a and from b.

    >>> up, down = np.array([0.0, -1.0]), np.array([0.0, 1.0])
    >>> w = (10.0, 66.0)
    >>> on_diagonal(up, down, np.array([51.0, 62.0]), w), on_diagonal(up, down, np.array([0.0, 80.0]), w)
    (True, False)
    """
    low, high = window
    ta, tb = diagonal_angle(up_a, v), diagonal_angle(up_b, -v)
    return low <= abs(ta) <= high and low <= abs(tb) <= high and ta * tb > 0


def group_corners(det: Detections, config: InstanceConfig | None = None) -> list[CardInstance]:
    """One :class:`CardInstance` per physical card, sorted by class id then position."""
    config = config or InstanceConfig()
    centers = det.centers
    suit_size = suit_index_size(det)
    sides = _box_sides(det)
    up = det.up if config.use_orientation else None
    cards: list[CardInstance] = []
    for cid in np.unique(det.class_id):
        idx = np.flatnonzero(det.class_id == cid)
        graph: nx.Graph[int] = nx.Graph()
        graph.add_nodes_from(int(i) for i in idx)
        for a in range(len(idx)):
            for b in range(a + 1, len(idx)):
                i, j = int(idx[a]), int(idx[b])
                if up is not None and not opposite(up[i], up[j]):
                    continue
                below, above = _band(config, up, i, j, int(cid), centers[j] - centers[i])
                dist = float(np.linalg.norm(centers[i] - centers[j]))
                expected = expected_pair_distance(det, i, j, config, suit_size, sides)
                ratio = dist / expected if expected > 0 else math.inf
                if 1 - below <= ratio <= 1 + above:
                    fit = 1 - abs(ratio - 1) / max(below, above)  # 1 at the expected distance
                    graph.add_edge(
                        i, j, weight=1.0 + fit + 0.1 * float(det.confidence[i] + det.confidence[j])
                    )
        matching = nx.max_weight_matching(graph, maxcardinality=True)
        used: set[int] = set()
        groups: list[list[int]] = []
        for i, j in matching:
            used.update((i, j))
            groups.append([i, j])
        if config.merge_four_index:
            groups = _merge_crossing_pairs(groups, centers, det, config)
        cards.extend(_instance(det, g) for g in groups)
        cards.extend(_instance(det, [int(i)]) for i in idx if int(i) not in used)
    cards.sort(key=lambda c: (c.class_id, c.box[1], c.box[0]))
    return cards


def _band(
    config: InstanceConfig, up: np.ndarray | None, i: int, j: int, cid: int, v: np.ndarray
) -> tuple[float, float]:
    """The distance band of the pair (i, j), ``v`` from i to j: ``diagonal_tolerance`` for a suit
    card's pair on the diagonal, else ``tolerance`` (an unknown, NaN, direction is on no diagonal)."""
    if config.diagonal is None or up is None or cid in JOKER_CLASSES:
        return config.tolerance
    return config.diagonal_tolerance if on_diagonal(up[i], up[j], v, config.diagonal) else config.tolerance


def _merge_crossing_pairs(
    groups: list[list[int]], centers: np.ndarray, det: Detections, config: InstanceConfig
) -> list[list[int]]:
    """Merge two pairs whose midpoints coincide (within 15 % of the pair distance): one 4-index card."""
    merged: list[list[int]] = []
    taken = [False] * len(groups)
    for a, ga in enumerate(groups):
        if taken[a]:
            continue
        mid_a = centers[ga].mean(0)
        span = float(np.linalg.norm(centers[ga[0]] - centers[ga[1]]))
        for b in range(a + 1, len(groups)):
            gb = groups[b]
            if not taken[b] and np.linalg.norm(centers[gb].mean(0) - mid_a) < 0.15 * span:
                ga = ga + gb
                taken[b] = True
                break
        merged.append(ga)
    return merged


def _instance(det: Detections, members: list[int]) -> CardInstance:
    boxes = det.xyxy[members]
    box = (
        float(boxes[:, 0].min()),
        float(boxes[:, 1].min()),
        float(boxes[:, 2].max()),
        float(boxes[:, 3].max()),
    )
    cid = int(det.class_id[members[0]])
    return CardInstance(
        parse_any(class_name(cid)), cid, float(det.confidence[members].max()), box, len(members)
    )


def count_cards(cards: list[CardInstance]) -> Counter[str]:
    """Multiset of card names (duplicates counted), in the notation: for comparing with labels."""
    return Counter(str(c.card) for c in cards)
