"""The card reader: detector backend + tiling + corner grouping, image in, physical cards out."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.cards import parse_any
from vision.classifier import BACKGROUND, Adjust, IndexClassifier, named_boxes, proposals
from vision.detections import Detections
from vision.detectors.base import (
    ClassifierRequiredError,
    Detector,
    DetectorConfig,
    create_detector,
    default_classifier,
    default_joker_head,
    default_orientation_head,
    default_suit_head,
    default_upright_head,
)
from vision.faces import FaceMatcher, corner_named, place_faces
from vision.instances import (
    JOKER_CLASSES,
    CardInstance,
    InstanceConfig,
    expected_pair_distance,
    group_corners,
)
from vision.labels import RANKS, SUITS, class_id
from vision.look import DESPECKLE_SIZES, LOOKS, Look, apply_look, despeckle
from vision.pairnaming import PairNaming, name_pairs
from vision.settings import SHIPPED, ReaderSettings
from vision.tiling import TiledDetector, TilingConfig


@dataclass(frozen=True)
class ReaderConfig:
    """Everything needed to read cards from an image."""

    detector: DetectorConfig = field(default_factory=DetectorConfig)
    tiling: TilingConfig | None = None  # None: automatic pyramid with tile = detector imgsz
    instances: InstanceConfig = field(default_factory=InstanceConfig)
    #: a card's two visible indices named together before grouping (:mod:`vision.pairnaming`; with
    #: the classifier only); None: every box named alone
    pair_naming: PairNaming | None = field(default_factory=PairNaming)
    #: keep the indices the classifier cannot name as cards written ``??`` (:class:`UnknownCards`;
    #: with the classifier only); None: drop them
    unknown_cards: UnknownCards | None = None
    #: a second look for jokers (with the classifier only): the localiser's boxes scoring from this
    #: up to ``det_conf`` are named too and kept only as jokers named at ``joker_conf`` (and
    #: ``conf``) or more (:attr:`vision.settings.ReaderSettings.joker_det_conf`); None: none
    joker_det_conf: float | None = None
    #: how the deck is shown to the reader (:mod:`vision.look`; an enrolled deck's ``deck.json``)
    look: Look = "plain"
    #: the localiser sees the image through a median filter of this size (:func:`vision.look.despeckle`;
    #: an enrolled deck's ``deck.json``); 0: as it is
    despeckle: int = 0
    #: an enrolled deck's faces folder: its court cards and jokers are also found by their whole
    #: face (:mod:`vision.faces`); None: not
    faces: Path | None = None
    #: copies of each card in the game (its decks): the faces step looks for a covered copy of a
    #: card only while fewer than this many of it are found; None: not known (looked for)
    decks: int | None = None


@dataclass(frozen=True)
class UnknownCards:
    """Which indices the classifier could not name still count as a card (``??``): their best class
    has at least ``floor`` probability (below it a box is rather not an index at all), and no index
    the classifier named the same lies within ``same_card`` of the card's index-to-index distance
    (then it is that card's other corner, already counted). What the classifier is sure of, the rank
    or the suit, is kept (``partial``)."""

    floor: float = SHIPPED.unknown_cards.floor
    same_card: float = SHIPPED.unknown_cards.same_card
    #: a card whose indices put at least this much probability on one rank, one suit or the jokers
    #: is written with what is known (``K?``, ``?C``, ``?J``: :func:`partial_name`); None: ``??``
    partial: float | None = 0.9


class ModelFolderError(ValueError):
    """A ``--model`` folder without a learned classifier (one line)."""


def model_options(folder: Path | None) -> dict[str, Any]:
    """The options of :func:`default_reader_config` for an enrolled deck's folder (``tractorcam
    enroll learn`` or ``enroll --labels``): its learned index classifier in place of the shipped
    one, no joker head (that classifier has learned the deck's own jokers, and its faces step
    finds them by their face; the joker head is for designs the reader never saw), its localiser
    when it has one (``localiser.onnx``), its faces (``faces/``: the faces step), and the deck's
    look (:mod:`vision.look`) when its ``deck.json`` names one; none for no folder.

    >>> model_options(None)
    {}
    """
    if folder is None:
        return {}
    classifier = Path(folder) / "classifier.onnx"
    if not classifier.is_file():
        raise ModelFolderError(f"--model {folder}: no classifier.onnx (tractorcam enroll learn {folder})")
    options: dict[str, Any] = {"classifier": classifier, "joker_head": None}
    if (Path(folder) / "localiser.onnx").is_file():  # taught from labelled photos of the deck
        options["weights"] = Path(folder) / "localiser.onnx"
    if (Path(folder) / "faces" / "KS.png").is_file():
        options["faces"] = Path(folder) / "faces"
    deck = Path(folder) / "deck.json"
    if deck.is_file():
        try:
            saved = json.loads(deck.read_text(encoding="utf-8"))
            look, size = saved.get("look", "plain"), saved.get("despeckle", 0)
        except (ValueError, AttributeError) as exc:
            raise ModelFolderError(f"--model {folder}: deck.json: {exc}") from None
        if look not in LOOKS:
            raise ModelFolderError(
                f"--model {folder}: deck.json: unknown look {look!r} (known: {', '.join(LOOKS)})"
            )
        if size not in DESPECKLE_SIZES:
            raise ModelFolderError(
                f"--model {folder}: deck.json: despeckle {size!r} is not one of "
                f"{', '.join(map(str, DESPECKLE_SIZES))}"
            )
        options["look"] = look
        if size:
            options["despeckle"] = size
    return options


def default_reader_config(
    backend: str = "onnx",
    *,
    settings: ReaderSettings = SHIPPED,
    look: Look = "plain",
    despeckle: int = 0,
    faces: Path | None = None,
    decks: int | None = None,
    unknown_cards: bool = False,
    **detector_options: object,
) -> ReaderConfig:
    """The shipped configuration: the committed weights and heads (those present) with the settings
    they were selected with (:mod:`vision.settings`), the automatic pyramid, the deck shown as
    ``look`` (:mod:`vision.look`) and to the localiser through ``despeckle``, the game's ``decks``
    (:attr:`ReaderConfig.decks`), the indices it cannot name kept as cards not (fully) named when
    ``unknown_cards`` (:class:`UnknownCards`); ``detector_options`` override :class:`DetectorConfig`
    fields."""
    options: dict[str, object] = {
        "type": backend,
        "classifier": default_classifier(),
        "suit_head": default_suit_head(),
        "orientation_head": default_orientation_head(),
        "upright_head": default_upright_head(),
        "upright_weight": settings.upright_head.weight,
        "joker_head": default_joker_head(settings),
        "joker_weight": 1.0 if settings.joker_head is None else settings.joker_head.weight,
        "suit_weight": settings.suit_head.weight,
        "det_conf": settings.det_conf,
        "conf": settings.conf,
        "joker_conf": settings.joker_conf,
    }
    options.update(detector_options)
    detector = DetectorConfig(**options)  # type: ignore[arg-type]
    return ReaderConfig(
        detector=detector,
        tiling=TilingConfig(tile=detector.imgsz),
        look=look,
        despeckle=despeckle,
        faces=faces,
        decks=decks,
        unknown_cards=UnknownCards() if unknown_cards else None,
    )


@dataclass(frozen=True)
class Reading:
    """Result for one image: the raw corner detections and the physical cards."""

    corners: Detections
    cards: list[CardInstance]


class CardReader:
    """Reads the cards of BGR images."""

    def __init__(self, config: ReaderConfig | None = None, detector: Detector | None = None) -> None:
        self.config = config or ReaderConfig()
        d = self.config.detector
        self.classifier = IndexClassifier.from_config(d) if d.classifier is not None else None
        # with a classifier, the detector only proposes boxes (score >= det_conf); they are named
        # after merging the tiles, on the original image (vision.classifier)
        base = d.localiser_only() if self.classifier else d
        self.detector = detector or create_detector(base)
        self.faces = FaceMatcher.from_folder(self.config.faces) if self.config.faces is not None else None
        #: which art cards the corners name, by a card's size in pixels (:meth:`with_view`)
        self._corner_named: dict[tuple[float, float], frozenset[str]] = {}
        if self.classifier is None and self.detector.classes == 1:
            raise ClassifierRequiredError(
                "this detector only localises indices (1 class): give it the index classifier"
            )
        self._steps()

    def _steps(self) -> None:
        """The tiled localiser and the naming adjustment of :attr:`config` (the networks stay)."""
        tiling = self.config.tiling or TilingConfig(tile=self.config.detector.imgsz)
        detector = self.detector
        low = self._joker_look()
        if low is not None:  # the same network, its boxes kept from the lower score
            detector = copy.copy(detector)
            detector.config = replace(detector.config, conf=low)
        self.tiled = TiledDetector(detector, tiling)
        naming = self.config.pair_naming
        #: what the classifier's probabilities go through before naming (:meth:`IndexClassifier.name_boxes`)
        self.adjust: Adjust | None = (
            None if naming is None else partial(name_pairs, naming=naming, instances=self.config.instances)
        )

    def _joker_look(self) -> float | None:
        """The score from which the second look for jokers names boxes, when it is on (a classifier,
        and :attr:`ReaderConfig.joker_det_conf` below ``det_conf``)."""
        low = self.config.joker_det_conf
        if self.classifier is None or low is None or low >= self.config.detector.det_conf:
            return None
        return low

    def with_view(
        self, tiling: TilingConfig, instances: InstanceConfig, joker_det_conf: float | None = None
    ) -> CardReader:
        """The same networks looking with another tiling and grouping (e.g. one level of a rectified
        table whose card size is known: :mod:`vision.zones`), with a second look for jokers from
        ``joker_det_conf`` (:attr:`ReaderConfig.joker_det_conf`; None: none). With an enrolled deck
        and a card size, the faces step learns which art cards the corners name at that size
        (:func:`vision.faces.corner_named`, once per size) and looks under other cards only for the
        rest."""
        out = copy.copy(self)
        out.config = replace(self.config, tiling=tiling, instances=instances, joker_det_conf=joker_det_conf)
        out._steps()
        size = instances.card_size_px
        if self.faces is not None and size is not None:
            if size not in self._corner_named:
                plain = copy.copy(out)
                plain.faces = None
                self._corner_named[size] = corner_named(
                    self.faces.art, lambda image: plain.read(image).cards, size
                )
            out.faces = self.faces.with_corner_named(self._corner_named[size])
        return out

    def with_decks(self, decks: int | None) -> CardReader:
        """The same reader for a game of ``decks`` decks (:attr:`ReaderConfig.decks`)."""
        out = copy.copy(self)
        out.config = replace(self.config, decks=decks)
        return out

    def localise(self, image: npt.NDArray[np.uint8]) -> Detections:
        """The tiled localiser's boxes on ``image`` (already in the deck's look), seen through
        :attr:`ReaderConfig.despeckle`."""
        return self.tiled.detect(despeckle(image, self.config.despeckle))

    @property
    def thresholds(self) -> Thresholds:
        """The thresholds :meth:`read` decides with: its detector config's."""
        return Thresholds.of(self.config.detector)

    def read(self, image: npt.NDArray[np.uint8], seconds: dict[str, float] | None = None) -> Reading:
        """Corners and cards of one image, step by step on :class:`~vision.detections.Detections`:
        the image shown in the deck's **look** (:mod:`vision.look`) → **localise** (the tiled
        localiser's boxes) → the **proposals** to name → **heads** (each proposal cropped and read
        by the crop networks, their readings fused: :meth:`IndexClassifier.box_probabilities`) →
        **pair** (a card's two corners named together: :mod:`vision.pairnaming`) → **decide**
        (:func:`decide`: the thresholds) → **group** (corners into cards) → with an enrolled deck,
        **faces** (court cards and jokers found by their whole face: :mod:`vision.faces`). With the second look
        for jokers (:attr:`ReaderConfig.joker_det_conf`), the weaker boxes the proposals leave are
        read by the heads too and kept only as sure jokers. With ``seconds``, the time of
        ``localise``, ``name`` (proposals to decide), ``group`` and ``faces`` is added to it.

        The expensive steps (look to heads) are :meth:`stages`, the rest :meth:`decide` at the
        reader's own :attr:`thresholds`: ``read(image)`` is ``decide(stages(image), thresholds)``."""
        return self.decide(self.stages(image, seconds), self.thresholds, seconds)

    def stages(self, image: npt.NDArray[np.uint8], seconds: dict[str, float] | None = None) -> Stages:
        """The expensive steps of :meth:`read` on one image: look, localise, proposals (from the
        detector's ``det_conf``) and heads, and with the second look for jokers the heads' reading of
        the weaker boxes; nothing thresholded by ``conf`` or ``joker_conf``. With ``seconds``, the
        time of ``localise`` and ``name`` is added to it."""
        lap = _laps(seconds)
        image = apply_look(image, self.config.look)
        corners = self.localise(image)
        lap("localise")
        d = self.config.detector
        if self.classifier is None:
            return Stages(image, corners, d.conf)
        boxes, p = self.classifier.read(image, proposals(corners, d.det_conf))
        weak, weak_p = Detections.empty(), np.zeros((0, p.shape[1]), np.float32)
        if self._joker_look() is not None:
            weak = weak_boxes(corners, d.det_conf)
            if len(weak):
                weak, weak_p = self.classifier.read(image, weak)
        lap("name")
        return Stages(image, corners, d.det_conf, boxes, p, weak, weak_p)

    def decide(
        self, stages: Stages, thresholds: Thresholds | None = None, seconds: dict[str, float] | None = None
    ) -> Reading:
        """The rest of :meth:`read` after :meth:`stages`, at ``thresholds`` (None: the reader's own):
        the proposals scoring ``det_conf`` or more (those of the stages, the others dropped: greedy
        NMS and the contained filter keep a box for the higher-scoring boxes alone) → **pair** →
        **decide** (:func:`decide`: ``conf``, ``joker_conf``, the unknown cards' floor) → the
        second look's sure jokers (the boxes from :attr:`ReaderConfig.joker_det_conf` up to
        ``det_conf``) → **group** → the unknown cards → **faces**. Cheap but for the faces step:
        selection (:func:`models.evaluate.sweep_thresholds`) scores every setting with it over one
        :class:`Stages` per image. Without the classifier, the detector's corners scoring ``conf`` or
        more are grouped. Raises ``ValueError`` for a threshold below the stages' :attr:`Stages.least`.
        With ``seconds``, the time of ``name``, ``group`` and ``faces`` is added to it."""
        t = thresholds or self.thresholds
        lap = _laps(seconds)
        unsure: Detections | None = None
        forms: npt.NDArray[np.float32] | None = None  # the unsure boxes' class probabilities
        if stages.p is None:  # the detector named the corners
            if t.conf < stages.least:
                raise ValueError(f"conf {t.conf} is below the stages' {stages.least}")
            corners = stages.corners if t.conf == stages.least else stages.corners.filter_confidence(t.conf)
        else:
            if t.det_conf < stages.least:
                raise ValueError(f"det_conf {t.det_conf} is below the stages' {stages.least}")
            boxes, p = stages.boxes, stages.p
            keep = boxes.confidence >= t.det_conf
            weak, weak_p = stages.weak, stages.weak_p
            low = self.config.joker_det_conf
            if low is not None and low < t.det_conf:  # the second look reads from ``low`` up
                below = ~keep & (boxes.confidence >= low)
                if below.any():
                    weak = Detections.concat([boxes[below], weak])
                    weak_p = np.concatenate([p[below], weak_p])
            else:
                weak = Detections.empty()
            if not keep.all():
                boxes, p = boxes[keep], p[keep]
            if self.adjust is not None:
                p = self.adjust(boxes, p)
            floor = None if self.config.unknown_cards is None else self.config.unknown_cards.floor
            corners, unsure, forms = _decide(boxes, p, t.conf, t.joker_conf, floor)
            if len(weak):
                corners = Detections.concat([corners, sure_jokers(weak, weak_p, t)])
        lap("name")
        cards = group_corners(corners, self.config.instances)
        if unsure is not None and len(unsure):
            cards += unknown_cards(corners, unsure, self.config.instances, self.config.unknown_cards, forms)
        lap("group")
        if self.faces is not None:
            cards = place_faces(
                cards,
                self.faces.match(stages.image, self.config.instances.card_size_px, self.config.decks, cards),
            )
            lap("faces")
        return Reading(corners, cards)


