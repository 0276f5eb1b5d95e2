"""Here, on the weights that come back: the classifiers' and localisers' checks on selection
splits (``gpu check``), a fine-tuned classifier averaged with its base (``gpu soup``), and a
head written as ONNX (``gpu export``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from models.gpu.common import GpuRunError
from models.gpu.render import trained_head
from vision.classifier import BACKGROUND
from vision.crops import CROP_SIZE

# --------------------------------------------------------------------------- weight interpolation (here)


def interpolate_weights(base: dict[str, Any], tuned: dict[str, Any], alpha: float) -> dict[str, Any]:
    """``(1 - alpha) · base + alpha · tuned`` for every floating-point tensor of two state dicts of
    one architecture; integer tensors (batch-norm counters) are taken from ``tuned``. This is
    weight-space ensembling of a network and its own fine-tuned copy (WiSE-FT, Wortsman et al.
    2022): it keeps most of what the fine-tune gained on new decks and most of what the base knew.

    >>> import torch
    >>> out = interpolate_weights({"w": torch.zeros(2), "n": torch.tensor(3)},
    ...                           {"w": torch.ones(2), "n": torch.tensor(5)}, 0.25)
    >>> out["w"].tolist(), int(out["n"])
    ([0.25, 0.25], 5)
    """
    if set(base) != set(tuned):
        raise GpuRunError("the two state dicts hold different tensors: not one architecture")
    if not 0.0 <= alpha <= 1.0:
        raise GpuRunError(f"alpha {alpha} is outside [0, 1]")
    out: dict[str, Any] = {}
    for key, b in base.items():
        t = tuned[key]
        if tuple(b.shape) != tuple(t.shape):
            raise GpuRunError(f"{key}: shapes {tuple(b.shape)} and {tuple(t.shape)} differ")
        out[key] = (1 - alpha) * b.float() + alpha * t.float() if b.is_floating_point() else t.clone()
    return out


def soup(base: Path, tuned: Path, alpha: float, out: Path, width: float) -> None:
    """Write the interpolated classifier as ``out`` (``.pt`` state dict) and ``out.onnx``."""
    import torch

    from models.classifier import build_net, export_onnx

    state = interpolate_weights(
        torch.load(base, map_location="cpu"), torch.load(tuned, map_location="cpu"), alpha
    )
    net = build_net(width=width)
    net.load_state_dict(state)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(state, out.with_suffix(".pt"))
    export_onnx(net, CROP_SIZE, out.with_suffix(".onnx"))


def export_head(weights: Path, out: Path, head: str, width: float) -> None:
    """Write a network ``gpu train --head HEAD`` trained (its state dict ``weights``) as ONNX, with
    its window's pad in the file's metadata (:func:`models.classifier.export_onnx`)."""
    import torch

    from models.classifier import build_net, export_onnx

    spec = trained_head(head)
    net = build_net(spec.classes, spec.size, width=width)
    try:
        net.load_state_dict(torch.load(weights, map_location="cpu"))
    except RuntimeError as exc:
        raise GpuRunError(f"{weights}: not a {head} network of width {width:g}: {str(exc)[:200]}") from None
    export_onnx(net, spec.size, out, spec.pad)


# --------------------------------------------------------------------------- checks (here)


def _sources(specs: list[str]) -> list[tuple[str, Path, str]]:
    """``NAME=DIR:SPLIT`` → (name, dataset folder, split)."""
    out = []
    for spec in specs:
        name, _, rest = spec.partition("=")
        root, _, split = rest.rpartition(":")
        if not name or not root or not split:
            raise GpuRunError(f"split {spec!r}: NAME=DIR:SPLIT")
        out.append((name, Path(root), split))
    return out


def check_classifiers(nets: list[str], splits: list[str], seed: int = 0) -> dict[str, dict[str, float]]:
    """Top-1 of classifier state dicts (``NAME=PATH:WIDTH``) on the same crops of each split's labels
    (jittered by 8 %, two background boxes per image): cards, jokers and background apart."""
    import torch

    from models.classifier import build_net, extract_crops

    loaded = {}
    for spec in nets:
        name, _, rest = spec.partition("=")
        path, _, width = rest.rpartition(":")
        net = build_net(width=float(width))
        net.load_state_dict(torch.load(path, map_location="cpu"))
        loaded[name] = net.eval()
    table: dict[str, dict[str, float]] = {}
    for split_name, root, split in _sources(splits):
        data = extract_crops([(root, split)], jitter=1, seed=seed, amount=0.08, negatives=2)
        card = data.y < BACKGROUND
        joker = (data.y == BACKGROUND - 2) | (data.y == BACKGROUND - 1)
        for name, net in loaded.items():
            with torch.no_grad():
                pred = np.concatenate(
                    [
                        net(torch.from_numpy(data.x[i : i + 2048]).float() / 255.0).argmax(1).numpy()
                        for i in range(0, len(data.y), 2048)
                    ]
                )
            row = table.setdefault(name, {})
            row[f"{split_name} cards"] = float(np.mean(pred[card] == data.y[card]))
            row[f"{split_name} jokers"] = (
                float(np.mean(pred[joker] == data.y[joker])) if joker.any() else float("nan")
            )
            row[f"{split_name} background"] = float(np.mean(pred[~card] == BACKGROUND))
    return table


def check_localisers(models: list[str], splits: list[str], every: int = 3) -> dict[str, dict[str, float]]:
    """Recall of labelled indices (IoU ≥ 0.5) and boxes on no index (IoU < 0.3) of localiser ONNX
    files (``NAME=PATH``) through the inference pyramid at scores 0.2 / 0.3 / 0.4, on every
    ``every``-th image of each split; jokers found at 0.3."""
    import cv2

    from models.tiles import IMAGE_SUFFIXES, read_yolo_labels
    from vision.detections import box_iou
    from vision.detectors.base import DetectorConfig, create_detector
    from vision.tiling import TiledDetector, TilingConfig

    detectors = {}
    for spec in models:
        name, _, onnx = spec.partition("=")
        net = create_detector(DetectorConfig(type="onnx", weights=Path(onnx), conf=0.2))
        detectors[name] = TiledDetector(net, TilingConfig(tile=net.config.imgsz))
    table: dict[str, dict[str, float]] = {}
    for split_name, root, split in _sources(splits):
        paths = sorted(p for p in (root / "images" / split).glob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
        counts = {n: np.zeros(11, np.int64) for n in detectors}  # found/labels/stray per score, jokers
        for path in paths[::every]:
            read = cv2.imread(str(path))
            if read is None:
                continue
            image = np.asarray(read, np.uint8)
            h, w = image.shape[:2]
            cls, boxes = read_yolo_labels(root / "labels" / split / (path.stem + ".txt"), w, h)
            for name, det in detectors.items():
                found_all = det.detect(image).with_nms(0.5, class_agnostic=True)
                for k, score in enumerate((0.2, 0.3, 0.4)):
                    xy = found_all.xyxy[found_all.confidence >= score]
                    if len(cls) and len(xy):
                        iou = box_iou(np.asarray(boxes, np.float32), xy)
                        found, stray = iou.max(1) >= 0.5, int((iou.max(0) < 0.3).sum())
                    else:
                        found, stray = np.zeros(len(cls), bool), len(xy)
                    counts[name][3 * k : 3 * k + 3] += (int(found.sum()), len(cls), stray)
                    if score == 0.3:
                        joker = (cls == BACKGROUND - 2) | (cls == BACKGROUND - 1)
                        counts[name][9:] += (int(found[joker].sum()), int(joker.sum()))
        for name, c in counts.items():
            row = table.setdefault(name, {})
            for k, score in enumerate((0.2, 0.3, 0.4)):
                row[f"{split_name} recall@{score}"] = c[3 * k] / max(1, c[3 * k + 1])
                row[f"{split_name} stray@{score}"] = float(c[3 * k + 2])
            row[f"{split_name} jokers found"] = float(c[9])
            row[f"{split_name} jokers"] = float(c[10])
    return table


def _cell(key: str, value: float) -> str:
    counted = "stray" in key or key.endswith(("jokers", "found"))
    return f"{key} {value:.0f}" if counted else f"{key} {value:.4f}"
