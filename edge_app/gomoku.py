"""The gomoku table service (``tractorcam run --game gomoku``): the board read frame by frame
(:mod:`vision.gomoku`), the moves found and timed (:mod:`vision.gomoku_track`), the game's log
kept (``games.md``), its result and the clock's overtimes from the rules (:mod:`gomoku.rules`),
and every doubt a look for the referee, with the frame that shows it.

**The clock** starts with the first frame read; each move's seconds run from the one before.
**A long think** (长考) is asked for with a key at the table: a line ``B`` or ``W`` on the service's
standard input (a button wired to the Pi types the same), or, replaying a film, the presses given
with it (``--long-thinks FILE``: ``[{"t": seconds, "colour": "B"}, ...]``). A press counts for that
player's next move.

>>> from vision.gomoku_track import TrackedMove
>>> moves = [TrackedMove(1, "B", "h8", 5.0, 25), TrackedMove(2, "W", "i9", 12.5, 62)]
>>> game_log(moves, start=1.0, presses=[(6.0, "W")], finished=False)["moves"]
[['B', 'h8', 4.0], ['W', 'i9', 7.5]]
>>> game_log(moves, start=1.0, presses=[(6.0, "W")], finished=False)["long_thinks"]
{'B': [], 'W': [2]}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from calibration.table import TableGeometry
from gomoku.log import GomokuLogError
from gomoku.rules import score_log
from vision.capture import Frame
from vision.gomoku import BoardReader, Grid
from vision.gomoku_track import BoardLook, MoveTracker, TrackedMove


def game_log(
    moves: Sequence[TrackedMove], start: float, presses: Sequence[tuple[float, str]], finished: bool
) -> dict[str, Any]:
    """The game's log from the moves as timed (seconds to a tenth), the clock started at ``start``
    and the long-think presses ``(time, colour)``: each counts for that colour's first move after it."""
    out: list[list[Any]] = []
    last = start
    for m in moves:
        out.append([m.colour, m.point, round(max(0.0, m.at - last), 1)])
        last = m.at
    thinks: dict[str, list[int]] = {"B": [], "W": []}
    for t, colour in sorted(presses):
        move = next((m for m in moves if m.colour == colour and m.at > t), None)
        if move is not None and move.number not in thinks[colour]:
            thinks[colour].append(move.number)
    return {"game": "gomoku", "size": 15, "moves": out, "long_thinks": thinks, "finished": finished}


@dataclass
class GomokuResult:
    """The game as followed: its log and score (None when the rules refuse it: ``problem``), the
    moves and looks with their frames, and the counts."""

    log: dict[str, Any]
    result: dict[str, Any] | None
    problem: str | None
    moves: list[TrackedMove]
    looks: list[BoardLook]
    frames: int
    read: int
    busy: int
    grid: Grid | None
    pictures: dict[int, bytes] = field(default_factory=dict)  # frame -> JPEG of the board
    stopped: bool = False
    all_sent: bool = True  # nothing left unsent to the scoreboard


def board_picture(image: npt.NDArray[np.uint8], longest: int = 800) -> bytes:
    """A frame as a JPEG for a look's evidence, at most ``longest`` px on its longer side."""
    h, w = image.shape[:2]
    k = min(1.0, longest / max(h, w))
    small = cv2.resize(image, (int(w * k), int(h * k)), interpolation=cv2.INTER_AREA) if k < 1 else image
    ok, data = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 85])
    return bytes(data) if ok else b""


