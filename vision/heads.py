"""The heads step of the reader: every crop network is one :class:`CropHead`, told by a
:class:`HeadSpec` what it reads (configuration, not code), and every head's reading is folded into
the card's by one rule, :func:`fuse`.

=================  =======================  ===========================================
head               reads                    gives
=================  =======================  ===========================================
``CLASSIFIER``     the index window         54 cards (and background: 55)
``SUIT``           a wider window (in file) the 4 suits, folded into the suited cards
``ORIENTATION``    the index window         8 sectors of reading direction
``UPRIGHT``        the window turned upright 54 cards, folded into the cards
``JOKER``          a wide window (in file)  not a joker / small / big joker, folded in
=================  =======================  ===========================================

A head reads a batch of crops in one ONNX Runtime run; with ``rotate_tta`` each crop is also read
turned 180° (a card prints its index both ways up) and the log-probabilities are averaged.

>>> SUIT.outputs, UPRIGHT.crop, JOKER.outputs
((4,), 'upright', (3,))
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from vision.crops import CROP_PAD, PAD_KEY, crop_boxes, shift_boxes, upright_crops
from vision.labels import CARD_CLASSES, RANKS, class_id
from vision.runtime import cpu_session


class ClassifierNotFoundError(ValueError):
    """A crop network's ONNX file does not exist."""


class HeadError(ValueError):
    """A crop network's ONNX file that does not fit its role (outputs, metadata)."""


@dataclass(frozen=True)
class HeadSpec:
    """What a crop network is: its ``role`` (for messages), the output sizes it may have (and what
    they are, ``outputs_are``), the window it reads (``crop``: the box's, or the box's turned upright
    by the reading direction), and whether the window's pad is stored in the file (``pad_in_file``:
    :data:`~vision.crops.PAD_KEY`) rather than :data:`~vision.crops.CROP_PAD`."""

    role: str
    outputs: tuple[int, ...]
    outputs_are: str
    crop: Literal["box", "upright"] = "box"
    pad_in_file: bool = False


CLASSIFIER = HeadSpec("classifier", (54, 55), "54 cards, or 55 with background")
SUIT = HeadSpec("suit head", (4,), "4 suits", pad_in_file=True)
ORIENTATION = HeadSpec("orientation head", (8,), "8 sectors")
UPRIGHT = HeadSpec("upright head", (54,), "54 cards", crop="upright")
#: The joker head reads a window wide enough to see the art around a corner mark (a joker's mark
#: has no standard form, its face is a picture) and says whether the box is a joker's, and which.
JOKER = HeadSpec("joker head", (3,), "not a joker, small joker, big joker", pad_in_file=True)

#: The joker head's class of each of the 55 classes (54 cards and background): 0 not a joker,
#: 1 the small joker, 2 the big joker.
JOKER_HEAD_LABELS: npt.NDArray[np.int64] = np.zeros(len(CARD_CLASSES) + 1, np.int64)
JOKER_HEAD_LABELS[class_id("SJ")] = 1
JOKER_HEAD_LABELS[class_id("BJ")] = 2


