"""Live events (edge_app.events) and the service's bookkeeping (edge_app.service) with a fake poster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from edge_app.deal import DealInfo, RecognisedDeal
from edge_app.events import EventStream, event_body
from edge_app.service import run_service, write_atomic
from engine.score import score_log
from engine.sim import simulate_deal
from models.synth.layout import Table
from tests.edge_app.test_edge_pipeline import ONE_TRICK, scripted
from tests.edge_app.test_edge_tracking import mm_geometry


def truth_log(seed: int, **kw: Any) -> dict[str, Any]:
    log = simulate_deal("national-2deck", seed, **kw)
    return {k: v for k, v in log.items() if k not in ("hands", "injected")}


def test_events_trick_by_trick_add_up_to_the_deal_and_alert_once_when_proven() -> None:
    log = truth_log(3, inject_revoke=True)
    (violation,) = score_log(log)["violations"]
    stream = EventStream()
    seen: list[tuple[int, Any]] = []
    for n in range(1, len(log["tricks"]) + 1):
        part = {**log, "tricks": log["tricks"][:n], "finished": False}
        part.pop("bottom")
        seen += [(n, e) for e in stream.update(RecognisedDeal(part, None, ()))]
    types = [e.type for _, e in seen]
    assert types[0] == "deal_start" and types.count("deal_start") == 1
    assert types.count("play") == sum(len(t["plays"]) for t in log["tricks"])
    assert types.count("trick") == len(log["tricks"])
    alerts = [(n, e) for n, e in seen if e.type == "alert"]
    assert len(alerts) == 1
    n, alert = alerts[0]
    assert (alert.kind, alert.seat, alert.trick, alert.proven_at) == (
        "revoke",
        violation["seat"],
        violation["trick"],
        violation["proven_at"],
    )
    assert n == violation["proven_at"]  # raised as soon as the trick that proves it is cleared
    assert event_body(alert)["type"] == "alert" and "images" in event_body(alert)


def test_refused_log_raises_one_mismatch_alert() -> None:
    log = {
        "rules": "national-2deck",
        "level": "5",
        "trump": "H",
        "dealer": "S",
        "finished": False,
        "tricks": [{"plays": [["S", ["AS"]], ["E", ["AS"]], ["N", ["AS"]], ["W", ["2S"]]]}],
    }
    stream = EventStream()
    first = stream.update(RecognisedDeal(log, "three AS", ()))
    assert [e.kind for e in first if e.type == "alert"] == ["mismatch"]
    assert not any(e.type == "trick" for e in first)  # no result for a log the engine refuses
    assert [e.type for e in first].count("play") == 4
    assert stream.update(RecognisedDeal(log, "three AS", ())) == []


class Poster:
    def __init__(self, up: bool) -> None:
        self.up = up
        self.events: list[dict[str, Any]] = []
        self.deals: list[dict[str, Any]] = []
        self.queued = 0

    def event(self, event: dict[str, Any]) -> bool:
        self.queued += 1
        if self.up:
            self.events.append(event)
        return self.up

    def deal(self, log: dict[str, Any]) -> bool:
        if self.up:
            self.deals.append(log)
        return self.up

    def flush(self) -> bool:
        return self.up


def test_service_keeps_the_log_on_disk_after_each_trick_and_reports_unsent(tmp_path: Path) -> None:
    out = tmp_path / "log.json"
    snapshots: list[str] = []

    def serve(client: Poster, log_out: Path | None) -> Any:
        frames, answers = scripted(ONE_TRICK, repeat=10)

        def read(image: np.ndarray) -> list[Any]:
            snapshots.append(out.read_text() if out.exists() else "")
            return answers[int(image[0, 0, 0])]

        info = DealInfo("national-2deck", "5", "H", "S")
        geometry = mm_geometry(Table(900.0, 900.0))
        return run_service(frames, read, geometry, info, every=5, log_out=log_out, client=client)

    down = Poster(up=False)
    result = serve(down, out)
    assert not result.all_sent and down.queued == result.events == 6  # start, 4 plays, the trick
    assert '"AH"' in out.read_text() and not out.with_name("log.json.tmp").exists()
    assert snapshots[-1] == ""  # nothing on disk until the first trick was cleared
    up = Poster(up=True)
    result = serve(up, None)
    assert result.all_sent and up.deals == []  # the deal is not finished: events only
    assert [e["type"] for e in up.events] == ["deal_start", "play", "play", "play", "play", "trick"]


def test_write_atomic_replaces_whole(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    write_atomic(p, "one")
    write_atomic(p, "two")
    assert p.read_text() == "two" and sorted(f.name for f in tmp_path.iterdir()) == ["x.json"]