def run_gomoku_pipeline(
    frames: Iterable[Frame],
    geometry: TableGeometry,
    *,
    presses: Callable[[], Sequence[tuple[float, str]]] = lambda: (),
    every: int = 1,
    on_move: Callable[[TrackedMove, dict[str, Any]], None] | None = None,
    on_look: Callable[[BoardLook, bytes], None] | None = None,
    on_frame: Callable[[Frame], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> GomokuResult:
    """Follow a game over ``frames`` (each ``every``-th read): ``on_move`` with each move and the log
    so far, ``on_look`` with each look and its picture. The game ends at a win or a draw (a stone
    laid after it is a look); the source's end or ``stop()`` leaves it unfinished."""
    reader = BoardReader(geometry)
    tracker = MoveTracker()
    pictures: dict[int, bytes] = {}
    start: float | None = None
    n = nread = busy = 0
    result: dict[str, Any] | None = None
    problem: str | None = None
    over = False
    stopped = False
    log: dict[str, Any] = game_log([], 0.0, (), False)
    last = None
    for frame in frames:
        if stop is not None and stop():
            stopped = True
            break
        n += 1
        if on_frame is not None:
            on_frame(frame)
        if last is not None and frame.index - last < every:
            continue
        last = frame.index
        if start is None:
            start = frame.timestamp
        reading = reader.read(frame.image)
        nread += 1
        busy += reading.busy
        for event in tracker.update(reading, frame.timestamp, frame.index):
            if isinstance(event, BoardLook) or over:
                look = event if isinstance(event, BoardLook) else _after_end(event, frame)
                if not isinstance(event, BoardLook):
                    tracker.looks.append(look)
                pictures[look.frame] = board_picture(frame.image)
                if on_look is not None:
                    on_look(look, pictures[look.frame])
                continue
            log = game_log(tracker.moves, start, presses(), False)
            try:
                result, problem = score_log(log), None
            except GomokuLogError as exc:
                result, problem = None, str(exc)
            if result is not None and (result["winner"] is not None or result["draw"]):
                over = True
                log["finished"] = True
            if on_move is not None:
                on_move(event, log)
    moves = [m for m in tracker.moves if not over or m.number <= len(log["moves"])]
    log = game_log(moves, start or 0.0, presses(), over)
    try:
        result, problem = score_log(log), None
    except GomokuLogError as exc:
        result, problem = None, str(exc)
    return GomokuResult(
        log, result, problem, moves, tracker.looks, n, nread, busy, reader.grid, pictures, stopped
    )


def _after_end(move: TrackedMove, frame: Frame) -> BoardLook:
    return BoardLook(
        "after_end",
        f"a {move.colour} stone on {move.point} after the game ended",
        (move.point,),
        move.at,
        frame.index,
    )


def read_presses(data: Any) -> list[tuple[float, str]]:
    """Long-think presses from their file's JSON (``[{"t", "colour"}]``); ``ValueError`` (one
    line) for anything else."""
    if not isinstance(data, list):
        raise ValueError('long thinks: a list of {"t": seconds, "colour": "B" or "W"}')
    out = []
    for k, item in enumerate(data, start=1):
        if not isinstance(item, dict) or item.get("colour") not in ("B", "W"):
            raise ValueError(f'long thinks, press {k}: {{"t": seconds, "colour": "B" or "W"}}')
        t = item.get("t")
        if isinstance(t, bool) or not isinstance(t, int | float) or not 0 <= t < 1e6:
            raise ValueError(f"long thinks, press {k}: t must be seconds from the clock's start")
        out.append((float(t), str(item["colour"])))
    return out


class KeyPresses:
    """Long-think presses typed at the table: each line ``B`` or ``W`` on ``stream`` (standard input;
    a button wired to the Pi types the same), timed with the newest frame's time. Read on a thread
    of its own; anything else typed is ignored."""

    def __init__(self, stream: Any) -> None:
        import threading

        self.now = 0.0
        self.pressed: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: Any) -> None:
        try:
            for line in stream:
                colour = str(line).strip().upper()
                if colour in ("B", "W"):
                    with self._lock:
                        self.pressed.append((self.now, colour))
        except (OSError, ValueError):  # standard input closed under us
            return

    def __call__(self) -> list[tuple[float, str]]:
        with self._lock:
            return list(self.pressed)


def run_gomoku_service(
    frames: Iterable[Frame],
    geometry: TableGeometry,
    *,
    presses: Callable[[], Sequence[tuple[float, str]]] = lambda: (),
    log_out: Any = None,
    every: int = 1,
    on_frame: Callable[[Frame], None] | None = None,
    on_look: Callable[[BoardLook, bytes], None] | None = None,
    stop: Callable[[], bool] | None = None,
    client: Any = None,
    keys: Any = None,
) -> GomokuResult:
    """Follow a game as ``tractorcam run --game gomoku`` does: the log rewritten to ``log_out``
    after every move (through a temporary file: a crash mid-write leaves the last log whole) and at
    the end; each look's picture kept beside it (``NAME.looks/FRAME.jpg``). With a scoreboard
    ``client`` (and the game's ``keys``, :meth:`edge_app.outbox.DealKeys.of_game`): the game's start,
    each stone as it is confirmed, each long-think press and each look with its picture go out as
    they come; the finished game's log at its end."""
    import base64
    import json
    from pathlib import Path

    from contract.events import AlertIn, EvidenceImage, GameStart, LongThink, Stone
    from edge_app.service import write_atomic

    sent_presses: list[tuple[float, str]] = []

    def post(event: Any) -> None:
        if client is not None:
            body = event.model_dump(exclude_none=True)
            client.event(body, key=None if keys is None else keys.event(body))

    def pressed() -> Sequence[tuple[float, str]]:
        now = list(presses())
        for press in now[len(sent_presses) :]:
            sent_presses.append(press)
            post(LongThink(type="long_think", colour=press[1]))
        return now

    def moved(move: TrackedMove, log: dict[str, Any]) -> None:
        if log_out is not None:
            write_atomic(Path(log_out), json.dumps(log, indent=1))
        seconds = log["moves"][move.number - 1][2] if move.number <= len(log["moves"]) else None
        post(Stone(type="stone", move=move.number, colour=move.colour, point=move.point, seconds=seconds))

    def looked(look: BoardLook, picture: bytes) -> None:
        if log_out is not None and picture:
            folder = Path(log_out).with_suffix(".looks")
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{look.frame}.jpg").write_bytes(picture)
        images = (
            [
                EvidenceImage(
                    content_type="image/jpeg",
                    data=base64.b64encode(picture).decode(),
                    caption=f"frame {look.frame}",
                )
            ]
            if picture
            else []
        )
        post(AlertIn(type="alert", kind="look", reasoning=f"gomoku: {look.reason}", images=images))
        if on_look is not None:
            on_look(look, picture)

    post(GameStart(type="game_start", size=15))
    result = run_gomoku_pipeline(
        frames, geometry, presses=pressed, every=every, on_move=moved,
        on_look=looked, on_frame=on_frame, stop=stop,
    )  # fmt: skip
    if log_out is not None:
        write_atomic(Path(log_out), json.dumps(result.log, indent=1))
    if client is not None:
        pressed()
        if result.log["finished"] and result.problem is None:
            client.gomoku(result.log, key=None if keys is None else keys.deal_post())
        result.all_sent = client.flush()
    return result
