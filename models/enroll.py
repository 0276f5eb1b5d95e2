"""Learning an enrolled deck (``tractorcam enroll learn DIR``): the shipped index classifier
fine-tuned on crops cut from the event's own faces (:mod:`calibration.enroll` cut them from the
table camera's photos), written as ``DIR/classifier.onnx`` for ``run --model DIR`` and
``detect --model DIR``.

The crops come from :class:`models.gpu.FaceBank` on the CPU, the same cutter the GPU run uses: each
face turned to any angle, its corner index jittered like the localiser's boxes, over a random
table, sometimes half covered by a neighbour as in a fan, and a share of background (the face's
middle, bare table). The network starts from the shipped weights with a low learning rate for a
few minutes, so what it knows of tables and clutter stays while it learns this deck's indices.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
import numpy.typing as npt

from engine.cards import CARD_NAMES
from models.loop import Plan

#: Crops per step, the peak learning rate and the share of bare-table crops.
BATCH = 128
LR = 4e-4
TABLE_SHARE = 0.08


class LearnError(ValueError):
    """An enrolled deck folder that cannot be learned (one line)."""


def enrolled_faces(folder: Path) -> dict[str, npt.NDArray[np.uint8]]:
    """The 54 faces of an enrolled deck (``DIR/faces/CARD.png``), BGRA, all one size."""
    faces = {}
    for card in CARD_NAMES:
        image = cv2.imread(str(folder / "faces" / f"{card}.png"))
        if image is None:
            raise LearnError(f"{folder}: no face for {card} (tractorcam enroll --images ... --out {folder})")
        faces[card] = image
    h = int(np.median([f.shape[0] for f in faces.values()]))
    w = int(np.median([f.shape[1] for f in faces.values()]))
    out = {}
    for card, face in faces.items():
        face = cv2.resize(face, (w, h), interpolation=cv2.INTER_AREA)
        out[card] = np.dstack([face, np.full((h, w), 255, np.uint8)])
    return out


def localised_index_box(faces: dict[str, npt.NDArray[np.uint8]]) -> tuple[float, float, float, float] | None:
    """The deck's top-left index box (face px) as the shipped localiser sees it on the enrolled
    faces: the median of the boxes it finds in a face's top-left or (turned) bottom-right quarter
    over the 52 suit cards; None when it finds fewer than 13. The classifier reads crops round the
    localiser's boxes, so its training crops are cut round the same boxes."""
    from vision.reader import CardReader, default_reader_config

    reader = CardReader(default_reader_config("onnx"))
    pad = 60
    boxes = []
    for card in CARD_NAMES[:52]:
        face = faces[card][..., :3]
        h, w = face.shape[:2]
        framed = cast(
            "npt.NDArray[np.uint8]",
            cv2.copyMakeBorder(face, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=(60, 90, 60)),
        )
        for x1, y1, x2, y2 in reader.read(framed).corners.xyxy - pad:
            cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
            if cx < w / 2 and cy < h / 2:
                boxes.append((x1, y1, x2, y2))
            elif cx > w / 2 and cy > h / 2:  # the bottom-right index, turned to the top-left
                boxes.append((w - x2, h - y2, w - x1, h - y1))
    if len(boxes) < 13:
        return None
    x1, y1, x2, y2 = np.median(np.array(boxes, np.float64), axis=0)
    h, w = faces["2S"].shape[:2]
    return (max(0.0, float(x1)), max(0.0, float(y1)), min(w / 2, float(x2)), min(h / 2, float(y2)))


def face_set(folder: Path) -> Any:
    """The enrolled faces as the renderer's :class:`~models.synth.faces.FaceSet`, its corner index
    box found by the shipped localiser (:func:`localised_index_box`), else by the ink in the
    faces' corners (:func:`models.synth.faces.design_index_box`)."""
    from models.synth.faces import FaceSet, design_index_box, joker_index_boxes

    faces = enrolled_faces(folder)
    box = localised_index_box(faces)
    if box is None:
        try:
            box = design_index_box(faces)
        except RuntimeError as exc:
            raise LearnError(f"{folder}: the corner indices are not found on the faces ({exc})") from None
    back = np.zeros_like(faces["2S"])
    return FaceSet("enrolled", faces, back, box, card_boxes=joker_index_boxes(faces))


