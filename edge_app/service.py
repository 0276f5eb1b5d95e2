"""The table service around the pipeline: the deal log kept on disk as it grows, live events and
the finished deal sent to the scoreboard.

* After every cleared trick the log so far is written to ``log_out`` (a temporary file renamed
  over the old one, so a crash mid-write leaves the previous log whole).
* Live events (:mod:`edge_app.events`) and the finished deal go through a
  :class:`edge_app.client.ScoreboardClient`: every post has its idempotency key from the moment it
  is queued; a post that fails on the network stays queued and is sent again after the next trick
  and at the end, so an outage during the deal loses nothing that the service is still running for.
  With ``keys`` (:class:`edge_app.outbox.DealKeys`) each post's key is derived from the deal and the
  post's place in it, so a restarted run that reads the same film again regenerates the same keys:
  with the client's durable outbox, what was queued before is neither queued nor stored twice.
* The deal is posted **when it ends**, not when the source does: at the first frame where the
  recognised log is finished and the engine accepts it (:mod:`edge_app.pipeline`), exactly once,
  and the frames go on being read. At the end, a finished log not posted yet (one the engine
  refuses: the scoreboard then answers 422 and raises an alert for a referee) is posted; an
  unfinished one never is.
* A health report (``{"type": "health", "status": "ok", "fps", "camera", "message"}``) goes to the
  scoreboard with the first frame read and then every :data:`HEALTH_EVERY_S` seconds while frames
  are read: the scoreboard keeps its time as the table's last reading and shows the table online.
  It is sent best effort (``Poster.beat``), never through the outbox: a stale report is worth
  nothing after a restart, and one must not pass the posts queued before it.
* Falling behind the camera (:class:`LagWatch`): a live camera is read from its newest frame
  (:class:`vision.capture.NewestFrames`), so when reading takes longer than the camera waits the
  frames in between are dropped. Once more than :data:`BEHIND_GAP_S` of camera time passes between
  two frames taken, the service says so (a ``degraded`` health report and ``on_lag``, the ``run``
  command's warning line) and goes on from the newest frame; after :data:`CAUGHT_UP_S` without such
  a gap it says it has caught up (``ok``).
* ``stop()`` (the ``run`` command's SIGTERM / SIGINT) ends the run at the next frame boundary like
  the source's end, except that the last posts get at most :data:`STOP_FLUSH_S` seconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from calibration.table import TableGeometry
from edge_app.config import TableConfig
from edge_app.deal import DealInfo, RecognisedDeal
from edge_app.events import EventStream, event_body
from edge_app.outbox import DealKeys
from edge_app.pipeline import PipelineStats, ReadCards, run_pipeline
from engine.deal_log import DealLog
from vision.capture import Frame
from vision.tracking import TableState

#: Seconds between two health reports to the scoreboard (the first goes with the first frame): the
#: table shows online, and when it last read the table, while nothing else happens.
HEALTH_EVERY_S = 30.0
#: How often (in frames) the corner markers are looked for, to see that the camera moved.
WATCH_EVERY = 10
#: Camera seconds between two frames taken beyond which the service has fallen behind: the frames
#: between were never looked at, and a card laid and taken up in that time would be missed.
BEHIND_GAP_S = 1.0
#: Camera seconds without such a gap after which it has caught up.
CAUGHT_UP_S = 10.0


@dataclass
class LagWatch:
    """Whether the service keeps up with its camera, from the frames it takes (their camera
    timestamps and indices; see the module docstring).

    A camera at 10 fps; the reader misses frames 2 to 14, then takes every frame again:

    >>> from types import SimpleNamespace as F
    >>> lag = LagWatch()
    >>> taken = [0, 1, *range(15, 130)]
    >>> [(i, c) for i in taken if (c := lag.see(F(index=i, timestamp=i / 10))) is not None]
    [(15, True), (115, False)]
    >>> lag.dropped, lag.episodes
    (13, 1)
    """

    gap_s: float = BEHIND_GAP_S
    calm_s: float = CAUGHT_UP_S
    behind: bool = False
    dropped: int = 0  # frames the camera gave that were never taken
    episodes: int = 0  # times it fell behind
    _last: tuple[int, float] | None = None
    _gap_at: float = 0.0  # camera time of the last gap

    def see(self, frame: Any) -> bool | None:
        """Take in the next frame taken: True when the service has just fallen behind, False when it
        has just caught up, None when nothing changed."""
        change = None
        if self._last is not None:
            index, at = self._last
            self.dropped += max(0, frame.index - index - 1)
            if frame.timestamp - at > self.gap_s:
                self._gap_at = frame.timestamp
                if not self.behind:
                    self.behind, change = True, True
                    self.episodes += 1
            elif self.behind and frame.timestamp - self._gap_at >= self.calm_s:
                self.behind, change = False, False
        self._last = (frame.index, frame.timestamp)
        return change

    def said(self, behind: bool, frame: Any) -> str:
        """What the service says when it has just fallen behind (or caught up) at ``frame``."""
        if behind:
            return (
                f"falling behind the camera at frame {frame.index}: {self.dropped} frames not read "
                "so far; reading on from the newest frame"
            )
        return f"caught up with the camera at frame {frame.index}"


class Watch(Protocol):
    """What :func:`watched` asks of a camera watch (:class:`calibration.markers.CameraWatch`): the
    table's calibration now (``geometry``, new after each of its ``recalibrations``)."""

    moved: bool
    offset_px: float
    geometry: TableGeometry
    recalibrations: int

    def check(self, image: Any) -> str: ...


