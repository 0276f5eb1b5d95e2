"""The table service around the pipeline: the deal log kept on disk as it grows, live events and
the finished deal sent to the scoreboard.

* After every cleared trick the log so far is written to ``log_out`` (a temporary file renamed
  over the old one, so a crash mid-write leaves the previous log whole).
* Live events (:mod:`edge_app.events`) and the finished deal go through a
  :class:`scoreboard.client.ScoreboardClient`: every post has its idempotency key from the moment it
  is queued; a post that fails on the network stays queued and is sent again after the next trick
  and at the end, so an outage during the deal loses nothing that the service is still running for.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from calibration.table import TableGeometry
from edge_app.deal import DealInfo, RecognisedDeal
from edge_app.events import EventStream, event_body
from edge_app.pipeline import PipelineStats, ReadCards, run_pipeline
from vision.capture import Frame
from vision.tracking import TableState


class Poster(Protocol):
    """What the service needs of a scoreboard client (:class:`scoreboard.client.ScoreboardClient`)."""

    def event(self, event: dict[str, object]) -> bool: ...

    def deal(self, log: dict[str, object]) -> bool: ...

    def flush(self) -> bool: ...


@dataclass
class ServiceResult:
    """The recognised deal, the pipeline's counts, and what happened to the scoreboard posts."""

    deal: RecognisedDeal
    stats: PipelineStats
    events: int = 0  # events handed to the client
    deal_posted: bool = False  # the finished deal was accepted (or there was nothing to post)
    all_sent: bool = True  # nothing is left in the client's queue
    alerts: list[str] = field(default_factory=list)  # the alerts raised, as one line each


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
    *,
    every: int = 5,
    inertia: int = 2,
    log_out: Path | None = None,
    client: Poster | None = None,
    on_frame: Callable[[Frame, TableState], None] | None = None,
) -> ServiceResult:
    """Run the pipeline over ``frames``; keep ``log_out`` current; send events and the deal."""
    stream = EventStream()
    sent = [0]
    alerts: list[str] = []

    def publish(deal: RecognisedDeal) -> None:
        if log_out is not None:
            write_atomic(log_out, json.dumps(deal.log, indent=1))
        for e in stream.update(deal):
            if e.type == "alert":
                alerts.append(
                    f"{e.kind} {e.seat or ''} trick {e.trick or '?'}: {e.reasoning}".replace("  ", " ")
                )
            if client is not None:
                client.event(event_body(e))
                sent[0] += 1

    result = run_pipeline(
        frames, read, geometry, info, every=every, inertia=inertia, on_frame=on_frame, on_trick=publish
    )
    publish(result.deal)
    out = ServiceResult(result.deal, result.stats, sent[0], alerts=alerts)
    if client is not None:
        if result.deal.log["finished"] and result.deal.problem is None:
            out.deal_posted = client.deal(result.deal.log)
        out.all_sent = client.flush()
    return out
