"""``tractorcam eval``: the detector's figures on held-out synthetic scenes and on real photos.

Synthetic: scenes drawn only with held-out designs (:data:`models.synth.designs.HELDOUT`), either a
rendered dataset split (``annotations/<split>/*.json`` beside ``images/<split>/``) or scenes rendered
on the fly. The truth of a scene is the multiset of face-up cards with at least one corner index
visible; a play is the cards of role ``play`` of one seat, and a predicted card belongs to the play
on whose card outlines its box centre lies.

Real: the rank-labelled photos in ``../shared/real/edje-train`` (rank precision and recall, a
prediction matched to a labelled box), and the card-labelled phone photos in
``../shared/real/cardcounterml-phone`` (the multiset of cards per photo, no boxes: card and joker
precision and recall per view). Evaluation only — never trained on, nothing derived from them is
stored.
"""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from engine.cards import CARD_NAMES
from models.metrics import (
    JOKERS,
    REAL_RANKS,
    RealBox,
    RealPrediction,
    RealReport,
    SceneReport,
    Tally,
    card_rank,
    multiset_tally,
    real_photo_tally,
)
from vision.instances import CardInstance, count_cards
from vision.labels import class_name
from vision.reader import CardReader, Reading, Thresholds

REAL_DIR = Path(__file__).resolve().parents[2] / "shared" / "real" / "edje-train" / "images" / "train"
#: The card-labelled phone photos: ``labels.jsonl`` (one photo a line) and ``images/``.
REAL_CARDS_DIR = Path(__file__).resolve().parents[2] / "shared" / "real" / "cardcounterml-phone"
#: The labels file of :data:`REAL_CARDS_DIR` (and of any folder given to :func:`load_real_cards`).
REAL_CARDS_LABELS = "labels.jsonl"
#: A corner index counts as visible in the truth when at least this fraction of it is unoccluded
#: (the same threshold as the renderer's YOLO labels, models.synth.dataset.MIN_VISIBLE).
MIN_VISIBLE = 0.6
#: Upper edges (px) of the card-height bins of ``eval --per-size``: a scene's bin is the median height
#: of its face-up cards. A product camera over a 0.9-1 m table at full resolution shows cards about
#: 220-300 px high; whole-table photos of 640 px show them 60-90 px high.
CARD_PX_BINS = (80, 120, 160, 220, 300)


class EvaluationDataError(ValueError):
    """An evaluation folder is missing or holds no labelled images."""


@dataclass(frozen=True)
class RealPhoto:
    """A real photo and its rank-only labels."""

    path: Path
    boxes: tuple[RealBox, ...]