def watched(
    frames: Iterable[Frame],
    watch: Watch,
    on_change: Callable[[bool, Frame], None],
    check_every: int = WATCH_EVERY,
) -> Iterator[Frame]:
    """``frames`` without those seen while the camera has moved: reading pauses rather than guess
    with zones that no longer lie where the cards are, and goes on once the markers are back in
    place. ``on_change(moved, frame)`` is told each time that changes.

    >>> from types import SimpleNamespace
    >>> class W:
    ...     moved, offset_px, states = False, 0.0, iter([False, True, True, False])
    ...     def check(self, image):
    ...         self.moved = next(self.states)
    ...         return "moved" if self.moved else "ok"
    >>> fs = [SimpleNamespace(index=i, image=None) for i in range(8)]
    >>> [f.index for f in watched(fs, W(), lambda moved, f: print("moved" if moved else "back", f.index), 2)]
    moved 2
    back 6
    [0, 1, 6, 7]
    """
    for frame in frames:
        if frame.index % check_every == 0:
            before = watch.moved
            watch.check(frame.image)
            if watch.moved != before:
                on_change(watch.moved, frame)
        if not watch.moved:
            yield frame


#: Seconds the last posts may take after a stop (SIGTERM): a service asked to stop must stop soon;
#: what is not sent by then is reported as unsent (the log is on disk).
STOP_FLUSH_S = 5.0


class Poster(Protocol):
    """What the service needs of a scoreboard client (:class:`edge_app.client.ScoreboardClient`):
    each call queues (if anything) and tries to send the queue, for at most ``within`` seconds when
    given; True when nothing is left unsent. ``key`` (passed only when the service has
    :class:`~edge_app.outbox.DealKeys`) is the post's idempotency key."""

    def event(
        self, event: dict[str, object], within: float | None = None, key: str | None = None
    ) -> bool: ...

    def deal(self, log: DealLog, within: float | None = None, key: str | None = None) -> bool: ...

    def flush(self, within: float | None = None) -> bool: ...

    def beat(self, health: dict[str, object], within: float | None = None) -> bool: ...