@dataclass(frozen=True)
class Thresholds:
    """The thresholds of :meth:`CardReader.decide`, those selection sweeps (:mod:`models.selection`):
    the localiser's score a box needs to be named (``det_conf``), the probability a card needs
    (``conf``) and a joker (``joker_conf``; None: ``conf``)."""

    det_conf: float
    conf: float
    joker_conf: float | None = None

    @classmethod
    def of(cls, detector: DetectorConfig) -> Thresholds:
        """The thresholds of a detector config.

        >>> Thresholds.of(DetectorConfig(det_conf=0.1, conf=0.6, joker_conf=0.8))
        Thresholds(det_conf=0.1, conf=0.6, joker_conf=0.8)
        """
        return cls(detector.det_conf, detector.conf, detector.joker_conf)


@dataclass(frozen=True, eq=False)
class Stages:
    """What the expensive steps of :meth:`CardReader.read` make of one image
    (:meth:`CardReader.stages`), for :meth:`CardReader.decide` at any thresholds from :attr:`least`
    up: the image in the deck's look (the faces step reads it), the localiser's boxes, the
    proposals with their reading directions and their fused class probabilities (before pair
    naming), and the boxes of the second look for jokers (below the proposals' ``det_conf``) with
    theirs. Without the classifier, only the image and the detector's named corners."""

    image: npt.NDArray[np.uint8]
    corners: Detections
    #: the least threshold the stages hold: the proposals' ``det_conf`` (without the classifier, the
    #: detector's ``conf``)
    least: float
    boxes: Detections = field(default_factory=Detections.empty)
    #: the proposals' class probabilities, one row each; None without the classifier
    p: npt.NDArray[np.float32] | None = None
    weak: Detections = field(default_factory=Detections.empty)
    weak_p: npt.NDArray[np.float32] = field(default_factory=lambda: np.zeros((0, BACKGROUND + 1), np.float32))


