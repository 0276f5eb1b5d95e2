"""The per-table pipeline: frames → card readings → table states → tricks → a deal log.

:func:`run_pipeline` reads every ``every``-th frame of a source (a full-table reading takes
seconds on a Pi-class CPU, and a play lies on the table for several of them). A sampled frame
that shows the same picture as the last one read (:func:`same_picture`: no block of the frame
changed its mean brightness by more than ``still_threshold`` levels) is not read again: its
reading is the last one's, and it still counts as a vote. The reader is any callable from a BGR
image to card instances (:class:`vision.reader.CardReader` in service, a scripted one in tests).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table import TableGeometry
from edge_app.deal import DealInfo, RecognisedDeal, build_deal
from vision.capture import Frame
from vision.instances import CardInstance
from vision.tracking import TableState, TrickTracker, table_state

ReadCards = Callable[[npt.NDArray[np.uint8]], Sequence[CardInstance]]
THUMB = (48, 36)  # blocks of the still-picture test (width, height)


class PipelineConfigError(ValueError):
    """A pipeline setting out of range (``every`` below 1, a negative threshold)."""


@dataclass(frozen=True)
class PipelineStats:
    """What the pipeline did: frames seen, frames sampled, frames actually read by the reader."""

    frames: int
    sampled: int
    read: int


@dataclass(frozen=True)
class PipelineResult:
    """The recognised deal, the table states of every sampled frame, and the counts."""

    deal: RecognisedDeal
    states: tuple[TableState, ...]
    stats: PipelineStats


def thumbnail(image: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """Block means of the grey image (``THUMB`` blocks), the still-picture test's signature."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    return cv2.resize(grey, THUMB, interpolation=cv2.INTER_AREA).astype(np.float32)


def same_picture(a: npt.NDArray[np.float32] | None, b: npt.NDArray[np.float32], threshold: float) -> bool:
    """Whether two thumbnails show the same picture (every block within ``threshold`` levels).

    >>> z = np.zeros(THUMB[::-1], np.float32)
    >>> same_picture(z, z + 1.0, 2.0), same_picture(z, z + 3.0, 2.0), same_picture(None, z, 2.0)
    (True, False, False)
    """
    return a is not None and float(np.abs(a - b).max()) <= threshold


def run_pipeline(
    frames: Iterable[Frame],
    read: ReadCards,
    geometry: TableGeometry,
    info: DealInfo,
    *,
    every: int = 5,
    inertia: int = 2,
    still_threshold: float = 2.0,
    on_frame: Callable[[Frame, TableState], None] | None = None,
    on_trick: Callable[[RecognisedDeal], None] | None = None,
) -> PipelineResult:
    """Run the pipeline over ``frames`` to their end and build the deal log. ``on_frame`` is called
    with each sampled frame and its table state; ``on_trick`` with the deal so far each time a
    trick is cleared (the live events, :mod:`edge_app.events`).

    Raises :class:`PipelineConfigError` for ``every`` below 1 or a negative ``still_threshold``,
    ``TrackerConfigError`` for ``inertia`` below 1.
    """
    if every < 1:
        raise PipelineConfigError(f"every must be at least 1, got {every}")
    if still_threshold < 0:
        raise PipelineConfigError(f"still_threshold must not be negative, got {still_threshold}")
    tracker = TrickTracker(inertia)
    states: list[TableState] = []
    last_thumb: npt.NDArray[np.float32] | None = None
    last_cards: Sequence[CardInstance] = ()
    n = sampled = nread = 0
    for frame in frames:
        n += 1
        if frame.index % every:
            continue
        sampled += 1
        thumb = thumbnail(frame.image)
        if not same_picture(last_thumb, thumb, still_threshold):
            last_cards = read(frame.image)
            last_thumb = thumb
            nread += 1
        state = table_state(last_cards, geometry, frame.index)
        done = tracker.completed
        tracker.update(state)
        states.append(state)
        if on_trick is not None and tracker.completed > done:
            on_trick(build_deal(tracker.tricks(), (), info))
        if on_frame is not None:
            on_frame(frame, state)
    deal = build_deal(tracker.tricks(), tracker.loose(), info)
    return PipelineResult(deal, tuple(states), PipelineStats(n, sampled, nread))