@dataclass
class ServiceResult:
    """The recognised deal (the last one), the pipeline's counts, and what happened to the
    scoreboard posts; ``deals`` every deal the source showed, in order."""

    deal: RecognisedDeal
    stats: PipelineStats
    events: int = 0  # events handed to the client
    deal_posted: bool = False  # the finished deal(s) were handed to the client, once each, and went out
    all_sent: bool = True  # nothing is left in the client's queue
    alerts: list[str] = field(default_factory=list)  # the alerts raised, as one line each
    posted_at: int | None = (
        None  # the frame at which the last deal posted on time was (None: at the end, or never)
    )
    stopped: bool = False  # stop() ended the run before the source did
    deals: tuple[RecognisedDeal, ...] = ()
    paused_frames: int = 0  # frames not read because the camera had moved (CameraWatch)
    dropped_frames: int = 0  # frames the camera gave while the service was busy (LagWatch)
    fell_behind: int = 0  # times the service fell behind the camera


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed over it."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def run_service(
    frames: Iterable[Frame],
    read: ReadCards,
    geometry: TableGeometry,
    info: DealInfo,
    config: TableConfig | None = None,
    *,
    client: Poster | None = None,
    on_frame: Callable[[Frame, TableState], None] | None = None,
    stop: Callable[[], bool] | None = None,
    keys: DealKeys | None = None,
    camera: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    watch: Watch | None = None,
    on_camera: Callable[[bool, Frame], None] | None = None,
    new_game: Callable[[], bool] | None = None,
    on_lag: Callable[[bool, Frame, LagWatch], None] | None = None,
    lag: LagWatch | None = None,
) -> ServiceResult:
    """Run the pipeline over ``frames`` (until they end or ``stop()``) as the table's configuration
    says (``config``, whole frames read every 5th by default: how often, the zones' inertia, the
    reading and ``log_out``, kept current);
    send events, and the deal when it is finished, under ``keys`` when given (see the module
    docstring). With ``watch``, frames seen while the camera has moved are not read (:func:`watched`)
    until the markers are back in place or the watch has calibrated the table again in the camera's
    new place (then the pipeline reads with its new geometry); each change is reported to the
    scoreboard as health and to ``on_camera``. ``new_game`` as for
    :func:`edge_app.pipeline.run_pipeline` (the scoreboard's word that the table began an event's next
    round). Falling behind the camera and catching up are reported to the scoreboard as health and
    to ``on_lag(behind, frame, lag)`` (``lag``: a :class:`LagWatch`, by default one with
    :data:`BEHIND_GAP_S` and :data:`CAUGHT_UP_S`)."""
    config = config or TableConfig(read="frame")
    every, inertia, log_out = config.frames_every, config.inertia, config.log_out
    # a frame like the last is not read again (whole frames); the zone reader keeps its own watch
    still_threshold = None if config.read == "zones" else 2.0
    streams: dict[int, EventStream] = {}
    logs: dict[int, DealLog] = {}  # each deal's log as last published
    sent = [0]
    alerts: list[str] = []
    deadline: list[float] = []  # set once stopped: the last posts' time limit

    def within() -> float | None:
        return max(0.0, deadline[0] - time.monotonic()) if deadline else None

    def keys_of(deal: RecognisedDeal) -> DealKeys | None:
        return None if keys is None else keys.of_deal(deal.number)

    def publish(deal: RecognisedDeal, ended: bool = False) -> None:
        logs[deal.number] = deal.log
        if log_out is not None:
            shown = [logs[k].to_json() for k in sorted(logs)]
            write_atomic(log_out, json.dumps(shown[0] if len(shown) == 1 else shown, indent=1))
        dk = keys_of(deal)
        for e in streams.setdefault(deal.number, EventStream()).update(deal, ended=ended):
            if e.type == "alert":
                alerts.append(
                    f"{e.kind} {e.seat or ''} trick {e.trick or '?'}: {e.reasoning}".replace("  ", " ")
                )
            if client is not None:
                body = event_body(e)
                if dk is None:
                    client.event(body, within())
                else:
                    client.event(body, within(), key=dk.event(body))
                sent[0] += 1

    posted: dict[int, bool] = {}  # deals handed to the client: whether each went out at once

    def post(deal: RecognisedDeal) -> None:
        publish(deal)
        if client is not None:
            dk = keys_of(deal)
            if dk is None:
                posted[deal.number] = client.deal(deal.log, within())
            else:
                posted[deal.number] = client.deal(deal.log, within(), key=dk.deal_post())

    def end(deal: RecognisedDeal, ended: bool = True) -> None:
        """A deal the next one (or the source's end) ended: post it if it is finished and not posted
        yet (a log the engine refuses: the scoreboard then raises an alert for a referee), else keep
        its log, its proven violations raised as looks (``ended``: not when a stop cut the run)."""
        if client is not None and deal.number not in posted and deal.log.finished:
            post(deal)
        else:
            publish(deal, ended)

    last_beat: list[float] = []  # when the last health report went out
    sampled = [0]  # frames sampled since

    def health(frame: Frame, state: TableState) -> None:
        sampled[0] += 1
        now = clock()
        if client is not None and (not last_beat or now - last_beat[0] >= HEALTH_EVERY_S):
            body: dict[str, object] = {
                "type": "health",
                "status": "ok",
                "message": f"reading frames; frame {frame.index}",
            }
            if last_beat and now > last_beat[0]:
                body["fps"] = round(every * sampled[0] / (now - last_beat[0]), 2)
            if camera:
                body["camera"] = camera[:100]
            client.beat(body, within())
            last_beat[:] = [now]
            sampled[0] = 0
        if on_frame is not None:
            on_frame(frame, state)

    def tell(status: str, message: str) -> None:
        """A health report of a change (the camera moved or back, reading behind or caught up)."""
        assert client is not None
        body: dict[str, object] = {"type": "health", "status": status, "message": message}
        if camera:
            body["camera"] = camera[:100]
        client.beat(body, within())

    paused = [0]
    moved_at: list[int] = []
    calibrated = [watch.recalibrations if watch is not None else 0]

    def camera_changed(moved: bool, frame: Frame) -> None:
        if moved:
            moved_at[:] = [frame.index]
        else:
            paused[0] += frame.index - moved_at[0] if moved_at else 0
            moved_at.clear()
        again = watch is not None and watch.recalibrations > calibrated[0]
        if watch is not None:
            calibrated[0] = watch.recalibrations
        if client is not None:
            offset = watch.offset_px if watch is not None else 0.0
            if moved:
                message = (
                    f"camera moved (markers {offset:.0f} px off): reading paused until they are back "
                    "in place or lie still in the new place"
                )
            elif again:
                message = f"camera calibrated again from the markers in its new place at frame {frame.index}: reading again"
            else:
                message = f"camera back in place at frame {frame.index}: reading again"
            tell("degraded" if moved else "ok", message)
        if on_camera is not None:
            on_camera(moved, frame)

    last_index = [0]
    lag = lag or LagWatch()

    def counted(source: Iterable[Frame]) -> Iterator[Frame]:
        for frame in source:
            last_index[0] = frame.index
            change = lag.see(frame)
            if change is not None:
                lag_changed(change, frame)
            yield frame

    def lag_changed(behind: bool, frame: Frame) -> None:
        if client is not None:
            tell("degraded" if behind else "ok", lag.said(behind, frame))
        if on_lag is not None:
            on_lag(behind, frame, lag)

    frames = counted(frames)
    if watch is not None:
        frames = watched(frames, watch, camera_changed)
    result = run_pipeline(
        frames,
        read,
        (lambda: watch.geometry) if watch is not None else geometry,
        info,
        every=every,
        inertia=inertia,
        still_threshold=still_threshold,
        on_frame=health,
        on_trick=publish,
        on_finished=post,
        on_deal_end=end,
        stop=stop,
        new_game=new_game,
    )
    if result.stopped:
        deadline.append(time.monotonic() + STOP_FLUSH_S)
    end(result.deal, ended=not result.stopped)
    if moved_at:  # still moved when the source ended
        paused[0] += last_index[0] - moved_at[0] + 1
    out = ServiceResult(
        result.deal,
        result.stats,
        sent[0],
        alerts=alerts,
        stopped=result.stopped,
        deals=result.deals,
        paused_frames=paused[0],
        dropped_frames=lag.dropped,
        fell_behind=lag.episodes,
    )
    if client is not None:
        out.all_sent = client.flush(within())
        out.deal_posted = bool(posted) and (all(posted.values()) or out.all_sent)
        out.posted_at = max((d.finished_at for d in result.deals if d.finished_at is not None), default=None)
    return out
