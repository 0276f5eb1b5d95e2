"""Column-array detections (supervision-style): one object holds N boxes as parallel arrays.

``xyxy`` is float32 (N, 4) in pixel coordinates of the image they were detected in,
``confidence`` float32 (N,), ``class_id`` int64 (N,) with ids from :mod:`vision.labels`, and
optionally ``up`` float32 (N, 2): each index's reading direction (:mod:`vision.orientation`).
Every helper returns a new object; arrays are never shared with the caller's input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from vision.labels import class_name


class DetectionsShapeError(ValueError):
    """Arrays given to :class:`Detections` do not have matching (N, 4) / (N,) shapes."""


@dataclass(frozen=True)
class Detections:
    """N detected boxes as parallel arrays.

    ``up``: None, or (N, 2) unit vectors (image px, y down) towards the top of each index's glyphs,
    NaN rows where unknown; an orientation head sets it, card grouping reads it. Boxes moved or
    scaled keep their ``up``.
    """

    xyxy: npt.NDArray[np.float32]
    confidence: npt.NDArray[np.float32]
    class_id: npt.NDArray[np.int64]
    up: npt.NDArray[np.float32] | None = None

    def __post_init__(self) -> None:
        xyxy = np.asarray(self.xyxy, dtype=np.float32)
        if xyxy.size == 0:
            xyxy = np.zeros((0, 4), np.float32)
        elif xyxy.ndim != 2 or xyxy.shape[1] != 4:
            raise DetectionsShapeError(f"xyxy must be (N, 4), got {xyxy.shape}")
        conf = np.asarray(self.confidence, dtype=np.float32).reshape(-1)
        cls = np.asarray(self.class_id, dtype=np.int64).reshape(-1)
        if not (len(xyxy) == len(conf) == len(cls)):
            raise DetectionsShapeError(
                f"length mismatch: xyxy {len(xyxy)}, confidence {len(conf)}, class_id {len(cls)}"
            )
        object.__setattr__(self, "xyxy", xyxy)
        object.__setattr__(self, "confidence", conf)
        object.__setattr__(self, "class_id", cls)
        if self.up is not None:
            up = np.asarray(self.up, dtype=np.float32).reshape(-1, 2)
            if len(up) != len(cls):
                raise DetectionsShapeError(f"up must be (N, 2) with N = {len(cls)}, got {np.shape(self.up)}")
            object.__setattr__(self, "up", up)

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def empty(cls) -> Detections:
        """No detections."""
        return cls(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, np.int64))

    @classmethod
    def concat(cls, parts: Iterable[Detections]) -> Detections:
        """All detections of ``parts`` in order (with ``up`` when any part has it; NaN for the rest)."""
        parts = list(parts)
        if not parts:
            return cls.empty()
        up = None
        if any(p.up is not None for p in parts):
            up = np.concatenate([p.up if p.up is not None else np.full((len(p), 2), np.nan) for p in parts])
        return cls(
            np.concatenate([p.xyxy for p in parts]),
            np.concatenate([p.confidence for p in parts]),
            np.concatenate([p.class_id for p in parts]),
            up,
        )

    # --- basics -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.class_id)

    def __getitem__(
        self, index: int | slice | Sequence[int] | npt.NDArray[np.bool_] | npt.NDArray[np.int_]
    ) -> Detections:
        """Subset by integer, slice, index array or boolean mask (always returns Detections)."""
        if isinstance(index, int | np.integer):
            index = [int(index)]
        up = None if self.up is None else self.up[index]
        return Detections(self.xyxy[index], self.confidence[index], self.class_id[index], up)

    def with_up(self, up: npt.NDArray[np.float32] | None) -> Detections:
        """The same boxes with reading directions ``up`` ((N, 2), or None for none)."""
        return Detections(self.xyxy, self.confidence, self.class_id, up)

    @property
    def names(self) -> list[str]:
        """Card names of the class ids."""
        return [class_name(int(c)) for c in self.class_id]

    @property
    def centers(self) -> npt.NDArray[np.float32]:
        """Box centres (N, 2)."""
        return np.stack([(self.xyxy[:, 0] + self.xyxy[:, 2]) / 2, (self.xyxy[:, 1] + self.xyxy[:, 3]) / 2], 1)

    @property
    def area(self) -> npt.NDArray[np.float32]:
        """Box areas (N,)."""
        widths = np.clip(self.xyxy[:, 2] - self.xyxy[:, 0], 0, None)
        return cast("npt.NDArray[np.float32]", widths * np.clip(self.xyxy[:, 3] - self.xyxy[:, 1], 0, None))

    # --- transforms ---------------------------------------------------------------------------
    def filter_confidence(self, threshold: float) -> Detections:
        """Keep detections with confidence >= ``threshold``."""
        return self[self.confidence >= threshold]

    def filter_class_confidence(self, class_ids: Iterable[int], threshold: float) -> Detections:
        """Keep detections of ``class_ids`` only when their confidence is >= ``threshold``; keep the rest.

        >>> d = Detections([[0, 0, 1, 1]] * 3, [0.9, 0.5, 0.5], [52, 52, 3])
        >>> d.filter_class_confidence([52, 53], 0.8).class_id.tolist()
        [52, 3]
        """
        ids = np.fromiter(class_ids, np.int64)
        return self[~np.isin(self.class_id, ids) | (self.confidence >= threshold)]

    def filter_classes(self, class_ids: Iterable[int]) -> Detections:
        """Keep detections whose class id is in ``class_ids``."""
        return self[np.isin(self.class_id, np.fromiter(class_ids, np.int64))]

    def shifted(self, dx: float, dy: float) -> Detections:
        """Boxes moved by (dx, dy) pixels (e.g. from tile to image coordinates)."""
        shift = np.array([dx, dy, dx, dy], np.float32)
        return Detections(self.xyxy + shift, self.confidence, self.class_id, self.up)

    def scaled(self, factor: float) -> Detections:
        """Boxes multiplied by ``factor`` (e.g. from a resized image back to the original)."""
        return Detections(self.xyxy * np.float32(factor), self.confidence, self.class_id, self.up)

    def clipped(self, width: float, height: float) -> Detections:
        """Boxes clipped to the image ``[0, width] × [0, height]``."""
        xyxy = np.clip(self.xyxy, 0, np.array([width, height, width, height], np.float32))
        return Detections(xyxy, self.confidence, self.class_id, self.up)

    def sorted_by_confidence(self) -> Detections:
        """Highest confidence first."""
        return self[np.argsort(-self.confidence, kind="stable")]

    def with_nms(self, iou_threshold: float = 0.5, class_agnostic: bool = False) -> Detections:
        """Greedy non-maximum suppression, per class unless ``class_agnostic``."""
        keep = nms_indices(
            self.xyxy, self.confidence, None if class_agnostic else self.class_id, iou_threshold
        )
        return self[keep]

    def without_contained(self, threshold: float = 0.6) -> Detections:
        """Drop boxes lying mostly (intersection / smaller area > ``threshold``) inside a more
        confident box, whatever their class: a rank or suit glyph boxed alone inside a whole index."""
        return self[nms_indices(self.xyxy, self.confidence, None, threshold, metric=box_overlap_min)]


def _intersections(
    a: npt.NDArray[np.floating], b: npt.NDArray[np.floating]
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Pairwise intersection areas (N, M) of boxes ``a`` (N, 4) and ``b`` (M, 4), and their areas."""
    a = np.asarray(a, np.float32).reshape(-1, 4)
    b = np.asarray(b, np.float32).reshape(-1, 4)
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), axis=2)
    area_a = np.prod(np.clip(a[:, 2:] - a[:, :2], 0, None), axis=1)
    area_b = np.prod(np.clip(b[:, 2:] - b[:, :2], 0, None), axis=1)
    return inter, area_a, area_b


