"""Against a real server: concurrent posts with one key store one deal; SSE streams incrementally;
the `tractorcam scoreboard serve` command migrates and serves."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.scoreboard.conftest import ADMIN, ADMIN_HEADERS
from tests.scoreboard.deals import DEFENDERS_WIN


def new_table(base: str, name: str) -> tuple[str, str]:
    r = httpx.post(f"{base}/api/tables", json={"name": name}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text
    return r.json()["id"], r.json()["token"]


def test_concurrent_posts_with_one_key_store_one_deal(live_server):
    table_id, token = new_table(live_server.url, "T1")
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": "race"}

    def post(_: int) -> httpx.Response:
        return httpx.post(
            f"{live_server.url}/api/tables/{table_id}/deals", json=DEFENDERS_WIN, headers=headers, timeout=30
        )

    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(post, range(16)))
    assert {r.status_code for r in replies} == {201}
    assert len({r.text for r in replies}) == 1
    state = httpx.get(f"{live_server.url}/api/tables/{table_id}").json()
    assert state["deals"] == 1


def test_concurrent_events_with_one_key_store_one_event(live_server):
    table_id, token = new_table(live_server.url, "T1")
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": "race"}
    body = {"type": "play", "trick": 1, "seat": "S", "cards": ["AH"]}

    def post(_: int) -> httpx.Response:
        return httpx.post(
            f"{live_server.url}/api/tables/{table_id}/events", json=body, headers=headers, timeout=30
        )

    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(post, range(16)))
    assert {r.status_code for r in replies} == {201}
    assert len({r.text for r in replies}) == 1
    events = httpx.get(f"{live_server.url}/api/events", params={"table": table_id}).json()["events"]
    assert [e["kind"] for e in events].count("play") == 1
    live = httpx.get(f"{live_server.url}/api/tables/{table_id}").json()["live"]
    assert live["tricks"] == [{"plays": [["S", ["AH"]]]}]


def test_sse_delivers_a_new_deal_while_connected(live_server):
    table_id, token = new_table(live_server.url, "T1")
    cursor = httpx.get(f"{live_server.url}/api/events").json()["cursor"]
    received: list[str] = []

    def listen() -> None:
        with httpx.stream(
            "GET",
            f"{live_server.url}/api/stream",
            params={"after": cursor, "limit": 2, "timeout": 20},
            timeout=30,
        ) as r:
            for line in r.iter_lines():
                received.append(line)

    listener = threading.Thread(target=listen)
    listener.start()
    time.sleep(0.5)
    assert not any(line.startswith("event: deal") for line in received)
    r = httpx.post(
        f"{live_server.url}/api/tables/{table_id}/deals",
        json=DEFENDERS_WIN,
        headers={"Authorization": f"Bearer {token}", "Idempotency-Key": "k"},
    )
    assert r.status_code == 201
    listener.join(timeout=25)
    assert not listener.is_alive()
    assert "event: deal" in received
    assert any(line.startswith("data: ") and '"defender_total":120' in line for line in received)


@pytest.mark.slow
def test_cli_serve_migrates_and_serves(tmp_path: Path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    db = tmp_path / "cli.db"
    exe = Path(sys.executable).parent / "tractorcam"
    env = {**os.environ, "TRACTORCAM_ADMIN_TOKEN": ADMIN}
    proc = subprocess.Popen(
        [
            str(exe),
            "scoreboard",
            "serve",
            "--db",
            f"sqlite:///{db}",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "server did not come up"
            time.sleep(0.2)
        table_id, _ = new_table(base, "CLI")
        assert httpx.get(f"{base}/api/tables/{table_id}").json()["name"] == "CLI"
        assert db.exists()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_cli_serve_bad_db_url_exits_2(tmp_path: Path):
    exe = Path(sys.executable).parent / "tractorcam"
    r = subprocess.run(
        [str(exe), "scoreboard", "serve", "--db", "nonsense://"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TRACTORCAM_ADMIN_TOKEN": ADMIN},
    )
    assert r.returncode == 2
    assert r.stderr.strip().startswith("error:")


def run_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "tractorcam"
    return subprocess.run(
        [str(exe), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TRACTORCAM_ADMIN_TOKEN": ADMIN},
    )


@pytest.mark.slow
def test_cli_serve_refuses_a_port_it_cannot_use(tmp_path: Path):
    """Issue 38: --port 99999 used to listen on a random port while printing 99999, and a port in
    use exited 3 after start-up; now one line each, before anything starts."""
    r = run_cli("scoreboard", "serve", "--db", f"sqlite:///{tmp_path / 'a.db'}", "--port", "99999")
    assert (r.returncode, r.stderr.strip()) == (2, "error: --port 99999 is not a TCP port (1-65535)")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = run_cli("scoreboard", "serve", "--db", f"sqlite:///{tmp_path / 'a.db'}", "--port", str(port))
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [f"error: cannot listen on 127.0.0.1:{port}: the port is in use"]
    assert not (tmp_path / "a.db").exists()  # refused before the database was touched


@pytest.mark.slow
def test_cli_add_user_with_a_bad_database_is_one_line(tmp_path: Path):
    for db, code in (
        ("nonsense://", 2),
        (f"sqlite:///{tmp_path / 'missing' / 'x.db'}", 1),
        ("postgresql://nobody@127.0.0.1:1/x", 1),
    ):
        r = run_cli("scoreboard", "add-user", "bob", "--db", db, stdin="correct horse\n")
        assert r.returncode == code, (db, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:"), (db, r.stderr)
    r = run_cli(
        "scoreboard", "add-user", "bo b", "--db", f"sqlite:///{tmp_path / 'y.db'}", stdin="correct horse\n"
    )
    assert r.returncode == 2 and "username" in r.stderr
    r = run_cli(
        "scoreboard", "add-user", "bob", "--db", f"sqlite:///{tmp_path / 'y.db'}", stdin="correct horse\n"
    )
    assert r.returncode == 0 and "referee bob created" in r.stdout