def _laps(seconds: dict[str, float] | None) -> Callable[[str], None]:
    """A stopwatch adding the time since its last lap (or its start) to ``seconds[step]`` (none
    without ``seconds``)."""
    clock = time.perf_counter()

    def lap(step: str) -> None:
        nonlocal clock
        if seconds is not None:
            now = time.perf_counter()
            seconds[step] = seconds.get(step, 0.0) + now - clock
            clock = now

    return lap


def weak_boxes(boxes: Detections, det_conf: float) -> Detections:
    """The boxes below ``det_conf`` that the second look for jokers reads: those that the
    proposals' own filters (class-agnostic NMS, a box lying inside another) leave when run over
    every box, so none of them is an index the first look reads already."""
    kept = proposals(boxes, 0.0)
    return kept[kept.confidence < det_conf]


def sure_jokers(boxes: Detections, p: npt.NDArray[np.float32], d: DetectorConfig | Thresholds) -> Detections:
    """The boxes of the second look named jokers at ``conf`` and ``joker_conf`` or more.

    >>> from vision.labels import class_id
    >>> boxes = Detections(np.zeros((3, 4), np.float32), np.full(3, 0.2, np.float32), np.zeros(3, np.int64))
    >>> p = np.full((3, 55), 0.001, np.float32)
    >>> p[0, class_id("BJ")], p[1, class_id("SJ")], p[2, class_id("5C")] = 0.9, 0.7, 0.99
    >>> sure_jokers(boxes, p, DetectorConfig(conf=0.6, joker_conf=0.8)).names
    ['BJ']
    """
    named, _ = decide(boxes, p, max(d.conf, d.joker_conf or 0.0))
    return named[np.isin(named.class_id, JOKER_CLASSES)]


