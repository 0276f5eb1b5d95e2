"""Falling behind a live camera: frames taken from the newest (vision.capture.NewestFrames), the
pipeline sampling on from there, and the table service saying when it fell behind and caught up
(edge_app.service.LagWatch). A film replayed at camera speed (PacedSource) and a reader slowed by
sleeping stand in for a slow Pi."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from edge_app.config import TableConfig
from edge_app.deal import DealInfo
from edge_app.service import LagWatch, run_service
from models.synth.layout import Table
from tests.edge_app.test_edge_events import Poster
from tests.edge_app.test_edge_pipeline import ONE_TRICK, scripted
from tests.edge_app.test_edge_tracking import mm_geometry
from vision.capture import Frame, NewestFrames, PacedSource


class Listed:
    """Recorded frames as a source (timestamps from the list)."""

    def __init__(self, frames: list[Frame]) -> None:
        self.frames, self.closed = frames, False

    def __iter__(self) -> Any:
        return iter(self.frames)

    def close(self) -> None:
        self.closed = True


def test_paced_source_waits_for_each_frames_time_and_never_for_the_reader() -> None:
    now = [100.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(round(s, 3))
        now[0] += s

    frames = [Frame(np.zeros((2, 2, 3), np.uint8), i, i * 0.5, "t") for i in range(4)]
    paced = PacedSource(Listed(frames), clock=lambda: now[0], sleep=sleep)
    taken = []
    for f in paced:
        taken.append(f.index)
        if f.index == 1:
            now[0] += 1.2  # the reader is busy past frames 2's time and 3's
    assert taken == [0, 1, 2, 3] and slept == [0.5]  # late frames are given at once


def test_newest_frames_drop_what_the_reader_had_no_time_for_and_raise_the_cameras_error() -> None:
    class Camera:
        def __iter__(self) -> Any:
            for i in range(30):
                time.sleep(0.01)
                yield Frame(np.zeros((2, 2, 3), np.uint8), i, i / 100, "cam")
            raise RuntimeError("camera gone")

        def close(self) -> None:
            pass

    src = NewestFrames(Camera())
    taken = []
    with pytest.raises(RuntimeError, match="camera gone"):
        for f in src:
            taken.append(f.index)
            time.sleep(0.05)  # a reader five times slower than the camera
    src.close()
    assert taken == sorted(taken) and taken[-1] == 29  # in order, to the last frame delivered
    assert src.dropped == 30 - len(taken) and src.dropped >= 15


@pytest.mark.slow
def test_a_slow_reader_falls_behind_says_so_catches_up_and_keeps_the_trick() -> None:
    """A trick filmed at 20 fps, each picture held 0.6 s, replayed as a camera. The reader takes
    0.45 s a frame for the first 1.5 s of the film, then keeps up: the service reports the fall
    behind (degraded health, ``on_lag``) and the catching up (ok), and the trick is whole."""
    frames, answers = scripted(ONE_TRICK, repeat=12)
    frames = [Frame(f.image, f.index, f.index / 20, "cam") for f in frames]
    source = NewestFrames(PacedSource(Listed(frames)))
    slow_until = 1.5

    def read(image: np.ndarray) -> list[Any]:
        if current[0] < slow_until:
            time.sleep(0.45)
        return answers[int(image[0, 0, 0])]

    current = [0.0]
    seen: list[tuple[bool, int]] = []

    def on_frame(frame: Frame, state: Any) -> None:
        current[0] = frame.timestamp

    client = Poster(up=True)
    try:
        result = run_service(
            source,
            read,
            mm_geometry(Table(900.0, 900.0)),
            DealInfo("national-2deck", "5", "H", "S"),
            TableConfig(read="zones", every=1, inertia=2),
            client=client,
            on_frame=on_frame,
            on_lag=lambda behind, frame, lag: seen.append((behind, frame.index)),
            lag=LagWatch(gap_s=0.3, calm_s=1.0),
        )
    finally:
        source.close()
    assert [b for b, _ in seen] == [True, False]
    health = [e for e in client.events if e["type"] == "health" and "camera" in e.get("message", "")]
    assert [h["status"] for h in health] == ["degraded", "ok"]
    assert "falling behind the camera" in health[0]["message"]
    assert result.fell_behind == 1 and result.dropped_frames >= 5
    assert result.stats.frames < len(frames)  # frames were dropped, not queued
    assert result.deal.log.to_json()["tricks"] == [
        {"plays": [["S", ["AH"]], ["E", ["3H"]], ["N", ["2H"]], ["W", ["QH"]]]}
    ]