class CropHead:
    """One ONNX crop network (:class:`HeadSpec`), read on the CPU with ONNX Runtime. Raises
    :class:`ClassifierNotFoundError` for a missing file and :class:`HeadError` for a network whose
    outputs (or stored pad) do not fit ``spec``."""

    def __init__(self, path: Path, spec: HeadSpec, threads: int = 0, rotate_tta: bool = False) -> None:
        if not Path(path).is_file():
            raise ClassifierNotFoundError(f"{spec.role} not found: {path}")
        self.session = cpu_session(path, threads)
        first = self.session.get_inputs()[0]
        self.input_name: str = first.name
        self.size = int(first.shape[2])
        self.spec = spec
        self.outputs = int(self.session.get_outputs()[0].shape[-1])
        if self.outputs not in spec.outputs:
            raise HeadError(f"{path}: a {spec.role} outputs {spec.outputs_are}, not {self.outputs}")
        self.pad = CROP_PAD
        if spec.pad_in_file:
            meta = self.session.get_modelmeta().custom_metadata_map
            if PAD_KEY not in meta:
                raise HeadError(f"{path}: no {PAD_KEY!r} in its metadata (models.classifier.write_crop_pad)")
            self.pad = float(meta[PAD_KEY])
        self.rotate_tta = rotate_tta

    def crops(
        self,
        image: npt.NDArray[np.uint8],
        xyxy: npt.NDArray[np.float32],
        up: npt.NDArray[np.float32] | None = None,
        shift: tuple[float, float] = (0.0, 0.0),
    ) -> npt.NDArray[np.float32]:
        """The windows this head reads around ``xyxy`` (moved by ``shift`` times their long side)."""
        if shift != (0.0, 0.0):
            xyxy = shift_boxes(xyxy, *shift)
        if self.spec.crop == "upright":
            if up is None:
                raise ValueError(f"the {self.spec.role} needs the boxes' reading directions")
            return upright_crops(image, xyxy, up, self.size, self.pad)
        return crop_boxes(image, xyxy, self.size, self.pad)

    def log_probabilities(self, views: list[npt.NDArray[np.float32]]) -> npt.NDArray[np.float32]:
        """Mean log-softmax over ``views`` of the same N crops (one batched run), with their 180°
        turns when ``rotate_tta``."""
        if self.rotate_tta:
            views = views + [np.ascontiguousarray(v[:, :, ::-1, ::-1]) for v in views]
        (logits,) = self.session.run(None, {self.input_name: np.concatenate(views)})
        z: npt.NDArray[np.float32] = log_softmax(logits).reshape(len(views), len(views[0]), -1).mean(0)
        return z

    def probabilities(self, crops: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Probabilities (N, outputs) of crops (N, 3, size, size)."""
        if len(crops) == 0:
            return np.zeros((0, self.outputs), np.float32)
        return softmax(self.log_probabilities([crops]))

    def box_probabilities(
        self,
        image: npt.NDArray[np.uint8],
        xyxy: npt.NDArray[np.float32],
        up: npt.NDArray[np.float32] | None = None,
    ) -> npt.NDArray[np.float32]:
        """Probabilities (N, outputs) of the boxes of ``image``. An upright head needs ``up``; its rows
        whose direction is unknown are uniform (they fold in nothing)."""
        if self.spec.crop != "upright":
            return self.probabilities(self.crops(image, xyxy))
        if up is None:
            raise ValueError(f"the {self.spec.role} needs the boxes' reading directions")
        q = np.full((len(xyxy), self.outputs), 1 / self.outputs, np.float32)
        known = np.isfinite(up).all(1)
        if known.any():
            q[known] = self.probabilities(self.crops(image, xyxy[known], up[known]))
        return q


def fuse(p: npt.NDArray[np.float32], q: npt.NDArray[np.floating], weight: float) -> npt.NDArray[np.float32]:
    """The one rule by which a head's reading ``q`` (N, K) is folded into card probabilities ``p``
    (N, C ≥ K): each of ``p``'s first K columns is multiplied by its ``q`` to the power ``weight``
    (weighted log-probabilities added), then renormalised to the probability those K held together,
    so the other columns (jokers, background) keep theirs. A suit reading is spread over its 13
    cards first (:func:`suit_columns`).

    >>> p = np.zeros((1, 55), np.float32); p[0, 4], p[0, 7], p[0, 54] = 0.5, 0.3, 0.2   # 6S or 9S?
    >>> q = np.full((1, 54), 0.1 / 52, np.float32); q[0, 4], q[0, 7] = 0.05, 0.85   # upright: 9S
    >>> [round(float(v), 3) for v in fuse(p, q, 1.0)[0, [4, 7, 54]]]
    [0.071, 0.729, 0.2]
    """
    if weight == 0 or len(p) == 0:
        return p
    factors = np.power(np.maximum(q, 1e-6), weight)
    k = factors.shape[1]
    folded = p[:, :k] * factors
    mass = p[:, :k].sum(1, keepdims=True)
    out = p.copy()
    out[:, :k] = folded * mass / np.maximum(folded.sum(1, keepdims=True), 1e-12)
    return out.astype(np.float32)


def suit_columns(q: npt.NDArray[np.floating]) -> npt.NDArray[np.floating]:
    """A suit reading (N, 4) as a reading of the 52 suited cards (each suit's 13 ranks alike).

    >>> suit_columns(np.array([[0.1, 0.2, 0.3, 0.4]])).shape
    (1, 52)
    """
    return np.repeat(q, len(RANKS), axis=1)


def joker_columns(q: npt.NDArray[np.floating]) -> npt.NDArray[np.floating]:
    """A joker head's reading (N, 3) as a reading of the 55 classes: each card that is not a joker,
    and background, takes the "not a joker" probability, each joker its own, so :func:`fuse` keeps
    the classifier's odds between the other cards and moves only the jokers' against them.

    >>> p = np.full((1, 55), 0.4 / 53, np.float32); p[0, 52], p[0, 53] = 0.5, 0.1   # SJ at 0.5
    >>> out = fuse(p, joker_columns(np.array([[0.02, 0.95, 0.03]])), 1.0)   # SJ: 0.475 / (0.475 + 0.003 + 0.008)
    >>> round(float(out[0, 52]), 3), round(float(out[0, 53]), 4)
    (0.977, 0.0062)
    """
    return q[:, JOKER_HEAD_LABELS]


def log_softmax(logits: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    z = logits - logits.max(1, keepdims=True)
    out: npt.NDArray[np.float32] = z - np.log(np.exp(z).sum(1, keepdims=True))
    return out


def softmax(z: npt.NDArray[np.floating]) -> npt.NDArray[np.float32]:
    e = np.exp(z - z.max(1, keepdims=True))
    out: npt.NDArray[np.float32] = (e / e.sum(1, keepdims=True)).astype(np.float32)
    return out