def load_real_photos(folder: Path = REAL_DIR) -> list[RealPhoto]:
    """Photos with a Pascal VOC ``.xml`` beside them (boxes of classes nine…ace)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise EvaluationDataError(f"real photo folder not found: {folder}")
    photos = []
    for xml in sorted(folder.glob("*.xml")):
        root = ET.parse(xml).getroot()
        image = folder / (root.findtext("filename") or "")
        if not image.is_file():
            candidates = [
                p for p in folder.glob(xml.stem + ".*") if p.suffix.lower() in (".jpg", ".jpeg", ".png")
            ]
            if not candidates:
                continue
            image = candidates[0]
        boxes = []
        for obj in root.iter("object"):
            name = (obj.findtext("name") or "").strip().lower()
            bb = obj.find("bndbox")
            if name not in REAL_RANKS or bb is None:
                continue
            box = tuple(float(bb.findtext(k) or 0) for k in ("xmin", "ymin", "xmax", "ymax"))
            boxes.append(RealBox(REAL_RANKS[name], box))  # type: ignore[arg-type]
        photos.append(RealPhoto(image, tuple(boxes)))
    if not photos:
        raise EvaluationDataError(f"no labelled photos in {folder}")
    return photos


def evaluate_real(reader: CardReader, photos: Iterable[RealPhoto]) -> RealReport:
    """Rank precision/recall of the reader on real photos."""
    from vision.capture import read_image

    report = RealReport()
    for photo in photos:
        cards = reader.read(read_image(photo.path)).cards
        preds = [RealPrediction(card_rank(str(c.card)), c.score, c.box) for c in cards]
        report.add(real_photo_tally(preds, photo.boxes))
    return report


@dataclass(frozen=True)
class CardPhoto:
    """A real photo and the multiset of cards visible on it (no boxes), with its view (deck set)."""

    path: Path
    cards: tuple[str, ...]
    view: str = ""


def load_real_cards(folder: Path = REAL_CARDS_DIR, labels: str = REAL_CARDS_LABELS) -> list[CardPhoto]:
    """The photos of ``folder/labels``: one JSON object a line, ``{"image": "images/x.jpg", "cards":
    ["10H", "AS", "SJ"], "view": "phone"}`` (``view`` optional; blank lines skipped). The card names
    are the project's (:data:`engine.cards.CARD_NAMES`); the image path is relative to ``folder``.

    Raises :class:`EvaluationDataError` naming the file and line on a malformed line, an unknown card
    name or a missing image, and when the file is missing or lists no photo.
    """
    folder = Path(folder)
    path = folder / labels
    if not path.is_file():
        raise EvaluationDataError(f"labels file not found: {path}")
    known = frozenset(CARD_NAMES)
    photos = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise EvaluationDataError(f"{where}: not a JSON line ({exc.msg})") from None
        if not isinstance(entry, dict):
            raise EvaluationDataError(f"{where}: not a JSON object")
        image, cards, view = entry.get("image"), entry.get("cards"), entry.get("view", "")
        if not isinstance(image, str) or not image:
            raise EvaluationDataError(f'{where}: no "image" path')
        if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
            raise EvaluationDataError(f'{where}: "cards" is not a list of card names')
        if not isinstance(view, str):
            raise EvaluationDataError(f'{where}: "view" is not a string')
        unknown = sorted({c for c in cards if c not in known})
        if unknown:
            raise EvaluationDataError(f"{where}: unknown card name(s) {', '.join(unknown)}")
        if not (folder / image).is_file():
            raise EvaluationDataError(f"{where}: image not found: {folder / image}")
        photos.append(CardPhoto(folder / image, tuple(cards), view))
    if not photos:
        raise EvaluationDataError(f"no labelled photos in {path}")
    return photos


@dataclass
class CardPhotoReport:
    """Card-labelled real photos: per-card and joker tallies (multisets per photo, summed), photos whose
    reading equals the labels, seconds spent reading, and the same figures per view (one level)."""

    cards: Tally = field(default_factory=Tally)
    jokers: Tally = field(default_factory=Tally)
    photos: int = 0
    perfect: int = 0
    seconds: float = 0.0
    by_view: dict[str, CardPhotoReport] = field(default_factory=dict)

    def add(self, predicted: Counter[str], truth: Counter[str], view: str = "", seconds: float = 0.0) -> None:
        """Add one photo (and to its view's report when ``view`` is given). A name absent from the
        labels, e.g. an unknown ``??``, is a false positive; a joker counts only under its own name.

        >>> r = CardPhotoReport()
        >>> r.add(Counter({"AS": 2, "??": 1, "BJ": 1}), Counter({"AS": 1, "SJ": 1, "3H": 1}), "phone")
        >>> r.cards, r.jokers
        (Tally(tp=1, fp=3, fn=2), Tally(tp=0, fp=1, fn=1))
        >>> sorted(r.by_view), r.by_view["phone"].cards == r.cards
        (['phone'], True)
        """
        targets = [self] + ([self.by_view.setdefault(view, CardPhotoReport())] if view else [])
        for target in targets:
            target.photos += 1
            target.perfect += int(+predicted == +truth)
            target.seconds += seconds
            target.cards.add(multiset_tally(predicted, truth))
            target.jokers.add(multiset_tally(predicted, truth, JOKERS))


def evaluate_real_cards(
    reader: CardReader,
    photos: Iterable[CardPhoto],
    on_photo: Callable[[CardPhoto, npt.NDArray[np.uint8], Reading], None] | None = None,
) -> CardPhotoReport:
    """Card and joker precision/recall of the reader on card-labelled photos: per photo the multiset
    of the reader's card names (``reader.read(image).cards``) against the labels; ``seconds`` is the
    time in ``reader.read`` alone. ``on_photo`` (diagnostics) is called after each photo with the
    photo, its image and the reading."""
    from vision.capture import read_image

    report = CardPhotoReport()
    for photo in photos:
        image = read_image(photo.path)
        start = time.perf_counter()
        reading = reader.read(image)
        seconds = time.perf_counter() - start
        report.add(count_cards(reading.cards), Counter(photo.cards), photo.view, seconds)
        if on_photo is not None:
            on_photo(photo, image, reading)
    return report


@dataclass(frozen=True)
class PlayTruth:
    """One play on the table (cards of role ``play`` of one seat): outlines and visible cards."""

    key: str
    quads: tuple[tuple[tuple[float, float], ...], ...]
    truth: Counter[str]


@dataclass(frozen=True)
class SyntheticScene:
    """A rendered image, its truth multiset of visible cards, and its plays."""

    name: str
    image: npt.NDArray[np.uint8]
    truth: Counter[str]
    plays: tuple[PlayTruth, ...] = ()
    #: the scene's card design(s), ``+``-joined and sorted (``"paris"``, ``"paris+plastic"``); "" unknown
    design: str = ""
    #: median height (px) of the scene's face-up cards (:func:`scene_card_px`); None: none or unknown
    card_px: float | None = None


def scene_design(annotation: dict[str, Any]) -> str:
    """A scene's design key: its annotation's ``designs`` (else its cards' ``design``), sorted, ``+``-joined.

    >>> scene_design({"designs": ["plastic", "paris"]})
    'paris+plastic'
    >>> scene_design({"cards": [{"design": "tigullio"}, {"design": "tigullio"}]})
    'tigullio'
    >>> scene_design({})
    ''
    """
    names = annotation.get("designs") or {c.get("design") for c in annotation.get("cards", [])}
    return "+".join(sorted(str(n) for n in names if n))


def scene_card_px(annotation: dict[str, Any]) -> float | None:
    """Median height (px) of a renderer annotation's face-up cards: each card's two long outline sides
    (``quad`` TL, TR, BR, BL) averaged, whichever way the card lies; None when no card is face up.
    Below, a 60 × 90 card and a 100 × 140 one turned sideways: heights 90 and 140, median 115.

    >>> scene_card_px({"cards": [{"quad": [[0, 0], [60, 0], [60, 90], [0, 90]]},
    ...                          {"quad": [[0, 0], [0, 100], [-140, 100], [-140, 0]], "face_up": True},
    ...                          {"quad": [[0, 0], [9, 0], [9, 9], [0, 9]], "face_up": False}]})
    115.0
    >>> scene_card_px({"cards": []}) is None
    True
    """
    heights = []
    for card in annotation.get("cards", []):
        if not card.get("face_up", True):
            continue
        q = np.asarray(card["quad"], float)
        sides = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)  # TL-TR, TR-BR, BR-BL, BL-TL
        heights.append(max(sides[0] + sides[2], sides[1] + sides[3]) / 2)
    return float(np.median(heights)) if heights else None


def size_bin(card_px: float) -> str:
    """The ``eval --per-size`` bin of a median card height (:data:`CARD_PX_BINS`).

    >>> [size_bin(px) for px in (60, 80, 150, 250, 400)]
    ['under 80 px', '80-120 px', '120-160 px', '220-300 px', '300 px and more']
    """
    low = 0
    for high in CARD_PX_BINS:
        if card_px < high:
            return f"under {high} px" if low == 0 else f"{low}-{high} px"
        low = high
    return f"{low} px and more"


def _card_seen(card: dict[str, Any], min_visible: float) -> bool:
    if not card.get("face_up", True):
        return False
    return any(float(c.get("visible", 0.0)) >= min_visible for c in card.get("corners", []))


def _card_name(card: dict[str, Any]) -> str:
    return str(card.get("card") or class_name(int(card["class_id"])))


def annotation_truth(annotation: dict[str, Any], min_visible: float = MIN_VISIBLE) -> Counter[str]:
    """Face-up cards of a renderer annotation with at least one corner index visible enough.

    Reads ``cards[*].card`` (or ``class_id``), ``face_up`` and ``corners[*].visible`` (fraction).
    """
    return Counter(_card_name(c) for c in annotation.get("cards", []) if _card_seen(c, min_visible))


def annotation_plays(annotation: dict[str, Any], min_visible: float = MIN_VISIBLE) -> tuple[PlayTruth, ...]:
    """The plays of a scene: cards with role ``play`` grouped by seat (hidden cards in no truth)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for card in annotation.get("cards", []):
        if card.get("role", "play") == "play" and card.get("face_up", True):
            groups.setdefault(str(card.get("seat")), []).append(card)
    plays = []
    for key, cards in sorted(groups.items()):
        quads = tuple(tuple((float(x), float(y)) for x, y in c["quad"]) for c in cards)
        truth = Counter(_card_name(c) for c in cards if _card_seen(c, min_visible))
        plays.append(PlayTruth(key, quads, truth))
    return tuple(plays)


def scene_from_annotation(
    name: str, image: npt.NDArray[np.uint8], annotation: dict[str, Any]
) -> SyntheticScene:
    """A scene with everything its renderer annotation gives: truth, plays, design and card size."""
    return SyntheticScene(
        name,
        image,
        annotation_truth(annotation),
        annotation_plays(annotation),
        scene_design(annotation),
        scene_card_px(annotation),
    )


def load_synthetic_split(
    dataset: Path, split: str = "heldout", limit: int | None = None, designs: Iterable[str] = ()
) -> Iterator[SyntheticScene]:
    """Scenes of a rendered dataset split with their truth from ``annotations/<split>/*.json``.

    ``designs``: keep only the scenes that show at least one of these designs (all when empty);
    ``limit`` counts the scenes kept. Raises :class:`EvaluationDataError` when the split has no
    annotations, or when ``designs`` names a design that none of its scenes shows.
    """
    from vision.capture import read_image

    ann_dir = Path(dataset) / "annotations" / split
    img_dir = Path(dataset) / "images" / split
    files = sorted(ann_dir.glob("*.json"))
    if not files:
        raise EvaluationDataError(f"no annotations in {ann_dir}")
    wanted = set(designs)
    kept = 0
    for ann_path in files:
        if limit is not None and kept >= limit:
            return
        ann = json.loads(ann_path.read_text())
        design = scene_design(ann)
        if wanted and not wanted & set(design.split("+")):
            continue
        images = list(img_dir.glob(ann_path.stem + ".*"))
        if not images:
            continue
        kept += 1
        yield scene_from_annotation(ann_path.stem, read_image(images[0]), ann)
    if wanted and not kept:
        raise EvaluationDataError(f"no scene in {ann_dir} shows {', '.join(sorted(wanted))}")


def render_heldout_scenes(n: int, seed: int = 10_000, **options: Any) -> Iterator[SyntheticScene]:
    """``n`` whole-table scenes (1280×960 by default) rendered with held-out designs only."""
    from models.synth.designs import HELDOUT
    from models.synth.scene import available_designs, render_scene

    designs = available_designs(HELDOUT)
    for i in range(n):
        scene = render_scene(seed + i, designs=designs, **options)
        ann = {"cards": [c.to_dict() for c in scene.cards], "designs": scene.meta.get("designs", [])}
        yield scene_from_annotation(f"scene{seed + i}", scene.image, ann)


def assign_to_plays(cards: list[CardInstance], plays: tuple[PlayTruth, ...]) -> list[Counter[str]]:
    """Predicted cards whose box centre lies on one of a play's card outlines, per play."""
    import cv2

    out: list[Counter[str]] = [Counter() for _ in plays]
    polys = [[np.array(q, np.float32) for q in play.quads] for play in plays]
    for card in cards:
        centre = ((card.box[0] + card.box[2]) / 2, (card.box[1] + card.box[3]) / 2)
        for k, quads in enumerate(polys):
            if any(cv2.pointPolygonTest(q, centre, False) >= 0 for q in quads):
                out[k][str(card.card)] += 1
                break
    return out


def evaluate_synthetic(reader: CardReader, scenes: Iterable[SyntheticScene]) -> SceneReport:
    """Per-card figures over whole images and per-play exact match on synthetic scenes.

    Scenes without plays count as one play each (the whole image); plays with no visible card are
    not counted.
    """
    report = SceneReport()
    for scene in scenes:
        _add_scene(report, reader.read(scene.image).cards, scene)
    return report


def _add_scene(report: SceneReport, cards: list[CardInstance], scene: SyntheticScene) -> None:
    """Add one scene to ``report`` and to its design's and card-size bin's reports (cards counted and
    assigned once)."""
    predicted = count_cards(cards)
    if scene.plays:
        plays = [
            (pred, play.truth)
            for pred, play in zip(assign_to_plays(cards, scene.plays), scene.plays, strict=True)
            if sum(play.truth.values())
        ]
    else:
        plays = [(predicted, scene.truth)] if sum(scene.truth.values()) else []
    targets = [report]
    if scene.design:
        targets.append(report.by_design.setdefault(scene.design, SceneReport()))
    if scene.card_px is not None:
        targets.append(report.by_size.setdefault(size_bin(scene.card_px), SceneReport()))
    for target in targets:
        target.add_cards(predicted, scene.truth)
        for pred, truth in plays:
            target.add_play(pred, truth)


def sweep_confidence(
    reader: CardReader, scenes: Iterable[SyntheticScene], confs: Iterable[float]
) -> dict[float, SceneReport]:
    """Reports at several ``conf`` thresholds (the reader's other thresholds kept), each the reading
    of :meth:`CardReader.decide` over one :meth:`CardReader.stages` per image (the reader built with
    the lowest conf)."""
    confs = sorted(confs)
    reports = {c: SceneReport() for c in confs}
    own = reader.thresholds
    for scene in scenes:
        stages = reader.stages(scene.image)
        for c in confs:
            _add_scene(reports[c], reader.decide(stages, replace(own, conf=c)).cards, scene)
    return reports


def sweep_thresholds(
    reader: CardReader,
    scenes: Iterable[SyntheticScene],
    det_confs: Iterable[float],
    confs: Iterable[float],
    joker_confs: Iterable[float] = (),
) -> dict[tuple[float, float, float | None], SceneReport]:
    """Reports for every (localiser ``det_conf``, classifier ``conf``, ``joker_conf``) of a two-stage
    reader; ``joker_conf`` None (always tried) holds jokers to ``conf`` like every card, and each of
    ``joker_confs`` above ``conf`` is tried as the probability a joker needs.

    The shipped reading is scored: the expensive stages (:meth:`CardReader.stages`: look, tiled
    localiser, heads) run once per image, the reader built with the lowest ``det_conf`` (its other
    thresholds do not matter), and each setting's cards are :meth:`CardReader.decide`'s at that
    setting, the very steps :meth:`CardReader.read` takes after the stages (pair naming, the
    thresholds, the second look for jokers, grouping, unknown cards, faces).
    """
    if reader.classifier is None:
        raise ValueError("sweep_thresholds needs a reader with the index classifier")
    det_confs, confs = sorted(det_confs), sorted(confs)
    settings = [
        (d, c, j)
        for d in det_confs
        for c in confs
        for j in (None, *sorted(joker_confs))
        if j is None or j > c
    ]
    least = reader.config.detector.det_conf
    if det_confs and det_confs[0] < least:
        raise ValueError(f"det_conf {det_confs[0]} is below the reader's det_conf {least}")
    reports = {key: SceneReport() for key in settings}
    for scene in scenes:
        stages = reader.stages(scene.image)
        for setting in settings:
            _add_scene(reports[setting], reader.decide(stages, Thresholds(*setting)).cards, scene)
    return reports


def _ratio(num: int, den: int) -> str:
    """A percentage, or "–" when undefined (nothing predicted / nothing to find), so an empty class
    never prints as a perfect 100 %."""
    return f"{num / den:.2%}" if den else "–"


def _pr(t: Tally, p: str = "precision", r: str = "recall") -> str:
    return f"{p} {_ratio(t.tp, t.tp + t.fp)} {r} {_ratio(t.tp, t.tp + t.fn)}"


def format_scene_report(
    report: SceneReport,
    per_class: bool = False,
    title: str = "synthetic held-out",
    per_design: bool = False,
    per_size: bool = False,
) -> str:
    """Human-readable synthetic figures; ``per_design`` adds one line per scene design (worst F1 first),
    ``per_size`` one per card-size bin (smallest cards first)."""
    c, j = report.cards, report.jokers
    lines = [
        f"{title}: {report.images} images, {report.plays} plays, "
        f"per-play exact match {report.exact_match:.2%}",
        f"  cards:  {_pr(c)} F1 {c.f1:.2%} (tp {c.tp} fp {c.fp} fn {c.fn})",
        f"  jokers: {_pr(j)} F1 {j.f1:.2%} (tp {j.tp} fp {j.fp} fn {j.fn})",
    ]
    if per_class:
        for name in sorted(report.per_class, key=lambda n: (len(n), n)):
            t = report.per_class[name]
            lines.append(f"    {name:>3}: {_pr(t, 'P', 'R')} (tp {t.tp} fp {t.fp} fn {t.fn})")
    if per_design:
        lines.append("  per design (scenes with two designs under both names joined by +):")
        for name, d in sorted(report.by_design.items(), key=lambda kv: (kv[1].cards.f1, kv[0])):
            lines.append(_group_row(name, d))
    if per_size:
        lines.append("  per card size (median height of a scene's face-up cards):")
        order = {size_bin(px): k for k, px in enumerate((0, *CARD_PX_BINS))}
        for name, d in sorted(report.by_size.items(), key=lambda kv: order[kv[0]]):
            lines.append(_group_row(name, d))
    return "\n".join(lines)


def _group_row(name: str, d: SceneReport) -> str:
    """One ``--per-design`` / ``--per-size`` line."""
    return (
        f"    {name}: {d.images} images, {d.plays} plays, exact {d.exact_match:.2%}, "
        f"cards {_pr(d.cards, 'P', 'R')} F1 {d.cards.f1:.2%}, jokers {d.jokers.tp} of "
        f"{d.jokers.tp + d.jokers.fn} ({d.jokers.fp} false)"
    )


def format_real_report(report: RealReport) -> str:
    """Human-readable real-photo figures."""
    t = report.total
    return "\n".join(
        [
            f"real photos: {report.photos} photos, {t.tp + t.fn} labelled cards",
            f"  rank {_pr(t)} (micro; tp {t.tp} fp {t.fp} fn {t.fn})",
            f"  per photo: mean precision {report.mean_photo_precision:.2%} mean recall "
            f"{report.mean_photo_recall:.2%}, all correct {report.perfect_photos}/{report.photos}",
        ]
    )


def _f1(t: Tally) -> str:
    """F1 = 2·tp / (2·tp + fp + fn) as a percentage, or "–" when there was nothing to find or predict."""
    den = 2 * t.tp + t.fp + t.fn
    return f"{2 * t.tp / den:.2%}" if den else "–"


def _card_row(name: str, r: CardPhotoReport) -> str:
    c, j = r.cards, r.jokers
    return (
        f"  {name}: {r.photos} photos, {c.tp + c.fn} cards: {_pr(c, 'P', 'R')} F1 {_f1(c)} "
        f"(tp {c.tp} fp {c.fp} fn {c.fn}); jokers {_pr(j, 'P', 'R')} (tp {j.tp} fp {j.fp} fn {j.fn}); "
        f"all correct {r.perfect}/{r.photos}"
    )


def format_real_cards_report(report: CardPhotoReport, title: str = "real card-labelled photos") -> str:
    """Human-readable figures of :func:`evaluate_real_cards`: pooled, then one line per view.

    >>> r = CardPhotoReport()
    >>> r.add(Counter({"AS": 1}), Counter({"AS": 1, "SJ": 1}), "phone", seconds=1.5)
    >>> r.add(Counter({"??": 1}), Counter(), "phone2022", seconds=0.5)
    >>> print(format_real_cards_report(r))  # doctest: +NORMALIZE_WHITESPACE
    real card-labelled photos: 2 photos, 2 labelled cards, 1.00 s per photo
      all: 2 photos, 2 cards: P 50.00% R 50.00% F1 50.00% (tp 1 fp 1 fn 1); jokers P – R 0.00% (tp 0 fp 0 fn 1); all correct 0/2
      phone: 1 photos, 2 cards: P 100.00% R 50.00% F1 66.67% (tp 1 fp 0 fn 1); jokers P – R 0.00% (tp 0 fp 0 fn 1); all correct 0/1
      phone2022: 1 photos, 0 cards: P 0.00% R – F1 0.00% (tp 0 fp 1 fn 0); jokers P – R – (tp 0 fp 0 fn 0); all correct 0/1
    """
    c = report.cards
    per_photo = f", {report.seconds / report.photos:.2f} s per photo" if report.photos else ""
    lines = [f"{title}: {report.photos} photos, {c.tp + c.fn} labelled cards{per_photo}"]
    lines.append(_card_row("all", report))
    lines += [_card_row(view, r) for view, r in sorted(report.by_view.items())]
    return "\n".join(lines)
