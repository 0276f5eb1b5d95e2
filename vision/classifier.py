"""The naming step of the reader: the localiser's boxes (class-agnostic) are named by the index
classifier, with the other heads' readings folded in (ONNX Runtime, no torch).

YOLO learns *where* indices are much faster than *which* of 54 cards they show. The boxes merged
from all tiles are cropped from the *original* image (:mod:`vision.crops`), so an index found on a
downscaled pyramid level is still read at full resolution, and read by the crop networks
(:mod:`vision.heads`): the orientation head gives each box its reading direction (for pair naming
and grouping), the classifier names the card (a box it is unsure of is read again from shifted
windows), and the suit and upright heads' readings are folded in (:func:`vision.heads.fuse`). Every
setting comes from the shipped settings file (:mod:`vision.settings`); the reader
(:class:`vision.reader.CardReader`) runs the two stages. Training: :mod:`models.classifier`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from vision.detections import Detections
from vision.heads import (
    CLASSIFIER,
    JOKER,
    ORIENTATION,
    SUIT,
    UPRIGHT,
    ClassifierNotFoundError,
    CropHead,
    HeadSpec,
    fuse,
    joker_columns,
    softmax,
    suit_columns,
)
from vision.labels import RANKS, SUITS, class_id
from vision.orientation import up_vectors
from vision.settings import SHIPPED

if TYPE_CHECKING:
    from vision.detectors.base import DetectorConfig

#: A step between reading and naming: the proposals (with their reading directions) and their class
#: probabilities in, adjusted probabilities out (e.g. :func:`vision.pairnaming.name_pairs`).
Adjust = Callable[[Detections, npt.NDArray[np.float32]], npt.NDArray[np.float32]]

BACKGROUND = 54
#: The suited cards are the first class ids, in blocks of 13 ranks per suit (:mod:`vision.labels`).
SUITED = len(RANKS) * len(SUITS)
#: Class ids of the small and the big joker: ``name_boxes`` may hold them to a higher probability
#: (``joker_conf``), because printed text on a table imitates the vertical word JOKER of many joker
#: marks and a false joker is a false top trump (docs/experiments/reader-history.md).
JOKER_IDS = (class_id("SJ"), class_id("BJ"))


class IndexClassifier:
    """The naming step: the classifier (a :class:`~vision.heads.CropHead`) and the heads folded
    into it. Settings (:data:`vision.settings.SHIPPED` unless given):

    ``rotate_tta``: average each crop's reading with its 180°-turned copy;
    ``shifts``: offsets of the windows a box is read from (``((0, 0),)`` for one);
    ``shift_below``: only boxes whose reading of the first offset has a top probability below this
    are read at the other offsets too (above 1 reads every box at every offset);
    ``suit_head``: a suit head whose reading is folded in with ``suit_weight``;
    ``orientation_head``: an orientation head that gives the boxes their reading directions
    (``Detections.up``, for card grouping), when at least ``min_strength`` sure;
    ``upright_head``: an upright head whose reading of each window turned upright (by the
    orientation head's direction) is folded in with ``upright_weight``;
    ``joker_head``: a joker head whose reading of a wide window (a joker's or not, and which) is
    folded in with ``joker_weight``.
    """

    def __init__(
        self,
        path: Path,
        threads: int = 0,
        rotate_tta: bool = SHIPPED.classifier.rotate_tta,
        shifts: tuple[tuple[float, float], ...] = SHIPPED.classifier.shifts,
        shift_below: float = SHIPPED.classifier.shift_below,
        suit_head: CropHead | None = None,
        suit_weight: float = 1.0,
        orientation_head: CropHead | None = None,
        upright_head: CropHead | None = None,
        upright_weight: float = 1.0,
        min_strength: float = SHIPPED.orientation_head.min_strength,
        joker_head: CropHead | None = None,
        joker_weight: float = 1.0,
    ) -> None:
        self.head = CropHead(path, CLASSIFIER, threads, rotate_tta)
        self.upright_head = upright_head
        self.upright_weight = upright_weight
        self.suit_head = suit_head
        self.orientation_head = orientation_head
        self.min_strength = min_strength
        self.suit_weight = suit_weight
        self.joker_head = joker_head
        self.joker_weight = joker_weight
        if not shifts:
            raise ValueError("shifts needs at least one offset, e.g. ((0.0, 0.0),)")
        self.shifts = shifts
        self.shift_below = shift_below

    @classmethod
    def from_config(cls, config: DetectorConfig) -> IndexClassifier:
        """The classifier (and the heads) a :class:`~vision.detectors.base.DetectorConfig` names."""
        if config.classifier is None:
            raise ClassifierNotFoundError("the detector config names no classifier")

        def head(path: Path | None, spec: HeadSpec, rotate_tta: bool = False) -> CropHead | None:
            return None if path is None else CropHead(Path(path), spec, config.threads, rotate_tta)

        return cls(
            Path(config.classifier),
            config.threads,
            suit_head=head(config.suit_head, SUIT, SHIPPED.suit_head.rotate_tta),
            suit_weight=config.suit_weight,
            orientation_head=head(config.orientation_head, ORIENTATION),
            upright_head=head(config.upright_head, UPRIGHT),
            upright_weight=config.upright_weight,
            joker_head=head(config.joker_head, JOKER),
            joker_weight=config.joker_weight,
        )

    def probabilities(self, crops: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Softmax probabilities (N, 54) or (N, 55) when the model has a background output (index 54);
        with ``rotate_tta`` the normalised geometric mean of the upright and the 180°-turned reading."""
        return self.head.probabilities(crops)

    def box_probabilities(
        self,
        image: npt.NDArray[np.uint8],
        xyxy: npt.NDArray[np.float32],
        up: npt.NDArray[np.float32] | None = None,
    ) -> npt.NDArray[np.float32]:
        """Probabilities of the boxes of ``image``: the first offset of ``shifts`` read for every box;
        a box less sure than ``shift_below`` gets the normalised geometric mean of the readings at every
        offset instead (with ``rotate_tta``, each with its 180° turn); then the suit head's, given the
        boxes' reading directions ``up`` the upright head's, and the joker head's readings folded in."""
        if len(xyxy) == 0:
            return np.zeros((0, self.head.outputs), np.float32)
        first, rest = self.shifts[0], self.shifts[1:]
        z = self.head.log_probabilities([self.head.crops(image, xyxy, shift=first)])
        p = softmax(z)
        unsure = np.flatnonzero(p.max(1) < self.shift_below)
        if rest and len(unsure):
            boxes = xyxy[unsure]
            z_rest = self.head.log_probabilities([self.head.crops(image, boxes, shift=s) for s in rest])
            p[unsure] = softmax((z[unsure] + len(rest) * z_rest) / len(self.shifts))
        if self.suit_head is not None:
            p = fuse(p, suit_columns(self.suit_head.box_probabilities(image, xyxy)), self.suit_weight)
        if self.upright_head is not None and up is not None:
            p = fuse(p, self.upright_head.box_probabilities(image, xyxy, up), self.upright_weight)
        if self.joker_head is not None:  # over the classifier's own columns (54, or 55 with background)
            q = joker_columns(self.joker_head.box_probabilities(image, xyxy))[:, : p.shape[1]]
            p = fuse(p, q, self.joker_weight)
        return p

    def classify(
        self, image: npt.NDArray[np.uint8], det: Detections, adjust: Adjust | None = None
    ) -> Detections:
        """``det`` with class ids and confidences from the classifier (and reading directions from the
        orientation head, if any); background boxes are dropped. ``adjust`` changes the probabilities
        of ``det`` (with its directions) before naming."""
        if len(det) == 0:
            return det
        det, p = self.read(image, det)
        return named_boxes(det, p if adjust is None else adjust(det, p))

    def read(
        self, image: npt.NDArray[np.uint8], boxes: Detections
    ) -> tuple[Detections, npt.NDArray[np.float32]]:
        """The heads step: ``boxes`` with their reading directions (the orientation head, if any),
        and their fused card probabilities (:meth:`box_probabilities`)."""
        if len(boxes) == 0:
            return boxes, np.zeros((0, self.head.outputs), np.float32)
        boxes = boxes.with_up(self._up(image, boxes.xyxy))
        return boxes, self.box_probabilities(image, boxes.xyxy, boxes.up)

    def _up(
        self, image: npt.NDArray[np.uint8], xyxy: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32] | None:
        """The boxes' reading directions, or None without an orientation head."""
        if self.orientation_head is None:
            return None
        if len(xyxy) == 0:
            return np.zeros((0, 2), np.float32)
        return up_vectors(self.orientation_head.box_probabilities(image, xyxy), self.min_strength)

    def name_boxes(
        self,
        image: npt.NDArray[np.uint8],
        boxes: Detections,
        det_conf: float,
        conf: float,
        joker_conf: float | None = None,
        adjust: Adjust | None = None,
    ) -> Detections:
        """Boxes scoring ≥ ``det_conf`` (class-agnostic NMS, then boxes inside others: :func:`proposals`), named
        from ``image`` (their probabilities through ``adjust`` first, when given); kept when their
        probability is ≥ ``conf`` (and a joker's ≥ ``joker_conf`` when given: :data:`JOKER_IDS`)."""
        named = self.classify(image, proposals(boxes, det_conf), adjust).filter_confidence(conf)
        return named if joker_conf is None else named.filter_class_confidence(JOKER_IDS, joker_conf)

    def name_boxes_at(
        self,
        image: npt.NDArray[np.uint8],
        boxes: Detections,
        det_confs: Iterable[float],
        conf: float,
        adjust: Adjust | None = None,
    ) -> dict[float, Detections]:
        """:meth:`name_boxes` (without ``joker_conf``) at every one of ``det_confs``, each box read once.

        Greedy NMS and the contained filter decide a box from higher-scoring boxes only (stable score
        order), so the boxes kept at a ``det_conf`` are those kept at the lowest one that score at
        least as much; a box's reading does not depend on the other boxes (``adjust``, which may
        depend on them, runs per ``det_conf``).
        """
        det_confs = tuple(det_confs)
        det = proposals(boxes, min(det_confs))
        det = det.with_up(self._up(image, det.xyxy))
        p = self.box_probabilities(image, det.xyxy, det.up)
        out = {}
        for d in det_confs:
            keep = det.confidence >= d
            kept, pk = det[keep], p[keep]
            out[d] = named_boxes(kept, pk if adjust is None else adjust(kept, pk)).filter_confidence(conf)
        return out


def proposals(
    boxes: Detections, det_conf: float, contained: float = SHIPPED.proposals.contained_overlap
) -> Detections:
    """The boxes to name: score ≥ ``det_conf``, class-agnostic NMS, then none lying ``contained``
    (intersection / its area) inside a higher-scoring one: mostly a rank or suit glyph boxed alone,
    or the same index seen at another pyramid level."""
    return boxes.filter_confidence(det_conf).with_nms(0.5, class_agnostic=True).without_contained(contained)


def named_boxes(boxes: Detections, p: npt.NDArray[np.float32]) -> Detections:
    """``boxes`` named by their most probable class in ``p``, with that probability (their ``up``
    kept); *background* ones dropped."""
    cls = p.argmax(1)
    keep = cls < BACKGROUND  # a 55th output is "not an index"
    kept = boxes[keep]
    return Detections(kept.xyxy, p[np.arange(len(cls)), cls][keep], cls[keep], kept.up)
