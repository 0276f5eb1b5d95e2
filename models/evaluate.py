"""``tractorcam eval``: the detector's figures on held-out synthetic scenes and on real photos.

Synthetic: scenes drawn only with held-out designs (:data:`models.synth.designs.HELDOUT`), either a
rendered dataset split (``annotations/<split>/*.json`` beside ``images/<split>/``) or scenes rendered
on the fly. The truth of a scene is the multiset of cards with at least one corner index visible.

Real: the rank-labelled photos in ``../shared/real/edje-train`` (evaluation only — never trained on,
nothing derived from them is stored).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from models.metrics import (
    REAL_RANKS,
    RealBox,
    RealPrediction,
    RealReport,
    SceneReport,
    card_rank,
    real_photo_tally,
)
from vision.instances import count_cards
from vision.labels import class_name
from vision.reader import CardReader

REAL_DIR = Path(__file__).resolve().parents[2] / "shared" / "real" / "edje-train" / "images" / "train"
#: A corner index counts as visible in the truth when at least this fraction of it is unoccluded.
MIN_VISIBLE = 0.5


class EvaluationDataError(ValueError):
    """An evaluation folder is missing or holds no labelled images."""


@dataclass(frozen=True)
class RealPhoto:
    """A real photo and its rank-only labels."""

    path: Path
    boxes: tuple[RealBox, ...]


@dataclass(frozen=True)
class SyntheticScene:
    """A rendered image and its truth multiset of card names."""

    name: str
    image: npt.NDArray[np.uint8]
    truth: Counter[str]


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
        preds = [RealPrediction(card_rank(c.card), c.score, c.box) for c in cards]
        report.add(real_photo_tally(preds, photo.boxes))
    return report


def annotation_truth(annotation: dict[str, object], min_visible: float = MIN_VISIBLE) -> Counter[str]:
    """Cards of a renderer annotation with at least one corner index visible enough.

    Reads ``cards[*].card`` (or ``class_id``) and ``cards[*].corners[*].visible`` (fraction).
    """
    truth: Counter[str] = Counter()
    for card in annotation.get("cards", []):  # type: ignore[union-attr]
        name = card.get("card") or class_name(int(card["class_id"]))
        corners = card.get("corners", [])
        if any(float(c.get("visible", 0.0)) >= min_visible for c in corners):
            truth[name] += 1
    return truth


def load_synthetic_split(
    dataset: Path, split: str = "heldout", limit: int | None = None
) -> Iterator[SyntheticScene]:
    """Scenes of a rendered dataset split with their truth from ``annotations/<split>/*.json``."""
    from vision.capture import read_image

    ann_dir = Path(dataset) / "annotations" / split
    img_dir = Path(dataset) / "images" / split
    files = sorted(ann_dir.glob("*.json"))
    if not files:
        raise EvaluationDataError(f"no annotations in {ann_dir}")
    for ann in files[:limit]:
        images = [p for p in img_dir.glob(ann.stem + ".*")]
        if not images:
            continue
        yield SyntheticScene(ann.stem, read_image(images[0]), annotation_truth(json.loads(ann.read_text())))


def evaluate_synthetic(reader: CardReader, scenes: Iterable[SyntheticScene]) -> SceneReport:
    """Per-card and per-play figures of the reader on synthetic scenes."""
    report = SceneReport()
    for scene in scenes:
        report.add(count_cards(reader.read(scene.image).cards), scene.truth)
    return report


def format_scene_report(report: SceneReport, per_class: bool = False) -> str:
    """Human-readable synthetic figures."""
    c, j = report.cards, report.jokers
    lines = [
        f"synthetic held-out: {report.plays} plays, exact match {report.exact_match:.2%}",
        f"  cards:  precision {c.precision:.2%} recall {c.recall:.2%} F1 {c.f1:.2%} "
        f"(tp {c.tp} fp {c.fp} fn {c.fn})",
        f"  jokers: precision {j.precision:.2%} recall {j.recall:.2%} F1 {j.f1:.2%} "
        f"(tp {j.tp} fp {j.fp} fn {j.fn})",
    ]
    if per_class:
        for name in sorted(report.per_class, key=lambda n: (len(n), n)):
            t = report.per_class[name]
            lines.append(
                f"    {name:>3}: P {t.precision:.2%} R {t.recall:.2%} (tp {t.tp} fp {t.fp} fn {t.fn})"
            )
    return "\n".join(lines)


def format_real_report(report: RealReport) -> str:
    """Human-readable real-photo figures."""
    t = report.total
    return "\n".join(
        [
            f"real photos: {report.photos} photos, {t.tp + t.fn} labelled cards",
            f"  rank precision {t.precision:.2%} recall {t.recall:.2%} "
            f"(micro; tp {t.tp} fp {t.fp} fn {t.fn})",
            f"  per photo: mean precision {report.mean_photo_precision:.2%} mean recall "
            f"{report.mean_photo_recall:.2%}, all correct {report.perfect_photos}/{report.photos}",
        ]
    )