def decide(
    boxes: Detections,
    p: npt.NDArray[np.float32],
    conf: float,
    joker_conf: float | None = None,
    floor: float | None = None,
) -> tuple[Detections, Detections | None]:
    """The decide step: each box named by its most probable class (background dropped); named when
    that probability is at least ``conf`` (a joker's at least ``joker_conf`` when given: a false
    joker is a false top trump); with ``floor``, the boxes named less surely but with at least
    ``floor`` are returned apart (indices the reader cannot name: :func:`unknown_cards`), else None.

    >>> from vision.labels import class_id
    >>> boxes = Detections(np.zeros((3, 4), np.float32), np.ones(3, np.float32), np.zeros(3, np.int64))
    >>> p = np.full((3, 55), 0.001, np.float32)
    >>> p[0, class_id("9S")], p[1, class_id("BJ")], p[2, class_id("3H")] = 0.9, 0.7, 0.4
    >>> named, unsure = decide(boxes, p, conf=0.6, joker_conf=0.8, floor=0.25)
    >>> named.names, unsure.names
    (['9S'], ['BJ', '3H'])
    """
    named, unsure, _ = _decide(boxes, p, conf, joker_conf, floor)
    return named, unsure


def _decide(
    boxes: Detections,
    p: npt.NDArray[np.float32],
    conf: float,
    joker_conf: float | None,
    floor: float | None,
) -> tuple[Detections, Detections | None, npt.NDArray[np.float32]]:
    """:func:`decide`, and the class probabilities of the unsure boxes (one row each, same order;
    none without ``floor``)."""
    every = named_boxes(boxes, p)
    sure = every.confidence >= conf
    if joker_conf is not None:
        sure &= ~np.isin(every.class_id, JOKER_CLASSES) | (every.confidence >= joker_conf)
    if floor is None:
        return every[sure], None, np.zeros((0, p.shape[1]), np.float32)
    apart = ~sure & (every.confidence >= floor)
    rows = p[p.argmax(1) < BACKGROUND]  # the rows of ``every`` (background boxes dropped)
    return every[sure], every[apart], np.asarray(rows[apart], np.float32)