class _FineTune(Plan):
    """:func:`fine_tune`'s plan: ``steps`` steps, or (``steps`` 0) until ``minutes`` have passed;
    the batches jittered by :func:`models.gpu.trainers.augment_torch`, the learning rate from
    :data:`LR` down to a tenth, a log line a minute."""

    def __init__(
        self,
        batches: Callable[[Any], tuple[Any, Any]],
        gen: Any,
        minutes: float,
        steps: int,
        log: Callable[[str], None],
    ) -> None:
        self.batches, self.gen, self.steps, self.log = batches, gen, steps, log
        self.start = self.last = time.monotonic()
        self.end = self.start + 60 * minutes
        self.seen = 0
        self.frac = 0.0

    def begin_round(self, trainees: Sequence[Any]) -> bool:
        done = trainees[0].steps
        if not (done < self.steps if self.steps else time.monotonic() < self.end):
            return False
        now = time.monotonic()
        self.frac = done / self.steps if self.steps else (now - self.start) / (self.end - self.start)
        return True

    def lr(self, trainee: Any) -> float:
        return LR * (0.1 + 0.9 * (1 - self.frac))

    def batch(self, trainee: Any) -> tuple[Any, Any]:
        from models.gpu.trainers import augment_torch

        x, y = self.batches(self.gen)
        self.seen += len(y)
        return augment_torch(x, self.gen), y

    def stepped(self, trainee: Any, loss: Any) -> None:
        if time.monotonic() - self.last > 60:
            self.last = time.monotonic()
            self.log(
                f"  {trainee.steps} steps, {self.seen} crops, loss {float(loss.detach()):.3f}, "
                f"{(self.last - self.start) / 60:.1f} min"
            )


def fine_tune(
    folder: Path,
    batch: Callable[[Any], tuple[Any, Any]],
    minutes: float,
    *,
    init: Path | None = None,
    seed: int = 0,
    steps: int = 0,
    log: Callable[[str], None] = print,
) -> int:
    """Fine-tune the index classifier (from ``init``, default the shipped weights) for ``minutes``
    (or, when ``steps`` is given, for that many steps whatever the time) on the batches
    ``batch(generator)`` gives (uint8 crops, classes), each jittered in colour and sharpness
    (:func:`models.gpu.trainers.augment_torch`), the learning rate falling from :data:`LR` to a tenth; writes
    ``folder/classifier.pt`` and ``folder/classifier.onnx`` and returns the steps."""
    import torch

    from models.classifier import build_net, export_onnx
    from models.loop import Single, crop_optimiser, train
    from vision.crops import CROP_PAD, CROP_SIZE
    from vision.settings import CHECKPOINTS_DIR

    torch.manual_seed(seed)
    net = build_net(width=2.0)
    net.load_state_dict(torch.load(init or CHECKPOINTS_DIR / "classifier.pt", map_location="cpu"))
    one = Single(net, crop_optimiser(net, LR))
    train([one], _FineTune(batch, torch.Generator().manual_seed(seed), minutes, steps, log))
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(net.state_dict(), folder / "classifier.pt")
    export_onnx(net, CROP_SIZE, folder / "classifier.onnx", CROP_PAD)
    return one.steps


