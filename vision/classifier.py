"""Second stage: a small CNN that names the card of each detected corner index (ONNX Runtime, no torch).

YOLO learns *where* indices are much faster than *which* of 54 cards they show. With a classifier the
detector's boxes (class-agnostic) are cropped, resized to ``size`` × ``size`` and classified; the
detection's class becomes the classifier's and its confidence the classifier's probability.
:class:`ClassifiedDetector` wraps any :class:`~vision.detectors.base.Detector` for one image;
:class:`~vision.reader.CardReader` instead names the boxes merged from all tiles on the *original*
image, so an index found on a downscaled pyramid level is still read at full resolution. Training: :mod:`models.classifier`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np
import numpy.typing as npt

from vision.detections import Detections
from vision.labels import RANKS, SUITS, class_id

if TYPE_CHECKING:
    from vision.detectors.base import DetectorConfig
    from vision.orientation import OrientationHead
    from vision.upright import UprightHead

#: A step between reading and naming: the proposals (with their reading directions) and their class
#: probabilities in, adjusted probabilities out (e.g. :func:`vision.pairnaming.name_pairs`).
Adjust = Callable[[Detections, npt.NDArray[np.float32]], npt.NDArray[np.float32]]

CROP_SIZE = 40  # training default; a model's own input size is read from its ONNX file
CROP_PAD = 0.15
BACKGROUND = 54
#: The suited cards are the first class ids, in blocks of 13 ranks per suit (:mod:`vision.labels`).
SUITED = len(RANKS) * len(SUITS)
#: A proposal lying this much (intersection / its area) inside a higher-scoring one is dropped before
#: naming: mostly a rank or suit glyph boxed alone, or the same index seen at another pyramid level.
#: On 25 val images it removed 150 of 270 false corners and 9 of 155 true ones (0.75: 120 and 9).
CONTAINED_OVERLAP = 0.6
#: Class ids of the small and the big joker: ``name_boxes`` may hold them to a higher probability
#: (``joker_conf``), because printed text on a table imitates the vertical word JOKER of many joker
#: marks and a false joker is a false top trump (docs/experiments/reader-history.md).
JOKER_IDS = (class_id("SJ"), class_id("BJ"))
#: Read every crop twice, upright and turned 180°, and average the log-probabilities. A card prints
#: its index in both orientations (top-left upright, bottom-right upside down), so the turned crop is
#: an equally valid view. On ground-truth crops of the synthetic val / held-out splits this raised the
#: shipped classifier's accuracy from 87.0 to 89.5 % and 82.4 to 85.0 % (docs/experiments/reader-history.md).
ROTATE_TTA = True
#: Offsets (fractions of the box's long side, x and y) of the crops a box is read from, the first for
#: every box, the rest for unsure ones (:data:`SHIFT_TTA_BELOW`); all readings are averaged the same
#: way: the localiser's boxes are off by a few pixels and a 10–20 px index then sits off-centre in the
#: crop. Chosen on the synthetic val split from seven variants (docs/experiments/reader-history.md, *Test-time averaging*).
SHIFT_TTA: tuple[tuple[float, float], ...] = (
    (0.0, 0.0),
    (0.06, 0.06),
    (-0.06, 0.06),
    (0.06, -0.06),
    (-0.06, -0.06),
)
#: Only boxes whose first reading (``SHIFT_TTA[0]``, with its 180° turn) is less sure than this get the
#: other shifted crops: on the val split 0.8 re-reads 26 % of the boxes and matches reading them all
#: (card F1 89.39 % either way), for about a quarter of the extra cost.
SHIFT_TTA_BELOW = 0.8


#: Metadata key of a suit head's ONNX file holding the context pad it was trained with.
PAD_KEY = "crop_pad"


class ClassifierNotFoundError(ValueError):
    """The classifier ONNX file does not exist."""


class SuitHeadError(ValueError):
    """A suit-head ONNX file that does not output 4 suits."""


def crop_boxes(
    image: npt.NDArray[np.uint8], xyxy: npt.NDArray[np.float32], size: int = CROP_SIZE, pad: float = CROP_PAD
) -> npt.NDArray[np.float32]:
    """Square crops around boxes (padded by ``pad`` of the long side), as float32 NCHW BGR in [0, 1]."""
    h, w = image.shape[:2]
    out = np.zeros((len(xyxy), 3, size, size), np.float32)
    for k, (x1, y1, x2, y2) in enumerate(xyxy):
        cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
        half = max(x2 - x1, y2 - y1) * (0.5 + pad)
        a, b = int(max(0, np.floor(cx - half))), int(max(0, np.floor(cy - half)))
        c, d = int(min(w, np.ceil(cx + half))), int(min(h, np.ceil(cy + half)))
        if c - a < 2 or d - b < 2:
            continue
        crop = cv2.resize(image[b:d, a:c], (size, size), interpolation=cv2.INTER_AREA)
        out[k] = crop.transpose(2, 0, 1).astype(np.float32) / 255.0
    return out


def shift_boxes(xyxy: npt.NDArray[np.float32], dx: float, dy: float) -> npt.NDArray[np.float32]:
    """Boxes moved by ``dx``, ``dy`` times their long side.

    >>> shift_boxes(np.array([[0, 0, 10, 20]], np.float32), 0.5, -0.25).tolist()
    [[10.0, -5.0, 20.0, 15.0]]
    """
    side = np.maximum(xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1])
    offset = np.stack([dx * side, dy * side, dx * side, dy * side], axis=1)
    return (xyxy + offset).astype(np.float32)


class IndexClassifier:
    """ONNX classifier: (N, 3, size, size) crops → (N, 54) logits.

    ``rotate_tta``: average each crop's reading with its 180°-turned copy (:data:`ROTATE_TTA`);
    ``shifts``: offsets of the crops a box is read from (:data:`SHIFT_TTA`; ``((0, 0),)`` for one crop);
    ``shift_below``: only boxes whose reading of the first offset has a top probability below this are
    read at the other offsets too (:data:`SHIFT_TTA_BELOW`; above 1 reads every box at every offset);
    ``suit_head``: a :class:`SuitHead` whose reading is folded in with ``suit_weight`` (:func:`fuse_suits`);
    ``orientation_head``: a :class:`~vision.orientation.OrientationHead` that gives the boxes their
    reading directions (``Detections.up``, for card grouping);
    ``upright_head``: a :class:`~vision.upright.UprightHead` whose reading of each crop turned upright
    (by the orientation head's direction) is folded in with ``upright_weight`` (:func:`vision.upright.fuse_cards`).
    """

    def __init__(
        self,
        path: Path,
        threads: int = 0,
        rotate_tta: bool = ROTATE_TTA,
        shifts: tuple[tuple[float, float], ...] = SHIFT_TTA,
        shift_below: float = SHIFT_TTA_BELOW,
        suit_head: SuitHead | None = None,
        suit_weight: float = 1.0,
        orientation_head: OrientationHead | None = None,
        upright_head: UprightHead | None = None,
        upright_weight: float = 1.0,
    ) -> None:
        self.session, self.input_name, self.size = _open_session(path, threads, "classifier")
        self.upright_head = upright_head
        self.upright_weight = upright_weight
        self.suit_head = suit_head
        self.orientation_head = orientation_head
        self.suit_weight = suit_weight
        self.rotate_tta = rotate_tta
        if not shifts:
            raise ValueError("shifts needs at least one offset, e.g. ((0.0, 0.0),)")
        self.shifts = shifts
        self.shift_below = shift_below

    @classmethod
    def from_config(cls, config: DetectorConfig) -> IndexClassifier:
        """The classifier (and suit and orientation heads, if any) a
        :class:`~vision.detectors.base.DetectorConfig` names."""
        from vision.orientation import OrientationHead
        from vision.upright import UprightHead

        if config.classifier is None:
            raise ClassifierNotFoundError("the detector config names no classifier")
        head = SuitHead(Path(config.suit_head), config.threads) if config.suit_head is not None else None
        turn = config.orientation_head
        return cls(
            Path(config.classifier),
            config.threads,
            suit_head=head,
            suit_weight=config.suit_weight,
            orientation_head=OrientationHead(Path(turn), config.threads) if turn is not None else None,
            upright_head=UprightHead(Path(config.upright_head), config.threads)
            if config.upright_head is not None
            else None,
            upright_weight=config.upright_weight,
        )

    def _mean_log_probabilities(self, views: list[npt.NDArray[np.float32]]) -> npt.NDArray[np.float32]:
        """Mean log-softmax over views of the same N crops (one batched run), with their 180° turns
        when ``rotate_tta``."""
        return _mean_log_softmax(self.session, self.input_name, views, self.rotate_tta)

    def probabilities(self, crops: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Softmax probabilities (N, 54) or (N, 55) when the model has a background output (index 54);
        with ``rotate_tta`` the normalised geometric mean of the upright and the 180°-turned reading."""
        if len(crops) == 0:
            return np.zeros((0, 54), np.float32)
        return _softmax(self._mean_log_probabilities([crops]))

    def box_probabilities(
        self,
        image: npt.NDArray[np.uint8],
        xyxy: npt.NDArray[np.float32],
        up: npt.NDArray[np.float32] | None = None,
    ) -> npt.NDArray[np.float32]:
        """Probabilities of the boxes of ``image``: the first offset of ``shifts`` read for every box;
        a box less sure than ``shift_below`` gets the normalised geometric mean of the readings at every
        offset instead (with ``rotate_tta``, each with its 180° turn); then the suit head's and, given
        the boxes' reading directions ``up``, the upright head's readings folded in."""
        if len(xyxy) == 0:
            return np.zeros((0, 54), np.float32)
        (dx, dy), rest = self.shifts[0], self.shifts[1:]
        z = self._mean_log_probabilities([crop_boxes(image, shift_boxes(xyxy, dx, dy), self.size)])
        p = _softmax(z)
        unsure = np.flatnonzero(p.max(1) < self.shift_below)
        if rest and len(unsure):
            boxes = xyxy[unsure]
            views = [crop_boxes(image, shift_boxes(boxes, dx, dy), self.size) for dx, dy in rest]
            z_rest = self._mean_log_probabilities(views)
            z_all = (z[unsure] + len(rest) * z_rest) / len(self.shifts)
            p[unsure] = _softmax(z_all)
        if self.suit_head is not None:
            p = fuse_suits(p, self.suit_head.box_probabilities(image, xyxy), self.suit_weight)
        if self.upright_head is not None and up is not None:
            from vision.upright import fuse_cards

            p = fuse_cards(p, self.upright_head.box_probabilities(image, xyxy, up), self.upright_weight)
        return p

    def classify(
        self, image: npt.NDArray[np.uint8], det: Detections, adjust: Adjust | None = None
    ) -> Detections:
        """``det`` with class ids and confidences from the classifier (and reading directions from the
        orientation head, if any); background boxes are dropped. ``adjust`` changes the probabilities
        of ``det`` (with its directions) before naming."""
        if len(det) == 0:
            return det
        det = det.with_up(self._up(image, det.xyxy))
        p = self.box_probabilities(image, det.xyxy, det.up)
        return _named(det, p if adjust is None else adjust(det, p))

    def _up(
        self, image: npt.NDArray[np.uint8], xyxy: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32] | None:
        """The boxes' reading directions, or None without an orientation head."""
        return None if self.orientation_head is None else self.orientation_head.box_up_vectors(image, xyxy)

    def name_boxes(
        self,
        image: npt.NDArray[np.uint8],
        boxes: Detections,
        det_conf: float,
        conf: float,
        joker_conf: float | None = None,
        adjust: Adjust | None = None,
    ) -> Detections:
        """Boxes scoring ≥ ``det_conf`` (class-agnostic NMS, then :data:`CONTAINED_OVERLAP`), named
        from ``image`` (their probabilities through ``adjust`` first, when given); kept when their
        probability is ≥ ``conf`` (and a joker's ≥ ``joker_conf`` when given: :data:`JOKER_IDS`)."""
        named = self.classify(image, _proposals(boxes, det_conf), adjust).filter_confidence(conf)
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
        det = _proposals(boxes, min(det_confs))
        det = det.with_up(self._up(image, det.xyxy))
        p = self.box_probabilities(image, det.xyxy, det.up)
        out = {}
        for d in det_confs:
            keep = det.confidence >= d
            kept, pk = det[keep], p[keep]
            out[d] = _named(kept, pk if adjust is None else adjust(kept, pk)).filter_confidence(conf)
        return out


def _proposals(boxes: Detections, det_conf: float) -> Detections:
    """The boxes to name: score ≥ ``det_conf``, class-agnostic NMS, then :data:`CONTAINED_OVERLAP`."""
    return (
        boxes.filter_confidence(det_conf)
        .with_nms(0.5, class_agnostic=True)
        .without_contained(CONTAINED_OVERLAP)
    )


def _named(boxes: Detections, p: npt.NDArray[np.float32]) -> Detections:
    """``boxes`` named by their most probable class in ``p``, with that probability (their ``up``
    kept); *background* ones dropped."""
    cls = p.argmax(1)
    keep = cls < BACKGROUND  # a 55th output is "not an index"
    kept = boxes[keep]
    return Detections(kept.xyxy, p[np.arange(len(cls)), cls][keep], cls[keep], kept.up)


def fuse_suits(
    p: npt.NDArray[np.float32], q: npt.NDArray[np.float32], weight: float
) -> npt.NDArray[np.float32]:
    """Card probabilities ``p`` (N, 54 or 55) with the suit head's ``q`` (N, 4, :data:`SUITS` order)
    folded in: each suited card's share is multiplied by ``q`` of its suit to the power ``weight``,
    renormalised *within the suited cards*, so jokers and background keep their probability.

    >>> p = np.array([[0.5, 0.0, 0.0, 0.3] + [0.0] * 48 + [0.0, 0.0, 0.2]], np.float32)
    >>> p[0, 39] = p[0, 3]; p[0, 3] = 0.0   # 2 of spades 0.5, 2 of clubs 0.3, background 0.2
    >>> q = np.array([[0.1, 0.0, 0.0, 0.9]], np.float32)   # the context says clubs: 0.8 × 0.27 / 0.32
    >>> f = fuse_suits(p, q, 1.0)
    >>> [round(float(f[0, k]), 3) for k in (0, 39, 54)]
    [0.125, 0.675, 0.2]
    """
    if weight == 0 or len(p) == 0:
        return p
    return fold_in(p, np.repeat(np.power(np.maximum(q, 1e-6), weight), len(RANKS), axis=1))


def fold_in(p: npt.NDArray[np.float32], factors: npt.NDArray[np.floating]) -> npt.NDArray[np.float32]:
    """``p`` (N, C) with its first K columns multiplied by ``factors`` (N, K) and renormalised to the
    probability they held together; the other columns (jokers, background) keep theirs."""
    k = factors.shape[1]
    folded = p[:, :k] * factors
    mass = p[:, :k].sum(1, keepdims=True)
    out = p.copy()
    out[:, :k] = folded * mass / np.maximum(folded.sum(1, keepdims=True), 1e-12)
    return out.astype(np.float32)


class SuitHead:
    """ONNX suit head: context crops around index boxes → (N, 4) suit probabilities (:data:`SUITS`).

    The index crop is tight (:data:`CROP_PAD`); at 10–20 px a club and a spade glyph differ by a few
    pixels. The head reads a wider crop (the pad it was trained with, stored in its ONNX metadata as
    :data:`PAD_KEY`) where the card's pips, larger than the index's suit, are often in view. Trained
    by ``tractorcam heads classifier --target suit``. Raises :class:`ClassifierNotFoundError` for a
    missing file and :class:`SuitHeadError` for a model without 4 outputs or without its pad.
    """

    def __init__(self, path: Path, threads: int = 0, rotate_tta: bool = ROTATE_TTA) -> None:
        self.session, self.input_name, self.size = _open_session(path, threads, "suit head")
        if self.session.get_outputs()[0].shape[-1] != len(SUITS):
            raise SuitHeadError(f"{path}: a suit head outputs 4 suits")
        meta = self.session.get_modelmeta().custom_metadata_map
        if PAD_KEY not in meta:
            raise SuitHeadError(f"{path}: no {PAD_KEY!r} in its metadata (models.classifier.write_crop_pad)")
        self.pad = float(meta[PAD_KEY])
        self.rotate_tta = rotate_tta

    def box_probabilities(
        self, image: npt.NDArray[np.uint8], xyxy: npt.NDArray[np.float32]
    ) -> npt.NDArray[np.float32]:
        """Suit probabilities (N, 4) of the boxes (with ``rotate_tta``, the normalised geometric mean of
        the upright and the 180°-turned crop)."""
        if len(xyxy) == 0:
            return np.zeros((0, 4), np.float32)
        crops = crop_boxes(image, xyxy, self.size, self.pad)
        return _softmax(_mean_log_softmax(self.session, self.input_name, [crops], self.rotate_tta))


def _open_session(path: Path, threads: int, what: str) -> tuple[Any, str, int]:
    """An ONNX Runtime CPU session of a crop network, its input name and crop size; raises
    :class:`ClassifierNotFoundError` naming ``what`` when the file is missing."""
    import onnxruntime as ort

    if not Path(path).is_file():
        raise ClassifierNotFoundError(f"{what} not found: {path}")
    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    first = session.get_inputs()[0]
    return session, first.name, int(first.shape[2])


def _mean_log_softmax(
    session: Any, input_name: str, views: list[npt.NDArray[np.float32]], rotate_tta: bool
) -> npt.NDArray[np.float32]:
    """Mean log-softmax of a network over views of the same N crops (one batched run), with their
    180° turns when ``rotate_tta``."""
    if rotate_tta:
        views = views + [np.ascontiguousarray(v[:, :, ::-1, ::-1]) for v in views]
    (logits,) = session.run(None, {input_name: np.concatenate(views)})
    z: npt.NDArray[np.float32] = _log_softmax(logits).reshape(len(views), len(views[0]), -1).mean(0)
    return z


def _log_softmax(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    z = logits - logits.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def _softmax(z: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    e = np.exp(z - z.max(1, keepdims=True))
    return (e / e.sum(1, keepdims=True)).astype(np.float32)


class ClassifiedDetector:
    """A detector whose boxes (class-agnostic, at ``det_conf``) are named by an :class:`IndexClassifier`."""

    def __init__(
        self,
        base,  # noqa: ANN001
        classifier: IndexClassifier,
        det_conf: float,
        conf: float,
        joker_conf: float | None = None,
    ) -> None:
        self.base = base
        self.config = base.config
        self.classifier = classifier
        self.det_conf = det_conf
        self.conf = conf
        self.joker_conf = joker_conf

    def detect(self, image: npt.NDArray[np.uint8]) -> Detections:
        """Boxes of the base detector, classified; kept when the class probability ≥ ``conf`` (a joker's
        ≥ ``joker_conf`` when set)."""
        boxes = self.base.detect(image)
        return self.classifier.name_boxes(image, boxes, self.det_conf, self.conf, self.joker_conf)