def unsure_probabilities(
    p: npt.NDArray[np.float32], conf: float, joker_conf: float | None, floor: float
) -> npt.NDArray[np.float32]:
    """The class probabilities of the boxes :func:`decide` returns apart as unsure (same order)."""
    return _decide(
        Detections(
            np.zeros((len(p), 4), np.float32), np.ones(len(p), np.float32), np.zeros(len(p), np.int64)
        ),
        p,
        conf,
        joker_conf,
        floor,
    )[2]


def partial_name(p: npt.NDArray[np.float32], least: float) -> str:
    """What an index the classifier cannot name surely is, from its class probabilities ``p``: the
    jokers (``?J``), one rank (``K?``) or one suit (``?C``) holding at least ``least`` of the
    probability, else ``??``.

    >>> from vision.labels import class_id
    >>> p = np.zeros(55, np.float32)
    >>> p[class_id("JC")], p[class_id("QC")], p[class_id("KC")] = 0.4, 0.3, 0.25
    >>> partial_name(p, 0.9)
    '?C'
    >>> p[:] = 0; p[class_id("KC")], p[class_id("KS")] = 0.5, 0.45
    >>> partial_name(p, 0.9), partial_name(p, 0.99)
    ('K?', '??')
    >>> p[:] = 0; p[class_id("SJ")], p[class_id("BJ")] = 0.55, 0.4
    >>> partial_name(p, 0.9)
    '?J'
    """
    jokers = float(sum(p[c] for c in JOKER_CLASSES))
    if jokers >= least:
        return "?J"
    by_rank = {r: float(sum(p[class_id(r + s)] for s in SUITS)) for r in RANKS}
    rank, mass = max(by_rank.items(), key=lambda kv: kv[1])
    if mass >= least:
        return f"{rank}?"
    by_suit = {s: float(sum(p[class_id(r + s)] for r in RANKS)) for s in SUITS}
    suit, mass = max(by_suit.items(), key=lambda kv: kv[1])
    return f"?{suit}" if mass >= least else "??"