def learn(
    folder: Path,
    minutes: float = 10.0,
    *,
    init: Path | None = None,
    seed: int = 0,
    threads: int = 0,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fine-tune the index classifier on the enrolled deck in ``folder`` for ``minutes`` and write
    ``folder/classifier.onnx`` (and its ``.pt``); returns what was done."""
    import torch

    from models.gpu import FaceBank, faceset_arrays
    from vision.classifier import BACKGROUND
    from vision.crops import CROP_SIZE

    if threads:
        torch.set_num_threads(threads)
    bank = FaceBank(*faceset_arrays(face_set(folder)), "cpu")

    def batch(gen: Any) -> tuple[Any, Any]:
        x, y = bank.crops(BATCH, gen, CROP_SIZE)
        n_table = int(BATCH * TABLE_SHARE)
        if n_table:  # bare table: a colour with soft shading, no card
            shade = 1 + 0.25 * torch.nn.functional.interpolate(
                torch.rand(n_table, 1, 3, 3, generator=gen) * 2 - 1,
                size=(CROP_SIZE, CROP_SIZE),
                mode="bilinear",
            )
            table = (torch.rand(n_table, 3, 1, 1, generator=gen) * 0.75 + 0.05) * shade
            x[:n_table] = (table.clamp(0, 1) * 255).to(torch.uint8)
            y[:n_table] = BACKGROUND
        return x, y

    start = time.monotonic()
    steps = fine_tune(folder, batch, minutes, init=init, seed=seed, log=log)
    record = {
        "steps": steps,
        "crops": steps * BATCH,
        "minutes": round((time.monotonic() - start) / 60, 2),
        "seed": seed,
    }
    (folder / "learned.json").write_text(json.dumps(record, indent=1))
    return record


def check_learned(
    folder: Path, photos: Sequence[tuple[npt.NDArray[np.uint8], Sequence[str]]]
) -> dict[str, Any]:
    """Card F1 on labelled photos of the deck (:func:`photo_f1`) of the reader with the classifier
    learned in ``folder`` and with the shipped one (both with the deck's look and faces: ``--model
    folder`` otherwise). When the learned classifier reads them worse, it is set aside as
    ``classifier.refused.onnx`` (and ``.pt``) and the shipped one copied in its place, so ``--model
    folder`` reads with the shipped classifier. Writes and returns the record (``checked.json``)."""
    import shutil

    from vision.reader import CardReader, default_reader_config, model_options
    from vision.settings import WEIGHTS_DIR

    if not photos:
        raise LearnError("no labelled photo to check the learned deck with")
    options = model_options(folder)
    learned = photo_f1(CardReader(default_reader_config("onnx", **options)), photos)
    shipped_options = {**options, "classifier": WEIGHTS_DIR / "classifier.onnx"}
    shipped = photo_f1(CardReader(default_reader_config("onnx", **shipped_options)), photos)
    kept = "learned" if learned >= shipped else "shipped"
    if kept == "shipped":
        for suffix in (".onnx", ".pt"):
            made = folder / f"classifier{suffix}"
            if made.is_file():
                made.replace(folder / f"classifier.refused{suffix}")
        shutil.copyfile(WEIGHTS_DIR / "classifier.onnx", folder / "classifier.onnx")
    record = {
        "photos": len(photos),
        "shipped_f1": round(shipped, 4),
        "learned_f1": round(learned, 4),
        "kept": kept,
    }
    (folder / "checked.json").write_text(json.dumps(record, indent=1))
    return record


#: Jittered crops cut from each harvested index box of a labelled photo.
PHOTO_JITTER = 6
#: A box whose probability of being each of its photo's cards is below this is taken as background.
BACKGROUND_BELOW = 0.02


@dataclass(frozen=True)
class Harvest:
    """What the labelled photos gave: crops (uint8 NCHW, :data:`vision.crops.CROP_SIZE`) with
    their classes, the look they were cut in, and the shipped reader's card F1 over the photos in
    each look and despeckle size tried."""

    crops: npt.NDArray[np.uint8]
    classes: npt.NDArray[np.int64]
    look: str
    scores: dict[str, float]
    #: the median filter the localiser sees the deck through (:func:`vision.look.despeckle`; 0: none)
    despeckle: int = 0


def photo_f1(reader: Any, photos: Sequence[tuple[npt.NDArray[np.uint8], Sequence[str]]]) -> float:
    """Card F1 of ``reader`` over labelled photos (each photo's multiset of card names against the
    cards read)."""
    tp = fp = fn = 0
    for image, cards in photos:
        read = Counter(str(c.card) for c in reader.read(image).cards)
        truth = Counter(cards)
        hit = sum((read & truth).values())
        tp, fp, fn = tp + hit, fp + sum(read.values()) - hit, fn + sum(truth.values()) - hit
    return 2 * tp / max(1, 2 * tp + fp + fn)


def label_boxes(
    p: npt.NDArray[np.float32], cards: Sequence[str], floor: float = 0.15
) -> npt.NDArray[np.int64]:
    """The class each index box is taken for on a photo whose cards are known but not where they
    lie (weak labels): of the photo's cards, the one the classifier finds most probable, when that
    probability is at least ``floor`` and at least half the box's best; each card to at most two
    boxes per copy (its two corners), the most probable first; -1 for a box left out.

    >>> from vision.labels import class_id
    >>> p = np.full((3, 55), 0.001, np.float32)
    >>> p[0, class_id("7H")], p[1, class_id("7D")], p[1, class_id("7H")], p[2, 54] = 0.5, 0.6, 0.2, 0.99
    >>> label_boxes(p, ["7H"]).tolist() == [class_id("7H"), -1, -1]   # box 1 looks more like a 7D
    True
    """
    from vision.labels import class_id

    ids = np.array(sorted({class_id(c) for c in cards}), np.int64)
    out = np.full(len(p), -1, np.int64)
    if not len(ids) or not len(p):
        return out
    sub = p[:, ids]
    best = sub.argmax(1)
    prob = sub[np.arange(len(p)), best]
    ok = (prob >= floor) & (prob >= 0.5 * p.max(1))
    limit = {class_id(c): 2 * n for c, n in Counter(cards).items()}
    taken: Counter[int] = Counter()
    for k in np.argsort(-prob, kind="stable"):
        cid = int(ids[best[k]])
        if ok[k] and taken[cid] < limit[cid]:
            out[k] = cid
            taken[cid] += 1
    return out


def harvest(
    photos: Sequence[tuple[npt.NDArray[np.uint8], Sequence[str]]],
    log: Callable[[str], None] = print,
    seed: int = 0,
) -> Harvest:
    """The shipped reader on labelled photos of one deck: the look it reads them best in
    (:mod:`vision.look`), and in that look the despeckle size that reads them best (a deck on
    glittering stock; :func:`vision.look.despeckle`, kept only when it reads them better than
    none), then each photo's index boxes in that look labelled with the photo's
    cards (:func:`label_boxes`), or as background when none of its cards is likely there
    (:data:`BACKGROUND_BELOW`), and cut :data:`PHOTO_JITTER` times, jittered as the localiser's
    boxes are, into crops."""
    from vision.classifier import BACKGROUND, proposals
    from vision.crops import crop_boxes
    from vision.labels import class_id
    from vision.look import DESPECKLE_SIZES, LOOKS, apply_look
    from vision.reader import CardReader, default_reader_config

    scores: dict[str, float] = {}
    readers = {look: CardReader(default_reader_config("onnx", look=look)) for look in LOOKS}
    for look, reader in readers.items():
        scores[look] = photo_f1(reader, photos)
        log(f"  look {look}: card F1 {100 * scores[look]:.1f} % on the {len(photos)} photos")
    look = max(LOOKS, key=lambda k: scores[k])
    reader = readers[look]
    size, best = 0, scores[look]
    for k in DESPECKLE_SIZES[1:]:
        specked = CardReader(default_reader_config("onnx", look=look, despeckle=k))
        key = f"{look}, despeckle {k}"
        scores[key] = photo_f1(specked, photos)
        log(f"  look {key}: card F1 {100 * scores[key]:.1f} % on the {len(photos)} photos")
        if scores[key] > best:
            size, reader, best = k, specked, scores[key]
    assert reader.classifier is not None
    d = reader.config.detector
    rng = np.random.default_rng(seed)
    crops, classes = [], []
    for image, cards in photos:
        shown = apply_look(image, look)
        boxes = proposals(reader.localise(shown), d.det_conf)
        boxes, p = reader.classifier.read(shown, boxes)
        labels = label_boxes(p, cards)
        # a box none of the photo's cards is likely in, read as background or as a card the photo
        # lacks (a pip, a court figure's detail): background, as the network must learn to say
        ids = np.array([class_id(c) for c in set(cards)], np.int64)
        likely = p[:, ids].max(1) if len(ids) else np.zeros(len(p), np.float32)
        unlike = (labels < 0) & (likely < BACKGROUND_BELOW)
        labels[unlike] = BACKGROUND
        keep = labels >= 0
        for xyxy, cid in zip(boxes.xyxy[keep], labels[keep], strict=True):
            w, h = xyxy[2] - xyxy[0], xyxy[3] - xyxy[1]
            jitter = rng.uniform(-0.08, 0.08, (PHOTO_JITTER, 4)) * np.array([w, h, w, h])
            jitter[0] = 0
            cut = crop_boxes(shown, (xyxy[None] + jitter).astype(np.float32))
            crops.append((cut * 255).round().astype(np.uint8))
            classes += [int(cid)] * PHOTO_JITTER
    if not crops:
        raise LearnError("no index on the labelled photos was read as any of their cards")
    return Harvest(np.concatenate(crops), np.array(classes, np.int64), look, scores, size)


def learn_from_photos(
    photos: Sequence[tuple[npt.NDArray[np.uint8], Sequence[str]]],
    folder: Path,
    minutes: float = 10.0,
    *,
    seed: int = 0,
    steps: int = 0,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Learn a deck from labelled photos of it in play (each photo with the multiset of its cards,
    no boxes): the look it reads best in and the index classifier fine-tuned for ``minutes`` on the
    indices the photos' labels name (:func:`harvest`), each crop turned by a random quarter turn
    and jittered in colour and sharpness (``steps``: that many steps instead of ``minutes``, for
    comparisons on a busy machine). Writes ``folder/classifier.onnx`` (and ``.pt``),
    ``folder/deck.json`` (the look and the despeckle size) and ``folder/learned.json``; returns what
    was done."""
    import torch

    from vision.classifier import BACKGROUND

    if not photos:
        raise LearnError("no labelled photo given")
    start = time.monotonic()
    got = harvest(photos, log, seed)
    cards = got.classes[got.classes != BACKGROUND]
    log(
        f"  look {got.look}, despeckle {got.despeckle}; {len(cards) // PHOTO_JITTER} indices labelled ({len(set(cards.tolist()))} cards), "
        f"{(len(got.classes) - len(cards)) // PHOTO_JITTER} background boxes"
    )
    x_all, y_all = torch.from_numpy(got.crops), torch.from_numpy(got.classes)

    def batch(gen: Any) -> tuple[Any, Any]:
        pick = torch.randint(len(y_all), (min(BATCH, len(y_all)),), generator=gen)
        turns = torch.randint(4, (len(pick),), generator=gen)
        x = torch.stack(
            [torch.rot90(c, int(t), dims=(1, 2)) for c, t in zip(x_all[pick], turns, strict=True)]
        )
        return x, y_all[pick]

    steps = fine_tune(folder, batch, minutes, seed=seed, steps=steps, log=log)
    (folder / "deck.json").write_text(
        json.dumps({"look": got.look, "despeckle": got.despeckle}, indent=1) + "\n"
    )
    record = {
        "photos": len(photos),
        "look": got.look,
        "despeckle": got.despeckle,
        "looks_f1": {k: round(v, 4) for k, v in got.scores.items()},
        "indices": len(cards) // PHOTO_JITTER,
        "background": (len(got.classes) - len(cards)) // PHOTO_JITTER,
        "steps": steps,
        "minutes": round((time.monotonic() - start) / 60, 2),
        "seed": seed,
    }
    (folder / "learned.json").write_text(json.dumps(record, indent=1))
    return record
