"""Train the index classifier of :mod:`vision.classifier` on crops of labelled corner indices.

Crops come from YOLO-layout tile datasets (``images/<split>``, ``labels/<split>``): every labelled index
is cropped ``jitter`` times with its box shifted (±12 %) and scaled (±15 %) like a detector's box would
be, resized to ``--size`` (40) square; ``negatives`` random index-sized boxes per image that overlap no index are a
55th class, *background*, so the classifier can also reject the detector's false boxes. The network is a 6-layer CNN with a position-aware head (see :func:`build_net`); training uses AdamW with a
cosine schedule; the result is exported to ONNX (input ``crops`` (N, 3, size, size), output ``logits``).

    tractorcam heads classifier OUT.onnx --train DIR[:split] --val DIR[:split] --epochs 8

(each of ``--train`` and ``--val`` repeated for more sources).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
import numpy.typing as npt

from models.loop import Plan, Single, crop_optimiser
from models.loop import train as run_plan
from models.tiles import IMAGE_SUFFIXES, read_yolo_labels
from vision.classifier import BACKGROUND, SUITED
from vision.crops import CROP_PAD, CROP_SIZE, PAD_KEY, crop_boxes
from vision.labels import RANKS


class CropDataError(ValueError):
    """No labelled crops could be read."""


@dataclass(frozen=True)
class CropSet:
    """Crops (N, 3, 32, 32) uint8 and their class ids."""

    x: npt.NDArray[np.uint8]
    y: npt.NDArray[np.int64]


def jitter_boxes(
    boxes: npt.NDArray[np.float32], rng: np.random.Generator, amount: float
) -> npt.NDArray[np.float32]:
    """Boxes with centres shifted by ±``amount`` of their size and sizes scaled by ±1.25 ``amount``."""
    if amount <= 0:
        return boxes
    w = boxes[:, 2] - boxes[:, 0]
    h = boxes[:, 3] - boxes[:, 1]
    cx = (boxes[:, 0] + boxes[:, 2]) / 2 + rng.uniform(-amount, amount, len(boxes)) * w
    cy = (boxes[:, 1] + boxes[:, 3]) / 2 + rng.uniform(-amount, amount, len(boxes)) * h
    s = 1 + rng.uniform(-1.25 * amount, 1.25 * amount, len(boxes))
    return np.stack([cx - w * s / 2, cy - h * s / 2, cx + w * s / 2, cy + h * s / 2], 1).astype(np.float32)


def uint8_crops(
    image: npt.NDArray[np.uint8], xyxy: npt.NDArray[np.float32], size: int = CROP_SIZE, pad: float = CROP_PAD
) -> npt.NDArray[np.uint8]:
    """:func:`vision.classifier.crop_boxes` stored as uint8 (N, 3, size, size), rounded, for training sets."""
    return to_uint8(crop_boxes(image, xyxy, size, pad))


def to_uint8(crops: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    """Float crops in [0, 1] as rounded uint8, the form training sets store."""
    return cast("npt.NDArray[np.uint8]", np.clip(crops * 255 + 0.5, 0, 255).astype(np.uint8))


def labelled_images(
    sources: list[tuple[Path, str]], limit: int | None = None
) -> Iterator[tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
    """(image, class ids, xyxy boxes) of every readable image with at least one YOLO label in the
    (dataset, split) sources, in name order, at most ``limit`` images per source."""
    for root, split in sources:
        images = sorted(p for p in (root / "images" / split).glob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
        for path in images[:limit]:
            read = cv2.imread(str(path))
            if read is None:
                continue
            image = cast("npt.NDArray[np.uint8]", read)
            cls, boxes = read_yolo_labels(
                root / "labels" / split / (path.stem + ".txt"), image.shape[1], image.shape[0]
            )
            if len(cls):
                yield image, cls, boxes


def negative_boxes(
    boxes: npt.NDArray[np.float32], width: int, height: int, n: int, rng: np.random.Generator
) -> npt.NDArray[np.float32]:
    """Up to ``n`` random index-sized boxes overlapping no labelled index (IoU < 0.1)."""
    from vision.detections import box_iou

    sizes = (
        np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]) if len(boxes) else np.array([30.0])
    )
    out = []
    for _ in range(n * 3):
        s = float(rng.choice(sizes)) * rng.uniform(0.7, 1.4)
        w, h = s * rng.uniform(0.4, 1.0), s
        if rng.random() < 0.5:
            w, h = h, w
        x, y = rng.uniform(0, max(1.0, width - w)), rng.uniform(0, max(1.0, height - h))
        cand = np.array([[x, y, x + w, y + h]], np.float32)
        if len(boxes) == 0 or box_iou(cand, boxes).max() < 0.1:
            out.append(cand[0])
        if len(out) == n:
            break
    return np.array(out, np.float32).reshape(-1, 4)


def extract_crops(
    sources: list[tuple[Path, str]],
    jitter: int,
    seed: int,
    limit: int | None = None,
    amount: float = 0.12,
    negatives: int = 0,
    size: int = CROP_SIZE,
    pad: float = CROP_PAD,
) -> CropSet:
    """Crops of every label of the given (dataset, split) sources, plus ``negatives`` background
    crops per image (class :data:`BACKGROUND`); ``pad``: context around each box, a share of its long
    side on every side (:func:`vision.classifier.crop_boxes`)."""
    rng = np.random.default_rng(seed)
    xs: list[npt.NDArray[np.uint8]] = []
    ys: list[npt.NDArray[np.int64]] = []
    for image, cls, boxes in labelled_images(sources, limit):
        for _ in range(jitter):
            xs.append(uint8_crops(image, jitter_boxes(boxes, rng, amount), size, pad))
            ys.append(cls)
        if negatives:
            neg = negative_boxes(boxes, image.shape[1], image.shape[0], negatives, rng)
            if len(neg):
                xs.append(uint8_crops(image, neg, size, pad))
                ys.append(np.full(len(neg), BACKGROUND, np.int64))
    if not xs:
        raise CropDataError(f"no labelled crops in {sources}")
    return CropSet(np.concatenate(xs), np.concatenate(ys))


#: What a network is trained to name (``--target``): ``card``, the 54 cards + background (the index
#: classifier); ``suit``, the suit of a suited card (4 classes, in :data:`vision.labels.SUITS` order),
#: the suit head of :class:`vision.classifier.IndexClassifier`, which reads a wider context crop.
TARGETS = ("card", "suit")


def suit_targets(data: CropSet) -> CropSet:
    """Only the crops of suited cards (no joker, no background), labelled with their suit's index in
    :data:`vision.labels.SUITS` (the class blocks of :mod:`vision.labels` are 13 ranks per suit).

    >>> d = suit_targets(CropSet(np.zeros((4, 3, 2, 2), np.uint8), np.array([0, 14, 52, 54])))
    >>> d.y.tolist(), len(d.x)
    ([0, 1], 2)
    """
    keep = data.y < SUITED
    return CropSet(data.x[keep], data.y[keep] // len(RANKS))


#: Names accepted by :func:`augment` (``--augment``).
AUGMENTATIONS = ("basic", "strong")


class AugmentationError(ValueError):
    """An unknown augmentation name."""


def augment(
    x: npt.NDArray[np.uint8], rng: np.random.Generator, kind: str = "basic"
) -> npt.NDArray[np.float32]:
    """Training crops (N, 3, S, S) uint8 → float32 in [0, 1] with a random jitter per crop.

    ``basic``: brightness × U(0.7, 1.3) and offset
    U(-0.12, 0.12). ``strong`` adds, for designs the network never saw: a colour cast (each channel
    × U(0.85, 1.15)), grey crops (15 %: shape only, no colour cue), lost resolution (30 %: shrunk to
    45–90 % and enlarged back, like a smaller or blurred print) and pixel noise (σ up to 0.04). The
    basic draws come first, so ``basic`` repeats earlier runs exactly.

    Raises :class:`AugmentationError` for an unknown ``kind``.
    """
    if kind not in AUGMENTATIONS:
        raise AugmentationError(f"unknown augmentation {kind!r}; known: {', '.join(AUGMENTATIONS)}")
    n = len(x)
    out = x.astype(np.float32) / 255.0
    out = out * rng.uniform(0.7, 1.3, (n, 1, 1, 1)) + rng.uniform(-0.12, 0.12, (n, 1, 1, 1))
    if kind == "strong":
        out = out * rng.uniform(0.85, 1.15, (n, 3, 1, 1))
        grey = rng.random(n) < 0.15
        out[grey] = out[grey].mean(axis=1, keepdims=True)
        size = x.shape[-1]
        for i in np.flatnonzero(rng.random(n) < 0.3):
            small = max(4, round(size * rng.uniform(0.45, 0.9)))
            hwc = np.ascontiguousarray(out[i].transpose(1, 2, 0))
            hwc = cv2.resize(cv2.resize(hwc, (small, small), interpolation=cv2.INTER_AREA), (size, size))
            out[i] = hwc.transpose(2, 0, 1)
        out = out + rng.normal(0.0, 1.0, out.shape).astype(np.float32) * rng.uniform(0, 0.04, (n, 1, 1, 1))
    return np.clip(out, 0, 1).astype(np.float32)


def build_net(
    classes: int = 55, size: int = CROP_SIZE, width: float = 1.0
) -> Any:  # torch is imported lazily
    """The classifier network (torch.nn.Sequential): 54 cards + background.

    Three stride-2 stages, then a *flattened* ``size/8`` × ``size/8`` map rather than global pooling:
    the head knows where a glyph is, so in a fan it names the centred index, not its neighbour's.
    ``width`` multiplies every layer's channels (1.0: 24-32-64-128; cost grows with its square).
    """
    import torch.nn as nn

    def block(i: int, o: int, s: int) -> list[nn.Module]:
        return [nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True)]

    c1, c2, c3, c4, head, fc = (max(8, round(c * width)) for c in (24, 32, 64, 128, 32, 192))
    cells = (size + 7) // 8
    return nn.Sequential(
        *block(3, c1, 1),
        *block(c1, c2, 2),
        *block(c2, c2, 1),
        *block(c2, c3, 2),
        *block(c3, c3, 1),
        *block(c3, c4, 2),
        nn.Conv2d(c4, head, 1),
        nn.ReLU(inplace=True),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(head * cells * cells, fc),
        nn.ReLU(inplace=True),
        nn.Dropout(0.1),
        nn.Linear(fc, classes),
    )


def accuracy(net: Any, data: CropSet, batch: int = 1024) -> float:
    """Top-1 accuracy of ``net`` on ``data``."""
    import torch

    net.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(data.y), batch):
            x = torch.from_numpy(data.x[i : i + batch].astype(np.float32) / 255.0)
            correct += int((net(x).argmax(1).numpy() == data.y[i : i + batch]).sum())
    return correct / max(1, len(data.y))


class _Epoch(Plan):
    """One epoch of :func:`train_classifier`: the crop set in ``order``, ``batch`` crops at a
    time, jittered by :func:`augment`; the one-cycle ``sched`` stepped after each batch."""

    def __init__(
        self, data: CropSet, order: Any, batch: int, rng: np.random.Generator, augmentation: str, sched: Any
    ) -> None:
        self.data, self.order, self.size, self.rng = data, order, batch, rng
        self.augmentation, self.sched = augmentation, sched
        self.at, self.batches = 0, 0
        self.loss: Any = None
        self.t0 = time.time()

    def begin_round(self, trainees: Any) -> bool:
        return self.at < len(self.order)

    def batch(self, trainee: Any) -> tuple[Any, Any]:
        import torch

        idx = self.order[self.at : self.at + self.size]
        self.at += self.size
        x = torch.from_numpy(augment(self.data.x[idx], self.rng, self.augmentation))
        return x, torch.from_numpy(self.data.y[idx])

    def stepped(self, trainee: Any, loss: Any) -> None:
        self.sched.step()
        self.loss = loss
        if self.batches % 50 == 0:
            print(f"  batch {self.batches} loss {loss.item():.3f} {time.time() - self.t0:.0f}s", flush=True)
        self.batches += 1


def train_classifier(
    train: CropSet,
    val: list[tuple[str, CropSet]],
    epochs: int,
    out: Path,
    seed: int = 0,
    batch: int = 256,
    lr: float = 3e-3,
    threads: int = 0,
    init: Path | None = None,
    width: float = 1.0,
    augmentation: str = "basic",
    classes: int = 55,
    pad: float = CROP_PAD,
    init_partial: bool = False,
) -> dict[str, float]:
    """Train, export the best-on-first-val network to ONNX at ``out``, return its accuracies.

    ``augmentation`` names the per-crop jitter of :func:`augment`. The best weights so far are also
    saved after every epoch as ``out`` with suffix ``.pt`` (a torch state dict), so a stopped run
    still leaves its best network; ``init`` starts from such a file. With ``init_partial`` only the
    tensors whose name and shape match are taken (the convolutions of a classifier of the same
    ``width`` for a network of another crop size or class count; the rest start fresh).
    """
    import torch

    torch.manual_seed(seed)
    if threads:
        torch.set_num_threads(threads)
    size = int(train.x.shape[-1])
    net = build_net(classes=classes, size=size, width=width)
    if init is not None:
        state = torch.load(init, map_location="cpu")
        if init_partial:
            own = net.state_dict()
            state = {k: v for k, v in state.items() if k in own and own[k].shape == v.shape}
            print(f"init: {len(state)} of {len(own)} tensors from {init}", flush=True)
            own.update(state)
            state = own
        net.load_state_dict(state)
    one = Single(net, crop_optimiser(net, lr))
    steps = epochs * ((len(train.y) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(one.opt, max_lr=lr, total_steps=steps, pct_start=0.15)
    rng = np.random.default_rng(seed)
    best, best_state, scores = -1.0, None, {}
    for epoch in range(epochs):
        plan = _Epoch(train, rng.permutation(len(train.y)), batch, rng, augmentation, sched)
        run_plan([one], plan)
        t0, loss = plan.t0, plan.loss
        scores = {name: accuracy(net, data) for name, data in val}
        print(
            f"epoch {epoch + 1}/{epochs} {time.time() - t0:.0f}s loss {loss.item():.3f} "
            + " ".join(f"{k} {v:.4f}" for k, v in scores.items()),
            flush=True,
        )
        first = next(iter(scores.values()))
        if first > best:
            best = first
            best_state = {k: v.clone() for k, v in net.state_dict().items()}
            out.parent.mkdir(parents=True, exist_ok=True)
            torch.save(best_state, out.with_suffix(".pt"))
    assert best_state is not None
    net.load_state_dict(best_state)
    final = {name: accuracy(net, data) for name, data in val}
    export_onnx(net, size, out, pad)
    return final


def write_crop_pad(path: Path, pad: float) -> None:
    """Record in an ONNX file's metadata (:data:`vision.classifier.PAD_KEY`) the context pad its crops
    were cut with, so a reader cuts them the same way (:data:`vision.heads.SUIT`)."""
    import onnx

    model = onnx.load(str(path))
    kept = [m for m in model.metadata_props if m.key != PAD_KEY]
    del model.metadata_props[:]
    model.metadata_props.extend(kept)
    model.metadata_props.add(key=PAD_KEY, value=repr(float(pad)))
    onnx.save(model, str(path))


def export_onnx(net: Any, size: int, out: Path, pad: float = CROP_PAD) -> None:
    """Write ``net`` as ONNX: input ``crops`` (N, 3, size, size), output ``logits`` (N, classes), with
    the crops' context ``pad`` in its metadata (:func:`write_crop_pad`)."""
    import torch

    net.eval()
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        net,
        (torch.zeros(1, 3, size, size),),
        str(out),
        input_names=["crops"],
        output_names=["logits"],
        dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}},
        opset_version=17,
        dynamo=False,
    )
    write_crop_pad(out, pad)


def load_crops(path: Path) -> CropSet:
    """A crop set saved with ``np.savez(path, x=..., y=...)`` (a ``--mine-cache`` file).

    Raises :class:`CropDataError` when the file is missing or its arrays do not fit together.
    """
    if not Path(path).is_file():
        raise CropDataError(f"crop file not found: {path}")
    with np.load(path) as z:
        if "x" not in z or "y" not in z:
            raise CropDataError(f"{path}: needs arrays x and y")
        x, y = z["x"], z["y"]
    if x.ndim != 4 or x.shape[1] != 3 or len(x) != len(y) or x.dtype != np.uint8:
        raise CropDataError(f"{path}: x must be uint8 (N, 3, S, S) with one label per crop")
    return CropSet(x, y.astype(np.int64))


def _sources(specs: list[str]) -> list[tuple[Path, str]]:
    out = []
    for s in specs:
        root, _, split = s.partition(":")
        out.append((Path(root), split or "train"))
    return out
