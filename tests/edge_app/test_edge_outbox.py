"""The durable outbox (edge_app.outbox) with the real scoreboard: a process killed with SIGKILL
anywhere between "queued" and "sent" loses and duplicates nothing once a new process flushes; a
restart while the scoreboard is down keeps everything; refusals are kept and never re-sent; order
is kept; the file is WAL; the deal keys survive a restart."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from edge_app.client import ScoreboardClient
from edge_app.outbox import DealKeys, Outbox, place, source_identity, token_tag
from tests.edge_app.test_edge_run import StillSource, closed_port
from tests.edge_app.test_edge_tracking import mm_geometry
from tests.scoreboard.conftest import LiveServer, Table

ROOT = Path(__file__).resolve().parents[2]

#: a deal_start and the plays of two tricks, as the service posts them
EVENTS: list[dict[str, Any]] = [
    {"type": "deal_start", "rules": "national-2deck", "level": "2", "trump": "S", "dealer": "S"},
    *[
        {"type": "play", "trick": 1 + i // 4, "seat": "SENW"[i % 4], "cards": [c]}
        for i, c in enumerate(["AS", "2S", "3S", "4S", "5H", "6H", "7H", "8H"])
    ],
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from scoreboard.db import make_engine, migrate

    path = tmp_path_factory.mktemp("template") / "scoreboard.db"
    engine = make_engine(f"sqlite:///{path}")
    migrate(engine)
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()
    return path


@pytest.fixture
def server(tmp_path: Path, template: Path) -> Iterator[LiveServer]:
    shutil.copy(template, tmp_path / "scoreboard.db")
    with LiveServer(f"sqlite:///{tmp_path / 'scoreboard.db'}") as live:
        yield live


@pytest.fixture
def table(server: LiveServer) -> Iterator[Table]:
    with httpx.Client(base_url=server.url) as http:
        yield Table(http, "T1")  # type: ignore[arg-type]  # Table only posts and gets


def stored(table: Table) -> list[tuple[str, Any]]:
    """The edge events the scoreboard holds for ``table``, in order: (kind, trick/seat/cards)."""
    r = table.client.get("/api/events", params={"table": table.id, "limit": 1000})
    assert r.status_code == 200, r.text
    out = []
    for e in r.json()["events"]:
        if e["kind"] in ("deal_start", "play", "trick"):
            d = e["data"]
            out.append((e["kind"], (d.get("trick"), d.get("seat"), d.get("cards"))))
    return out


def expected(events: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(e["type"], (e.get("trick"), e.get("seat"), e.get("cards"))) for e in events]


#: A child process: queues EVENTS (keys k-0, k-1, ...) through a client with an outbox. The
#: transport SIGKILLs the process at a controlled point: "queued" (every post refused by the
#: network; killed once all are queued), "sending" (killed as the 3rd request is about to leave:
#: committed, never sent), "answered" (the 3rd request is stored by the scoreboard, then killed
#: before the client can mark it). "flush" queues nothing: it sends what the outbox holds.
CHILD = textwrap.dedent(
    """
    import json, os, signal, sys
    from pathlib import Path
    import httpx
    from edge_app.client import ScoreboardClient

    mode, url, token, box = sys.argv[1:5]
    events = json.loads(sys.argv[5])
    inner = httpx.HTTPTransport()
    sent = [0]

    class Transport(httpx.BaseTransport):
        def handle_request(self, request):
            sent[0] += 1
            if mode == "queued":
                raise httpx.ConnectError("down", request=request)
            if mode == "sending" and sent[0] == 3:
                os.kill(os.getpid(), signal.SIGKILL)
            response = inner.handle_request(request)
            response.read()
            if mode == "answered" and sent[0] == 3:
                os.kill(os.getpid(), signal.SIGKILL)
            return response

    sb = ScoreboardClient(url, token, outbox=Path(box), http=httpx.Client(transport=Transport(), base_url=url))
    if mode == "flush":
        print(json.dumps({"pending": len(sb.queue), "ok": sb.flush(), "left": len(sb.queue)}))
        sys.exit(0)
    for i, e in enumerate(events):
        sb.event(e, key=f"k-{i}")
    if mode == "queued":
        os.kill(os.getpid(), signal.SIGKILL)
    print(json.dumps({"left": len(sb.queue)}))
    """
)


def child(mode: str, url: str, token: str, box: Path, events: list[dict[str, Any]]) -> Any:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-c", CHILD, mode, url, token, str(box), json.dumps(events)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    return r


@pytest.mark.parametrize("point", ["queued", "sending", "answered"])
def test_a_process_killed_between_queued_and_sent_loses_and_duplicates_nothing(
    point: str, server: LiveServer, table: Table, tmp_path: Path
) -> None:
    box = tmp_path / "outbox.sqlite"
    first = child(point, server.url, table.token, box, EVENTS)
    assert first.returncode == -signal.SIGKILL, first.stderr
    before = stored(table)
    if point == "answered":  # the 3rd post reached the scoreboard; its answer died with the process
        assert before == expected(EVENTS[:3])
    else:
        assert before == expected(EVENTS[:2] if point == "sending" else [])
    # a new process sends what the killed one left (the same keys: a replay is stored once)
    second = child("flush", server.url, table.token, box, [])
    assert second.returncode == 0, second.stderr
    report = json.loads(second.stdout)
    assert report["ok"] is True and report["left"] == 0
    assert report["pending"] == (len(EVENTS) if point == "queued" else 1)
    if point == "queued":
        assert stored(table) == expected(EVENTS)
    else:
        assert stored(table) == expected(EVENTS[:3])
        # the restarted run regenerates every event under the same keys: only the new ones go out
        third = child("replay", server.url, table.token, box, EVENTS)
        assert third.returncode == 0, third.stderr
        assert stored(table) == expected(EVENTS)
    with Outbox(box, token_tag(table.token)) as ob:
        assert ob.counts() == {"sent": len(EVENTS)}


def test_a_restart_while_the_scoreboard_is_down_keeps_everything(
    server: LiveServer, table: Table, tmp_path: Path
) -> None:
    box = tmp_path / "outbox.sqlite"
    down = f"http://127.0.0.1:{closed_port()}"
    first = child("replay", down, table.token, box, EVENTS[:5])
    assert first.returncode == 0 and json.loads(first.stdout) == {"left": 5}, first.stderr
    # restarted, the scoreboard still down: it finds the 5, adds the rest, sends nothing
    second = child("replay", down, table.token, box, EVENTS)
    assert second.returncode == 0 and json.loads(second.stdout) == {"left": len(EVENTS)}, second.stderr
    with Outbox(box, token_tag(table.token)) as ob:
        rows = ob.db.execute("SELECT attempts, last_error FROM posts ORDER BY id").fetchall()
    assert rows[0][0] >= 2 and "ConnectError" in rows[0][1]
    assert stored(table) == []
    third = child("flush", server.url, table.token, box, [])  # the scoreboard is back
    assert json.loads(third.stdout) == {"pending": len(EVENTS), "ok": True, "left": 0}, third.stderr
    assert stored(table) == expected(EVENTS)


def test_refusals_are_kept_with_their_detail_and_never_sent_again(
    server: LiveServer, table: Table, tmp_path: Path
) -> None:
    box = tmp_path / "outbox.sqlite"
    bad = {"type": "play", "trick": 0, "seat": "S", "cards": ["AH"]}  # no trick 0: 422
    sb = ScoreboardClient(server.url, table.token, outbox=box)
    assert sb.event(EVENTS[0], key="a") and sb.event(bad, key="b") and sb.event(EVENTS[1], key="c")
    assert [(r.key, r.status) for r in sb.refused] == [("b", 422)]
    sb.close()
    requests: list[str] = []

    def count(request: httpx.Request) -> httpx.Response:
        requests.append(request.headers["Idempotency-Key"])
        return httpx.Response(201, json={})

    again = ScoreboardClient(
        server.url, table.token, outbox=box, http=httpx.Client(transport=httpx.MockTransport(count))
    )
    assert again.flush() is True and requests == []
    assert again.event(bad, key="b") is True and requests == []  # queued again: ignored, not re-sent
    assert again.refused == []  # this process was refused nothing
    assert again.outbox is not None
    (kept,) = again.outbox.refusals()
    assert kept.key == "b" and kept.status == 422 and "trick" in kept.detail
    again.close()
    assert stored(table) == expected(EVENTS[:2])


def test_order_is_kept_through_a_server_error_at_the_head(
    server: LiveServer, table: Table, tmp_path: Path
) -> None:
    inner = httpx.HTTPTransport()
    failing = [True]

    class FirstFails(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            if failing[0]:
                return httpx.Response(503, text="busy")
            return inner.handle_request(request)

    http = httpx.Client(transport=FirstFails(), base_url=server.url)
    sb = ScoreboardClient(server.url, table.token, outbox=tmp_path / "o.sqlite", http=http)
    for i, e in enumerate(EVENTS):
        assert sb.event(e, key=f"k-{i}") is False  # the head fails: nothing behind it goes first
    assert len(sb.queue) == len(EVENTS) and stored(table) == []
    failing[0] = False
    assert sb.flush() is True
    assert stored(table) == expected(EVENTS)
    sb.close()


def test_the_file_is_wal_synchronous_full_and_a_key_is_queued_once(tmp_path: Path) -> None:
    box = tmp_path / "o.sqlite"
    with Outbox(box, "t1") as ob:
        assert ob.db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert ob.add("/api/events", EVENTS[0], "k") is True
        assert ob.add("/api/events", EVENTS[1], "k") is False  # the same key: not queued twice
        assert len(ob) == 1 and ob.head() is not None and ob.head().body == EVENTS[0]  # type: ignore[union-attr]
        assert Path(str(box) + "-wal").exists()
        with sqlite3.connect(box) as other:
            assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        item = ob.head()
        assert item is not None
        ob.answered(item, 201, "{}", refused=False)
        assert ob.add("/api/events", EVENTS[0], "k") is False and len(ob) == 0  # answered: not again
    with Outbox(box, "t2") as other_table:  # another token's posts are neither counted nor sent
        assert len(other_table) == 0 and other_table.head() is None
        other_table.add("/api/events", EVENTS[0], "k")
    with Outbox(box, "t1") as ob:
        assert ob.pending_elsewhere() == 1 and len(ob) == 0


def test_deal_keys_are_the_same_after_a_restart_and_differ_between_deals(tmp_path: Path) -> None:
    film = tmp_path / "video.mp4"
    film.write_bytes(b"frames" * 1000)
    copy = tmp_path / "copy.mp4"
    copy.write_bytes(film.read_bytes())
    info = {"rules": "national-2deck", "level": "5", "trump": "H", "dealer": "S"}
    one = DealKeys.of(token_tag("tok"), info, source_identity(str(film)))
    assert one == DealKeys.of(token_tag("tok"), dict(info), source_identity(str(copy)))  # by content
    others = [
        DealKeys.of(token_tag("other"), info, source_identity(str(film))),
        DealKeys.of(token_tag("tok"), {**info, "level": "6"}, source_identity(str(film))),
        DealKeys.of(token_tag("tok"), {**info, "dealer": None}, source_identity(str(film))),
    ]
    film.write_bytes(b"frames" * 999)
    others.append(DealKeys.of(token_tag("tok"), info, source_identity(str(film))))
    assert len({one, *others}) == 5
    assert source_identity("0") is None  # a camera: no identity that survives a restart
    assert DealKeys.of("t", info, None) != DealKeys.of("t", info, None)
    places = [place(e) for e in EVENTS]
    places += [place({"type": "trick", "trick": 1, "winner": "S", "points": 0})]
    places += [place({"type": "alert", "kind": "revoke", "seat": "E", "trick": 2, "reasoning": "x"})]
    places += [place({"type": "alert", "kind": "mismatch", "reasoning": r}) for r in ("a", "b")]
    assert len(set(places)) == len(places) and places[:2] == ["start", "play-1-S"]
    assert len(one.event(EVENTS[1])) <= 200 and one.event(EVENTS[1]) != one.deal_post()


runner = CliRunner()


def test_run_sends_what_a_previous_run_left_before_the_first_frame(
    server: LiveServer, table: Table, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tractorcam_cli.main import app

    geometry = tmp_path / "table.json"
    from models.synth.layout import Table as FilmTable

    mm_geometry(FilmTable(900.0, 900.0)).save(geometry)
    out = tmp_path / "read.json"
    box = tmp_path / "read.outbox.sqlite"  # the default beside --log-out
    first = child("replay", f"http://127.0.0.1:{closed_port()}", table.token, box, EVENTS[:3])
    assert json.loads(first.stdout) == {"left": 3}, first.stderr
    seen: list[list[tuple[str, Any]]] = []
    source = StillSource(2, on_take=lambda i: seen.append(stored(table)))
    monkeypatch.setattr("vision.capture.open_source", lambda spec, controls=None: source)
    args = ["run", "--source", "still", "--table", str(geometry), "--level", "5", "--trump", "H"]
    args += ["--every", "1", "--log-out", str(out), "--scoreboard", server.url, "--token", table.token]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert seen[0] == expected(EVENTS[:3])  # sent before the first frame was taken
    (line,) = [x for x in r.stderr.splitlines() if x.startswith("outbox ")]
    assert line == f"outbox {box}: 3 posts pending from a previous run; all sent"
    # the run's own posts (the start of a deal with no trick seen; a health report never is queued)
    # went through the same file
    with Outbox(box, token_tag(table.token)) as ob:
        assert ob.counts() == {"sent": 4}
    r = runner.invoke(app, [*args, "--outbox", str(tmp_path)])  # a folder
    assert r.exit_code == 2 and r.stderr.startswith("error: --outbox")
    r = runner.invoke(app, [*args[:-4], "--outbox", str(box)])  # without --scoreboard
    assert r.exit_code == 2 and "--outbox goes with --scoreboard" in r.stderr