def box_iou(a: npt.NDArray[np.floating], b: npt.NDArray[np.floating]) -> npt.NDArray[np.float32]:
    """Pairwise IoU of boxes ``a`` (N, 4) and ``b`` (M, 4) → (N, M)."""
    inter, area_a, area_b = _intersections(a, b)
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-9), 0.0).astype(np.float32)


def box_inside(a: npt.NDArray[np.floating], b: npt.NDArray[np.floating]) -> npt.NDArray[np.float32]:
    """Pairwise share of each box of ``a`` (N, 4) that lies inside each box of ``b`` (M, 4) → (N, M).

    >>> box_inside(np.array([[0, 0, 2, 2]]), np.array([[1, 0, 3, 2], [5, 5, 6, 6]])).tolist()
    [[0.5, 0.0]]
    """
    inter, area_a, _ = _intersections(a, b)
    return np.where(area_a[:, None] > 0, inter / np.maximum(area_a[:, None], 1e-9), 0.0).astype(np.float32)


def box_overlap_min(a: npt.NDArray[np.floating], b: npt.NDArray[np.floating]) -> npt.NDArray[np.float32]:
    """Pairwise intersection over the smaller box's area of ``a`` (N, 4) and ``b`` (M, 4) → (N, M)."""
    inter, area_a, area_b = _intersections(a, b)
    smaller = np.minimum(area_a[:, None], area_b[None, :])
    return np.where(smaller > 0, inter / np.maximum(smaller, 1e-9), 0.0).astype(np.float32)


def nms_indices(
    xyxy: npt.NDArray[np.floating],
    scores: npt.NDArray[np.floating],
    class_id: npt.NDArray[np.integer] | None,
    iou_threshold: float,
    metric: Callable[[npt.NDArray[np.floating], npt.NDArray[np.floating]], npt.NDArray[np.float32]]
    | None = None,
) -> npt.NDArray[np.int64]:
    """Indices kept by greedy NMS, highest score first (per class when ``class_id`` is given).

    ``metric`` measures the overlap of two boxes (default :func:`box_iou`)."""
    n = len(scores)
    if n == 0:
        return np.zeros(0, np.int64)
    order = np.argsort(-np.asarray(scores), kind="stable")
    iou = (metric or box_iou)(xyxy, xyxy)
    if class_id is not None:
        same = np.asarray(class_id)[:, None] == np.asarray(class_id)[None, :]
        iou = np.where(same, iou, 0.0)
    suppressed = np.zeros(n, bool)
    keep: list[int] = []
    for i in order:
        if suppressed[i]:
            continue
        keep.append(int(i))
        suppressed |= iou[i] > iou_threshold
    return np.array(keep, np.int64)
