"""Detection metrics on card multisets (no model code here, so they are easy to test).

Synthetic scenes: truth and prediction are multisets of card names per image (duplicates matter).
Per card: TP = Σ_classes min(pred, truth). Per play: the image's predicted multiset equals the truth.

Real photos (rank-only labels, whole-card boxes): a predicted card counts as a true positive when
its rank equals an unmatched truth box's rank and its box centre lies inside that truth box.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from engine.cards import JOKER_NAMES

JOKERS = frozenset(JOKER_NAMES)
REAL_RANKS = {"nine": "9", "ten": "10", "jack": "J", "queen": "Q", "king": "K", "ace": "A"}


@dataclass
class Tally:
    """True positives, false positives and false negatives."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, other: Tally) -> None:
        """Accumulate ``other`` into this tally."""
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    @property
    def precision(self) -> float:
        """tp / (tp + fp); 1.0 when nothing was predicted."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        """tp / (tp + fn); 1.0 when there was nothing to find."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def multiset_tally(pred: Counter[str], truth: Counter[str], keep: frozenset[str] | None = None) -> Tally:
    """Tally of two card multisets, optionally restricted to the names in ``keep``."""
    names = set(pred) | set(truth)
    if keep is not None:
        names &= keep
    t = Tally()
    for n in names:
        hit = min(pred[n], truth[n])
        t.tp += hit
        t.fp += pred[n] - hit
        t.fn += truth[n] - hit
    return t


@dataclass
class SceneReport:
    """Aggregated synthetic results."""

    cards: Tally = field(default_factory=Tally)
    jokers: Tally = field(default_factory=Tally)
    per_class: dict[str, Tally] = field(default_factory=dict)
    images: int = 0
    plays: int = 0
    exact_plays: int = 0
    #: the same figures per card design of the scenes (filled by ``models.evaluate``; one level only)
    by_design: dict[str, SceneReport] = field(default_factory=dict)
    #: the same figures per card-size bin of the scenes (``models.evaluate.size_bin``; one level only)
    by_size: dict[str, SceneReport] = field(default_factory=dict)

    @property
    def exact_match(self) -> float:
        """Share of plays whose predicted multiset equals the truth."""
        return self.exact_plays / self.plays if self.plays else 0.0

    def add(self, pred: Counter[str], truth: Counter[str]) -> None:
        """Add one image that is also one play."""
        self.add_cards(pred, truth)
        self.add_play(pred, truth)

    def add_play(self, pred: Counter[str], truth: Counter[str]) -> None:
        """Add one play: exact when the multisets are equal (duplicates included)."""
        self.plays += 1
        self.exact_plays += int(+pred == +truth)

    def add_cards(self, pred: Counter[str], truth: Counter[str]) -> None:
        """Add the cards of one image."""
        self.images += 1
        self.cards.add(multiset_tally(pred, truth))
        self.jokers.add(multiset_tally(pred, truth, JOKERS))
        for name in set(pred) | set(truth):
            self.per_class.setdefault(name, Tally()).add(multiset_tally(pred, truth, frozenset({name})))


@dataclass(frozen=True)
class RealBox:
    """A labelled whole card of a real photo: rank (``9``…``A``) and box."""

    rank: str
    box: tuple[float, float, float, float]


@dataclass(frozen=True)
class RealPrediction:
    """A predicted card reduced to its rank, with its box."""

    rank: str
    score: float
    box: tuple[float, float, float, float]


def card_rank(card: str) -> str:
    """Rank part of a card name (``10H`` → ``10``; jokers keep their name)."""
    return card if card in JOKERS else card[:-1]


def real_photo_tally(pred: Sequence[RealPrediction], truth: Sequence[RealBox]) -> Tally:
    """Greedy (highest score first) rank + centre-inside matching of one photo."""
    used = [False] * len(truth)
    t = Tally()
    for p in sorted(pred, key=lambda p: -p.score):
        cx, cy = (p.box[0] + p.box[2]) / 2, (p.box[1] + p.box[3]) / 2
        for k, g in enumerate(truth):
            if not used[k] and g.rank == p.rank and g.box[0] <= cx <= g.box[2] and g.box[1] <= cy <= g.box[3]:
                used[k] = True
                t.tp += 1
                break
        else:
            t.fp += 1
    t.fn = used.count(False)
    return t


@dataclass
class RealReport:
    """Aggregated real-photo results: micro totals and the per-photo averages."""

    total: Tally = field(default_factory=Tally)
    photo_precision: list[float] = field(default_factory=list)
    photo_recall: list[float] = field(default_factory=list)
    perfect_photos: int = 0

    def add(self, tally: Tally) -> None:
        """Add one photo."""
        self.total.add(tally)
        self.photo_precision.append(tally.precision)
        self.photo_recall.append(tally.recall)
        self.perfect_photos += int(tally.fp == 0 and tally.fn == 0)

    @property
    def photos(self) -> int:
        """Number of photos."""
        return len(self.photo_precision)

    @staticmethod
    def _mean(xs: Iterable[float]) -> float:
        xs = list(xs)
        return sum(xs) / len(xs) if xs else 0.0

    @property
    def mean_photo_precision(self) -> float:
        """Average over photos of the per-photo precision."""
        return self._mean(self.photo_precision)

    @property
    def mean_photo_recall(self) -> float:
        """Average over photos of the per-photo recall."""
        return self._mean(self.photo_recall)
