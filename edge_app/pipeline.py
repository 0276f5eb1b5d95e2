"""The per-table pipeline: frames → card readings → table states → tricks → a deal log.

:func:`run_pipeline` reads every ``every``-th frame of a source (a full-table reading takes
seconds on a Pi-class CPU, and a play lies on the table for several of them): the first frame, then
each frame at least ``every`` frames after the last one read, so a camera that dropped frames while
the reader was busy (:class:`vision.capture.NewestFrames`) is read from its newest frame. A sampled frame
that shows the same picture as the last one read (:func:`same_picture`: no block of the frame
changed its mean brightness by more than ``still_threshold`` levels) is not read again: its
reading is the last one's, and it still counts as a vote. With ``still_threshold=None`` every
sampled frame goes to the reader (:class:`vision.zones.ZoneReader` makes its own, finer test). The reader is any callable from a BGR
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

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table import TableGeometry
from edge_app.deal import DealInfo, RecognisedDeal, build_deal, hands_played_out
from edge_app.session import TRUMPS, MatchProgress, read_declaration
from engine.rules import get_rule_set
from vision.capture import Frame
from vision.instances import CardInstance
from vision.tracking import Cards, TableState, TrickTracker, table_state

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
    """The recognised deals in order (one per deal the source showed), the table states of every
    sampled frame, and the counts. ``finished_at`` is the index of the frame at which the last deal
    was found finished with the engine accepting it, None if it never was (that deal is then built
    from everything seen); ``stopped`` whether ``stop()`` ended the run before the source did."""

    deals: tuple[RecognisedDeal, ...]
    states: tuple[TableState, ...]
    stats: PipelineStats
    finished_at: int | None = None
    stopped: bool = False

    @property
    def deal(self) -> RecognisedDeal:
        """The last deal (the only one of a single-deal source)."""
        return self.deals[-1]


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


def play_crop(
    image: npt.NDArray[np.uint8],
    geometry: TableGeometry,
    seat: str,
    area: Sequence[tuple[float, float]] | None = None,
) -> bytes:
    """The seat's play zone of ``image`` (``"centre"``: the centre area; ``area``: that polygon of
    the table, mm) as a JPEG (longest side at most :data:`CROP_PX`)."""
    if area is None:
        area = geometry.centre if seat == "centre" else geometry.zones[seat]  # type: ignore[index]
    corners = geometry.table_to_pixel(np.asarray(area, np.float64))
    h, w = image.shape[:2]
    x1, y1 = np.clip(np.floor(corners.min(axis=0)).astype(int), 0, [w, h])
    x2, y2 = np.clip(np.ceil(corners.max(axis=0)).astype(int), 0, [w, h])
    crop: npt.NDArray[np.uint8] = image[y1:y2, x1:x2] if y2 > y1 and x2 > x1 else image
    scale = CROP_PX / max(crop.shape[:2])
    small = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else crop
    ok, data = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, CROP_QUALITY])
    return data.tobytes() if ok else b""


#: Readings with every zone empty that separate two deals once the last deal's hands are played out
#: and what lay after them (the bottom) was seen: the table cleared between deals.
DEAL_GAP = 2


@dataclass
class _DealRun:
    """The deal being followed: its info (trump and level filled in as they are declared), tracker,
    play pictures, and where it stands (finished, hands played out, cleared for the next deal)."""

    number: int
    info: DealInfo
    inertia: int
    tracker: TrickTracker = field(init=False)
    crops: dict[tuple[int, str], bytes] = field(default_factory=dict)
    #: the latest frame (and its calibration) that showed each play as the tracker holds it; its
    #: picture (:func:`play_crop`) is made when the deal is built (:meth:`pictures`), not at every frame
    shown: dict[tuple[int, str], tuple[npt.NDArray[np.uint8], TableGeometry]] = field(default_factory=dict)
    #: the last deal :func:`build_deal` made and what it was made of (tricks, loose cards, info)
    last_built: tuple[Any, RecognisedDeal] | None = None
    finished: RecognisedDeal | None = None
    finished_at: int | None = None
    counted: int = 0  # the tracker's cleared tricks when the hands were last counted
    played_out: bool = False
    after_seen: bool = False  # cards seen on the table since the hands were played out
    gap: int = 0  # readings with every zone empty since then
    declared_by: str | None = None
    level_doubt: str | None = None
    started: bool = False  # a trick (not a declaration) was laid
    centre_votes: Counter[Cards] = field(default_factory=Counter)  # since the last clear
    centre_seen: dict[Cards, npt.NDArray[np.uint8]] = field(default_factory=dict)  # a frame of each
    centre: dict[int, Cards] = field(default_factory=dict)  # trick → centre seen meanwhile

    def see_centre(self, state: TableState, image: npt.NDArray[np.uint8]) -> None:
        self.centre_votes[state.centre] += 1
        self.centre_seen[state.centre] = image

    def cleared(
        self, trick: int, state: TableState, image: npt.NDArray[np.uint8], geometry: TableGeometry
    ) -> None:
        """Trick ``trick`` was cleared at ``state``: keep the centre read most often while it lay on
        the table (the point cards the defenders had won before it) with a picture of it, and count
        afresh from ``state``."""
        if self.centre_votes:
            cards = max(self.centre_votes.items(), key=lambda kv: kv[1])[0]
            self.centre[trick] = cards
            self.crops[(trick, "centre")] = play_crop(self.centre_seen[cards], geometry, "centre")
        self.centre_votes, self.centre_seen = Counter(), {}
        self.see_centre(state, image)

    def __post_init__(self) -> None:
        self.tracker = TrickTracker(self.inertia)

    def over(self, state: TableState) -> bool:
        """Whether ``state`` (not fed yet) starts the next deal: the hands were played out, the
        bottom lay on the table after them (turned up at once: at least half its cards seen in one
        reading, in the zones or loose; a stray index the last trick's clearing left is not it), the
        table was then empty for :data:`DEAL_GAP` readings, and now a zone holds cards."""
        if not self.played_out:
            return False
        if not self.after_seen:
            seen = sum(len(cards) for cards in state.zones.values()) + len(state.loose)
            self.after_seen = seen >= max(1, get_rule_set(self.info.rules).bottom_size // 2)
            return False
        if state.empty():
            self.gap += 1
            return False
        if self.gap >= DEAL_GAP:
            return True
        self.gap = 0
        return False

    def declaration(self, rules_decks: int) -> bool:
        """Called when the tracker cleared its first trick before the deal started: if that "trick"
        was one seat showing a declaration (:func:`edge_app.session.read_declaration`), take its
        trump and level, forget it and start tracking afresh. The level card shown is the deal's
        level even against the one the match expected (the outcome before may have been misread):
        the disagreement is kept for a referee (:attr:`RecognisedDeal.level_doubt`). A deal whose
        trump the operator gave reads no declaration: cards shown and taken back before its first
        lead are not allowed to change the trump and level it was given."""
        first = self.tracker.tricks()[0]
        given = self.info.trump is not None
        shown = len(first.plays) == 1 and not given
        read = read_declaration(first.plays[0].cards, None, rules_decks) if shown else None
        if read is None:
            self.started = True
            return False
        trump, level = read
        if level is not None and self.info.level is not None and level != self.info.level:
            self.level_doubt = (
                f"the level card shown ({level}) is not the level the match expected ({self.info.level})"
            )
        elif level is None or self.info.level == level:
            self.level_doubt = None
        self.info = replace(self.info, trump=trump, level=level or self.info.level)
        self.declared_by = first.plays[0].seat
        self.tracker = TrickTracker(self.inertia)
        self.crops, self.shown = {}, {}
        return True

    def pictures(self) -> dict[tuple[int, str], bytes]:
        """Each play's picture (and each centre's), those of the frames shown since last made."""
        for (trick, seat), (image, table) in self.shown.items():
            self.crops[(trick, seat)] = play_crop(image, table, seat)
        self.shown = {}
        return self.crops

    def build(self, so_far: bool = False) -> RecognisedDeal:
        """The deal as seen (the finished one once there is one); a trump nobody was seen declaring
        is inferred from the play: the one that fits it best (:func:`_implausibility`; ties go to the first of
        ``S H D C NT``)."""
        if self.finished is not None:
            return self.finished
        tricks = self.tracker.tricks()
        loose = () if so_far else self.tracker.loose()
        info = replace(self.info, level=self.info.level or DEFAULT_LEVEL)
        inferred = info.trump is None
        key = (tuple(tricks), tuple(loose), info, so_far)
        if self.last_built is not None and self.last_built[0] == key:
            deal = self.last_built[1]  # nothing seen since: the same deal
        elif inferred:
            deal = min(
                (build_deal(tricks, loose, replace(info, trump=t), so_far=so_far) for t in TRUMPS),
                key=_implausibility,
            )
        else:
            deal = build_deal(tricks, loose, info, so_far=so_far)
        self.last_built = (key, deal)
        # the tracker's trick numbers, as the log numbers them past the tricks nobody saw
        crops = {(deal.log_trick(t), seat): jpeg for (t, seat), jpeg in self.pictures().items()}
        return replace(
            deal,
            crops=crops,
            centre=tuple(
                sorted(((deal.log_trick(t), c) for t, c in self.centre.items()), key=lambda tc: tc[0])
            ),
            number=self.number,
            trump_inferred=inferred,
            declared_by=self.declared_by,
            level_doubt=self.level_doubt,
        )


def run_pipeline(
    frames: Iterable[Frame],
    read: ReadCards,
    geometry: TableGeometry | Callable[[], TableGeometry],
    info: DealInfo,
    *,
    every: int = 5,
    inertia: int = 2,
    still_threshold: float | None = 2.0,
    on_frame: Callable[[Frame, TableState], None] | None = None,
    on_trick: Callable[[RecognisedDeal], None] | None = None,
    on_finished: Callable[[RecognisedDeal], None] | None = None,
    on_deal_end: Callable[[RecognisedDeal], None] | None = None,
    stop: Callable[[], bool] | None = None,
    new_game: Callable[[], bool] | None = None,
) -> PipelineResult:
    """Run the pipeline over ``frames`` to their end (or until ``stop()`` is true before a frame is
    taken) and build the deal logs. ``on_frame`` is called with each sampled frame and its table
    state; ``on_trick`` with the deal so far each time a trick is cleared (the live events,
    :mod:`edge_app.events`) until the deal is finished; ``on_finished`` once per deal, with the
    finished deal the engine accepts, at the frame it is first seen; ``on_deal_end`` with each deal
    the next one ended (see the module docstring). ``info`` is the first deal's; each later deal's
    level and dealer come from the outcome before it (:class:`edge_app.session.MatchProgress`),
    unless ``new_game()``, asked as each deal ends, says the table has begun a new game (an event's
    next round: :class:`edge_app.client.GameWatch`): the next deal then starts from 2–2, its dealer
    as the deal shows. ``geometry`` may be a function giving the table's calibration at each frame (calibrated again
    after the camera moved: :class:`calibration.markers.CameraWatch`).

    Raises :class:`PipelineConfigError` for ``every`` below 1 or a negative ``still_threshold``,
    ``TrackerConfigError`` for ``inertia`` below 1, ``UnknownRuleSetError`` for an unknown rule set.
    """
    if every < 1:
        raise PipelineConfigError(f"every must be at least 1, got {every}")
    if still_threshold is not None and still_threshold < 0:
        raise PipelineConfigError(f"still_threshold must not be negative, got {still_threshold}")
    rules = get_rule_set(info.rules)  # an unknown rule set fails here, before any frame is read
    run = _DealRun(0, info, inertia)
    match = MatchProgress.start(info.rules, info.level, info.dealer)
    deals: list[RecognisedDeal] = []
    states: list[TableState] = []
    last_thumb: npt.NDArray[np.float32] | None = None
    last_cards: Sequence[CardInstance] = ()
    n = sampled = nread = 0
    last_sampled: int | None = None
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
        if last_sampled is not None and frame.index - last_sampled < every:
            continue
        last_sampled = frame.index
        sampled += 1
        thumb = thumbnail(frame.image) if still_threshold is not None else None
        if thumb is None or not same_picture(last_thumb, thumb, still_threshold or 0.0):
            last_cards = read(frame.image)
            last_thumb = thumb
            nread += 1
        table = geometry() if callable(geometry) else geometry
        state = table_state(last_cards, table, frame.index)
        if run.over(run.tracker.in_play(state)):
            ended = run.build()
            deals.append(ended)
            if on_deal_end is not None:
                on_deal_end(ended)
            match = match.after(ended.log, _outcome_of(ended), level_told=run.info.level is not None)
            if new_game is not None and new_game():
                match = MatchProgress.new_game(info.rules)
            dealer = match.dealer
            run = _DealRun(len(deals), DealInfo(info.rules, match.level_for(dealer), None, dealer), inertia)
        tracker = run.tracker
        done = tracker.completed
        tracker.update(state)
        states.append(state)
        if not run.started and tracker.completed > done and run.declaration(rules.decks):
            tracker = run.tracker
            done = 0
        if tracker.completed > done:
            run.cleared(tracker.completed, state, frame.image, table)
        else:
            run.see_centre(state, frame.image)
        for seat, cards in tracker.in_play(state).zones.items():
            play = tracker.current(seat) if cards else None
            if play is not None and play.cards == cards:
                run.shown[(tracker.completed + 1, seat)] = (frame.image, table)
        if run.finished is None:
            if tracker.completed > done:
                run.started = True
                if on_trick is not None:
                    on_trick(run.build(so_far=True))
            if tracker.completed != run.counted:  # a clear, or a clear undone (a misread empty table)
                run.counted = tracker.completed
                played_out = hands_played_out(tracker.tricks()[: run.counted], info.rules)
                if played_out != run.played_out:
                    run.played_out, run.after_seen, run.gap = played_out, False, 0
            if run.played_out:
                deal = run.build()
                if deal.log.finished and deal.problem is None:
                    deal = replace(deal, finished_at=frame.index)
                    run.finished, run.finished_at = deal, frame.index
                    if on_finished is not None:
                        on_finished(deal)
        if on_frame is not None:
            on_frame(frame, state)
    if not deals or run.tracker.tricks() or run.finished is not None:
        deals.append(run.build())
    return PipelineResult(
        tuple(deals),
        tuple(states),
        PipelineStats(n, sampled, nread),
        finished_at=run.finished_at if len(deals) == run.number + 1 else None,
        stopped=stopped,
    )


def _implausibility(deal: RecognisedDeal) -> tuple[int, int, int]:
    """How badly a trump fits what was seen: a log the engine refuses, then the tricks the decoding
    had to question (a wrong trump moves who won, so who leads next), then the rules broken."""
    if deal.result is None:
        return (1, 0, 0)
    return (0, len(deal.doubtful), len(deal.result["violations"]))


#: The level a deal is scored at when neither the operator nor a declaration told it.
DEFAULT_LEVEL = "2"


def _outcome_of(deal: RecognisedDeal) -> dict[str, Any] | None:
    """The ``score`` result of a finished deal whose outcome the engine settles, else None."""
    result = deal.result
    if not deal.log.finished or result is None:
        return None
    return result if isinstance(result.get("outcome"), dict) else None