def unknown_cards(
    named: Detections,
    unsure: Detections,
    instances: InstanceConfig,
    config: UnknownCards | None,
    probabilities: npt.NDArray[np.float32] | None = None,
) -> list[CardInstance]:
    """The cards of the indices the classifier could not name: indices far from every named index of
    their best class, grouped into cards as named ones are (by their best class and the card's
    geometry), each written ``??``, or with the rank or suit the classifier is sure of when its
    indices' ``probabilities`` (one row per ``unsure`` box) agree (:func:`partial_name`)."""
    config = config or UnknownCards()
    if not len(unsure):
        return []
    both = Detections(
        np.concatenate([named.xyxy, unsure.xyxy]),
        np.concatenate([named.confidence, unsure.confidence]),
        np.concatenate([named.class_id, unsure.class_id]),
    )
    reach = config.same_card * np.array(
        [expected_pair_distance(both, len(named) + k, len(named) + k, instances) for k in range(len(unsure))]
    )
    keep = []
    for k in range(len(unsure)):
        same = named.class_id == unsure.class_id[k]
        near = (
            np.linalg.norm(named.centers[same] - unsure.centers[k], axis=1) <= reach[k] if same.any() else []
        )
        keep.append(not np.any(near))
    mask = np.array(keep, bool)
    lone = unsure[mask]
    forms = (
        ["??"] * len(lone)
        if probabilities is None or config.partial is None
        else [partial_name(row, config.partial) for row in probabilities[mask]]
    )
    out = []
    centres = lone.centers
    for card in group_corners(lone, instances):
        x1, y1, x2, y2 = card.box
        members = {
            forms[k]
            for k in range(len(lone))
            if lone.class_id[k] == card.class_id and x1 <= centres[k, 0] <= x2 and y1 <= centres[k, 1] <= y2
        }
        form = members.pop() if len(members) == 1 else "??"
        out.append(CardInstance(parse_any(form), -1, card.score, card.box, card.corners))
    return out
