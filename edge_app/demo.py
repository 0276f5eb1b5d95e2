"""``tractorcam demo``: the main job on an embedded default.

1. Render a sample deal (``synth deal``: seed 7, national-2deck, a held-out card design, 1280 × 960
   at 10 frames a second), or reuse it when the folder already holds it.
2. Start a local scoreboard (SQLite in the same folder, a fresh database each run) on a free port
   of 127.0.0.1, and register the table.
3. Run the table service on the film, exactly as ``tractorcam run`` does (every frame, the zone
   reader: :mod:`vision.zones`), posting live events and the finished deal to that scoreboard.
4. Print what happened: each trick as read against what was played, the alerts, the outcome, and
   the scoreboard's view of the table afterwards.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge_app.compare import DealComparison, compare_deals
from engine.cards import format_any
from engine.deal_log import DealLog, Trick, parse_deal_log
from engine.score import evaluate

DEFAULT_SEED = 7
DEFAULT_SIZE = (1280, 960)


def default_folder(seed: int) -> Path:
    """``$XDG_CACHE_HOME/tractorcam/demo-<seed>`` (``~/.cache`` without it)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "tractorcam" / f"demo-{seed}"


def ensure_deal(folder: Path, seed: int, tricks: int | None, size: tuple[int, int]) -> bool:
    """Render the sample deal into ``folder`` unless it is there; True when it was rendered now."""
    stamp = folder / "demo.json"
    want = {"seed": seed, "tricks": tricks, "size": list(size)}
    have = all((folder / f).is_file() for f in ("video.mp4", "truth.json", "table.json"))
    if have and stamp.is_file() and json.loads(stamp.read_text()) == want:
        return False
    from models.synth.deal import render_deal

    render_deal(seed, folder, width=size[0], height=size[1], max_tricks=tricks)
    stamp.write_text(json.dumps(want))
    return True


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class LocalScoreboard:
    """A scoreboard served from this process: its URL and the admin token."""

    url: str
    admin_token: str


@contextmanager
def local_scoreboard(db_path: Path) -> Iterator[LocalScoreboard]:
    """Serve a fresh scoreboard on SQLite at ``db_path`` in a thread, for the ``with`` block."""
    import uvicorn

    from scoreboard.app import create_app
    from scoreboard.settings import Settings

    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)
    token = secrets.token_urlsafe(24)
    app = create_app(Settings(db_url=f"sqlite:///{db_path}", admin_token=token))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the local scoreboard did not start")
        time.sleep(0.05)
    try:
        yield LocalScoreboard(f"http://127.0.0.1:{port}", token)
    finally:
        server.should_exit = True
        thread.join(10)


def _show(plays: list[tuple[str, list[str]]]) -> str:
    return "  ".join(f"{seat}:{' '.join(cards)}" for seat, cards in plays)


def summary(read: DealLog, truth: DealLog, alerts: list[str], c: DealComparison) -> list[str]:
    """Human-readable lines: each trick read against what was played, alerts, outcome (``c``: the
    read log compared with the truth, :func:`edge_app.compare.compare_deals`)."""

    def plays(trick: Trick) -> list[tuple[str, list[str]]]:
        return [(p.seat.name, sorted(format_any(p.cards))) for p in trick.plays]

    lines = []
    for i, t in enumerate(truth.tricks):
        want = plays(t)
        got = plays(read.tricks[i]) if i < len(read.tricks) else []
        mark = "ok  " if got == want else "DIFF"
        lines.append(f"  trick {i + 1:2d} {mark} {_show(got) or '(not read)'}")
        if got != want:
            lines.append(f"           played  {_show(want)}")
    lines.append(
        f"plays read exactly: {c.plays_exact} of {c.plays}; cards right {c.cards_right} of {c.cards}; "
        f"bottom {'right' if c.bottom_exact else 'wrong'}"
    )
    for a in alerts:
        lines.append(f"alert raised: {a}")
    want_v = evaluate(truth.checked()).violations
    lines.append(
        f"alerts: {len(alerts)} raised; the deal as played has {len(want_v)} violation(s); "
        f"false alerts {len(c.false_alerts)}, missed {len(c.missed_alerts)}"
    )
    if c.refused:
        lines.append(f"the engine refuses the recognised log: {c.refused}")
    else:
        res = evaluate(read.checked()).to_json()
        if "outcome" in res:
            o = res["outcome"]
            lines.append(
                f"outcome as read: defenders {res['defender_total']} points, {o['side']} up {o['levels']}, "
                f"next dealer {o['next_dealer']} ({'as played' if c.outcome_right else 'NOT as played'})"
            )
    return lines


