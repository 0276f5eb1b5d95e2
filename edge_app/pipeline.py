"""The per-table pipeline: frames → card readings → table states → tricks → a deal log.

:func:`run_pipeline` reads every ``every``-th frame of a source (a full-table reading takes
seconds on a Pi-class CPU, and a play lies on the table for several of them). A sampled frame
that shows the same picture as the last one read (:func:`same_picture`: no block of the frame
changed its mean brightness by more than ``still_threshold`` levels) is not read again: its
reading is the last one's, and it still counts as a vote. The reader is any callable from a BGR
image to card instances (:class:`vision.reader.CardReader` in service, a scripted one in tests).

Each play's picture is kept (:func:`play_crop`: its zone from the last reading that read the play
as decided, a small JPEG) so that an alert can show the referee the cards (:mod:`edge_app.events`).

The deal is over as soon as the recognised log is finished and the engine accepts it (every hand
played out, a full bottom, every card of the decks): that log is the pipeline's deal from then on,
handed once to ``on_finished`` (the table service posts it at once), and what the camera sees
later (the bottom picked up, the next deal's cards) no longer changes it. Frames are still taken
to the source's end, or until ``stop()`` says so: it is asked before each frame is taken (the
service's SIGTERM), so a stop never leaves a frame half read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table import TableGeometry
from edge_app.deal import DealInfo, RecognisedDeal, build_deal, hands_played_out
from engine.rules import get_rule_set
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
    """The recognised deal, the table states of every sampled frame, and the counts.
    ``finished_at`` is the index of the frame at which the deal was found finished with the engine
    accepting it (then ``deal`` is that deal), None if it never was (``deal`` is then built from
    everything seen); ``stopped`` whether ``stop()`` ended the run before the source did."""

    deal: RecognisedDeal
    states: tuple[TableState, ...]
    stats: PipelineStats
    finished_at: int | None = None
    stopped: bool = False


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


#: Longest side of a play's picture, pixels, and its JPEG quality: enough to read the cards by eye.
CROP_PX = 480
CROP_QUALITY = 75


def play_crop(image: npt.NDArray[np.uint8], geometry: TableGeometry, seat: str) -> bytes:
    """The seat's play zone of ``image`` as a JPEG (longest side at most :data:`CROP_PX`)."""
    corners = geometry.table_to_pixel(np.asarray(geometry.zones[seat], np.float64))  # type: ignore[index]
    h, w = image.shape[:2]
    x1, y1 = np.clip(np.floor(corners.min(axis=0)).astype(int), 0, [w, h])
    x2, y2 = np.clip(np.ceil(corners.max(axis=0)).astype(int), 0, [w, h])
    crop: npt.NDArray[np.uint8] = image[y1:y2, x1:x2] if y2 > y1 and x2 > x1 else image
    scale = CROP_PX / max(crop.shape[:2])
    small = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else crop
    ok, data = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, CROP_QUALITY])
    return data.tobytes() if ok else b""


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
    on_finished: Callable[[RecognisedDeal], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> PipelineResult:
    """Run the pipeline over ``frames`` to their end (or until ``stop()`` is true before a frame is
    taken) and build the deal log. ``on_frame`` is called with each sampled frame and its table
    state; ``on_trick`` with the deal so far each time a trick is cleared (the live events,
    :mod:`edge_app.events`) until the deal is finished; ``on_finished`` once, with the finished deal
    the engine accepts, at the frame it is first seen (see the module docstring).

    Raises :class:`PipelineConfigError` for ``every`` below 1 or a negative ``still_threshold``,
    ``TrackerConfigError`` for ``inertia`` below 1, ``UnknownRuleSetError`` for an unknown rule set.
    """
    if every < 1:
        raise PipelineConfigError(f"every must be at least 1, got {every}")
    if still_threshold < 0:
        raise PipelineConfigError(f"still_threshold must not be negative, got {still_threshold}")
    tracker = TrickTracker(inertia)
    get_rule_set(info.rules)  # an unknown rule set fails here, before any frame is read
    states: list[TableState] = []
    last_thumb: npt.NDArray[np.float32] | None = None
    last_cards: Sequence[CardInstance] = ()
    n = sampled = nread = 0
    finished: RecognisedDeal | None = None
    crops: dict[tuple[int, str], bytes] = {}
    finished_at: int | None = None
    counted = 0  # the tracker's cleared tricks when the hands were last counted
    played_out = False
    stopped = False
    source = iter(frames)
    while True:
        if stop is not None and stop():
            stopped = True
            break
        frame = next(source, None)
        if frame is None:
            break
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
        for seat, cards in state.zones.items():
            play = tracker.current(seat) if cards else None
            if play is not None and play.cards == cards:
                crops[(tracker.completed + 1, seat)] = play_crop(frame.image, geometry, seat)
        if finished is None:
            if on_trick is not None and tracker.completed > done:
                on_trick(replace(build_deal(tracker.tricks(), (), info, so_far=True), crops=crops))
            if tracker.completed != counted:  # a clear, or a clear undone (a misread empty table)
                counted = tracker.completed
                played_out = hands_played_out(tracker.tricks()[:counted], info.rules)
            if played_out:
                deal = replace(build_deal(tracker.tricks(), tracker.loose(), info), crops=crops)
                if deal.log["finished"] and deal.problem is None:
                    finished, finished_at = deal, frame.index
                    if on_finished is not None:
                        on_finished(deal)
        if on_frame is not None:
            on_frame(frame, state)
    deal = (
        finished
        if finished is not None
        else replace(build_deal(tracker.tricks(), tracker.loose(), info), crops=crops)
    )
    return PipelineResult(
        deal, tuple(states), PipelineStats(n, sampled, nread), finished_at=finished_at, stopped=stopped
    )