def run_demo(
    folder: Path,
    seed: int = DEFAULT_SEED,
    tricks: int | None = None,
    size: tuple[int, int] = DEFAULT_SIZE,
    echo: Callable[[str], None] = print,
    progress: bool = True,
) -> int:
    """The whole demo (module docstring); returns the number of plays read exactly."""
    import httpx
    from tqdm import tqdm

    from calibration.table import TableGeometry
    from edge_app.client import ScoreboardClient
    from edge_app.config import TableConfig
    from edge_app.deal import DealInfo
    from edge_app.service import run_service
    from vision.capture import AheadFrames, VideoFileSource
    from vision.reader import CardReader, default_reader_config
    from vision.zones import ZoneReader

    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rendered = ensure_deal(folder, seed, tricks, size)
    echo(f"sample deal {'rendered' if rendered else 'reused'} in {folder} ({time.perf_counter() - t0:.0f} s)")
    truth = json.loads((folder / "truth.json").read_text())
    truth = {k: v for k, v in truth.items() if k not in ("hands", "injected")}
    design = json.loads((folder / "timeline.json").read_text()).get("design", "?")
    echo(
        f"deal: {truth['rules']}, level {truth['level']}, trump {truth['trump']}, dealer {truth['dealer']}, "
        f"{len(truth['tricks'])} tricks, card design {design} (held out of training)"
    )
    geometry = TableGeometry.load(folder / "table.json")
    zones = ZoneReader(CardReader(default_reader_config("onnx", unknown_cards=True)), geometry)
    with local_scoreboard(folder / "scoreboard.db") as sb:
        r = httpx.post(
            f"{sb.url}/api/tables",
            json={"name": "demo", "rules": truth["rules"]},
            headers={"Authorization": f"Bearer {sb.admin_token}"},
        )
        r.raise_for_status()
        table_id, table_token = r.json()["id"], r.json()["token"]
        echo(f"scoreboard on {sb.url} (table {table_id}); live page {sb.url}/")
        client = ScoreboardClient(sb.url, table_token)
        source = AheadFrames(VideoFileSource(folder / "video.mp4"))
        t1 = time.perf_counter()
        try:
            with tqdm(desc="reading the film", unit="frame", disable=not progress) as bar:
                result = run_service(
                    source,
                    zones.read,
                    geometry,
                    DealInfo(truth["rules"], truth["level"], truth["trump"], truth["dealer"]),
                    TableConfig(read="zones", every=1, log_out=folder / "read.json"),
                    client=client,
                    on_frame=lambda frame, state: _step(bar, 1),
                )
        finally:
            source.close()
        s = result.stats
        echo(
            f"table service: {s.frames} frames, {zones.stats.areas} areas read and "
            f"{zones.stats.confirmations} read again by the card reader in {time.perf_counter() - t1:.0f} s; "
            f"recognised log in {folder / 'read.json'}"
        )
        played = parse_deal_log(truth)
        comparison = compare_deals(result.deal.log, played)
        for line in summary(result.deal.log, played, result.alerts, comparison):
            echo(line)
        state = httpx.get(f"{sb.url}/api/tables/{table_id}").json()
        posted = "posted" if result.deal_posted and not client.refused else "not posted"
        echo(
            f"scoreboard: {result.events} events sent, deal {posted}; table now: deals {state.get('deals')}, "
            f"levels {state.get('levels')}, dealer {state.get('dealer')}"
        )
        for refused in client.refused:
            echo(f"scoreboard refused {refused.path} ({refused.status}): {refused.detail}")
    return comparison.plays_exact


def _step(bar: Any, frames: int) -> None:
    """The progress bar moved on by ``frames`` (a frame read)."""
    bar.update(frames)
