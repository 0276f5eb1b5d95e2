"""``tractorcam run`` checks everything it is given before the first frame is read (each bad input:
exit 2, one line on standard error, no frame read), and ends cleanly on SIGTERM / SIGINT."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from models.synth.layout import Table
from tests.edge_app.test_edge_tracking import mm_geometry
from tractorcam_cli.main import app
from vision.capture import Frame

runner = CliRunner()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """A table file, and a source that fails loudly if a frame is ever read from it (a folder whose
    only image does not decode: reading it is a traceback and exit 1, never exit 2)."""
    table = tmp_path / "table.json"
    mm_geometry(Table(900.0, 900.0)).save(table)
    tripwire = tmp_path / "tripwire"
    tripwire.mkdir()
    (tripwire / "frame.png").write_bytes(b"not a picture")
    bad_info = tmp_path / "info.json"
    bad_info.write_text(json.dumps({"rules": "national-2deck", "level": "5", "trump": "X", "dealer": "S"}))
    bad_rank = tmp_path / "rank.json"
    bad_rank.write_text(json.dumps({"level": "1", "trump": "H"}))
    bad_table = tmp_path / "bad_table.json"
    bad_table.write_text('{"image_width": 3}')
    return {"table": table, "tripwire": tripwire, "info": bad_info, "rank": bad_rank, "bad_table": bad_table}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: bad input → (the options, with {tmp}, {info}, {rank}, {bad_table} and {url} filled in at run
#: time; a word the error line names)
BAD: dict[str, tuple[list[str], str]] = {
    "rules": (["--rules", "bridge"], "--rules"),
    "a bridge table without its board": (["--game", "bridge"], "give --board, --contract and --declarer"),
    "a bridge contract the rules refuse": (
        ["--game", "bridge", "--board", "3", "--contract", "8S", "--declarer", "N"],
        "level is 1 to 7",
    ),
    "a board at a Shengji table": (["--board", "3"], "a bridge table's"),
    "level": (["--level", "1"], "--level"),
    "trump": (["--trump", "X"], "--trump"),
    "dealer": (["--dealer", "Q"], "--dealer"),
    "info trump": (["--info", "{info}"], "trump"),
    "info level": (["--info", "{rank}"], "level"),
    "info missing": (["--info", "{tmp}/none.json"], "--info"),
    "every": (["--every", "0"], "--every"),
    "inertia": (["--inertia", "0"], "--inertia"),
    "backend": (["--backend", "bogus"], "--backend"),
    "log-out folder missing": (["--log-out", "{tmp}/nope/read.json"], "--log-out"),
    "log-out a folder": (["--log-out", "{tmp}"], "--log-out"),
    "table": (["--table", "{bad_table}"], "--table"),
    "url scheme": (["--scoreboard", "ftp://x", "--token", "t"], "--scoreboard"),
    "url host": (["--scoreboard", "http://", "--token", "t"], "--scoreboard"),
    "token alone": (["--token", "t"], "--token"),
    "token spaces": (["--scoreboard", "{url}", "--token", "two words"], "--token"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_each_bad_input_exits_2_with_one_line_before_any_frame(
    case: str, tmp_path: Path, files: dict[str, Path]
) -> None:
    template, names = BAD[case]
    fill = {**{k: str(v) for k, v in files.items()}, "tmp": str(tmp_path)}
    args = [a.format(url=f"http://127.0.0.1:{closed_port()}", **fill) for a in template]
    base = ["run", "--source", str(files["tripwire"]), "--table", str(files["table"])]
    r = runner.invoke(app, base + args)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""  # no report: nothing was read
    (line,) = r.stderr.splitlines()  # one line, no warning before it, no traceback
    assert line.startswith("error: ") and names in line
    assert "cannot read image" not in r.output


def test_a_refused_token_exits_2_before_any_frame(tmp_path: Path, files: dict[str, Path]) -> None:
    from scoreboard.db import make_engine, migrate
    from tests.scoreboard.conftest import LiveServer

    db = f"sqlite:///{tmp_path / 'scoreboard.db'}"
    engine = make_engine(db)
    migrate(engine)
    engine.dispose()
    with LiveServer(db) as server:
        r = runner.invoke(
            app,
            ["run", "--source", str(files["tripwire"]), "--table", str(files["table"])]
            + ["--scoreboard", server.url, "--token", "not-a-table-token"],
        )
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.splitlines()
    assert line.startswith("error: the scoreboard refuses this token (401")
    assert r.stdout == ""


def test_a_bridge_run_with_a_shengji_tables_token_exits_2_before_any_frame(
    tmp_path: Path, files: dict[str, Path]
) -> None:
    import httpx

    from scoreboard.db import make_engine, migrate
    from tests.scoreboard.conftest import ADMIN_HEADERS, LiveServer

    db = f"sqlite:///{tmp_path / 'scoreboard.db'}"
    engine = make_engine(db)
    migrate(engine)
    engine.dispose()
    with LiveServer(db) as server:
        made = httpx.post(f"{server.url}/api/tables", json={"name": "S1"}, headers=ADMIN_HEADERS)
        r = runner.invoke(
            app,
            ["run", "--source", str(files["tripwire"]), "--table", str(files["table"])]
            + ["--game", "bridge", "--board", "3", "--contract", "3NT", "--declarer", "N"]
            + ["--scoreboard", server.url, "--token", made.json()["token"]]
            + ["--outbox", str(tmp_path / "outbox.sqlite")],
        )
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.splitlines()
    assert line == f"error: the scoreboard {server.url} has this token's table playing shengji, not bridge"
    assert r.stdout == ""


class StillSource:
    """``count`` grey frames; ``on_take(index)`` is called as each is taken."""

    def __init__(self, count: int, on_take: Any = None) -> None:
        self.count = count
        self.on_take = on_take or (lambda index: None)
        self.taken = 0
        self.closed = False

    def __iter__(self) -> Iterator[Frame]:
        for i in range(self.count):
            self.taken += 1
            self.on_take(i)
            yield Frame(np.full((90, 90, 3), 100, np.uint8), i, i / 10, "still")

    def close(self) -> None:
        self.closed = True


def test_an_unreachable_scoreboard_is_a_warning_and_the_run_goes_on(
    tmp_path: Path, files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    source = StillSource(3)
    monkeypatch.setattr("vision.capture.open_source", lambda spec, controls=None: source)
    url = f"http://127.0.0.1:{closed_port()}"
    r = runner.invoke(
        app,
        ["run", "--source", "still", "--table", str(files["table"]), "--level", "5", "--trump", "H"]
        + ["--scoreboard", url, "--token", "t0ken", "--every", "1"],
    )
    warning = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "cannot be reached" in warning[0]
    assert source.taken == 3 and source.closed
    assert "3 frames, 3 sampled, 1 areas read" in r.stdout  # the zone reader (the default)
    assert r.exit_code == 1 and "posts not sent" in r.stderr  # as before: what is left unsent


def test_read_zones_reads_a_still_table_once_and_says_so(
    tmp_path: Path, files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--read zones``: every frame goes to the zone reader, which reads the table at the first
    frame only (nothing changes after it); the summary counts the areas it read."""
    source = StillSource(6)
    monkeypatch.setattr("vision.capture.open_source", lambda spec, controls=None: source)
    r = runner.invoke(
        app,
        ["run", "--source", "still", "--table", str(files["table"]), "--level", "5", "--trump", "H"]
        + ["--read", "zones"],
    )
    assert r.exit_code == 0, r.output
    assert "6 frames, 6 sampled, 1 areas read, 0 read again" in r.stdout
    r = runner.invoke(app, ["run", "--source", "still", "--table", str(files["table"]), "--read", "pyramid"])
    assert r.exit_code == 2 and "--read" in r.output


def test_sigint_stops_at_the_next_frame_keeps_the_log_and_restores_the_handlers(
    tmp_path: Path, files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The signal arrives while frame 4 is being taken; frame 4 is processed, frame 5 never taken."""

    def on_take(index: int) -> None:
        if index == 4:
            os.kill(os.getpid(), signal.SIGINT)

    source = StillSource(1000, on_take)
    monkeypatch.setattr("vision.capture.open_source", lambda spec, controls=None: source)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    out = tmp_path / "read.json"
    r = runner.invoke(
        app,
        ["run", "--source", "still", "--table", str(files["table"]), "--level", "5", "--trump", "H"]
        + ["--every", "1", "--log-out", str(out)],
    )
    assert r.exit_code == 0, r.output
    assert source.taken == 5 and source.closed
    assert "5 frames, 5 sampled, 1 areas read" in r.stdout
    assert "stopped by SIGINT" in r.stderr
    assert json.loads(out.read_text())["tricks"] == []
    assert {s: signal.getsignal(s) for s in before} == before


@pytest.mark.slow
def test_sigterm_to_a_running_service_exits_0_with_the_log_written(tmp_path: Path) -> None:
    """A real ``tractorcam run`` on a folder of 5,000 frames (links to one small picture, so the
    shipped reader reads it once): SIGTERM once it says it is reading, and it stops long before the
    folder's end, writes its log and exits 0."""
    table = tmp_path / "table.json"
    mm_geometry(Table(900.0, 900.0)).save(table)
    picture = tmp_path / "frame.png"
    cv2.imwrite(str(picture), np.full((240, 320, 3), 90, np.uint8))
    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(5000):
        (folder / f"{i:05d}.png").symlink_to(picture)
    out = tmp_path / "read.json"
    command = [sys.executable, "-m", "tractorcam_cli", "run", "--source", str(folder)]
    command += ["--table", str(table), "--level", "5", "--trump", "H", "--every", "1", "--log-out", str(out)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline() if proc.stderr else ""
        assert first.startswith("reading "), first
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    frames = int(stdout.split(" frames,")[0])
    assert frames < 5000 and "stopped by SIGTERM" in stderr
    log = json.loads(out.read_text())
    assert log["level"] == "5" and log["trump"] == "H" and log["finished"] is False


@pytest.mark.parametrize(
    ("rules", "decks"), [("national-1deck", 1), ("national-2deck", 2), ("zhku-3deck", 3)]
)
def test_the_reader_knows_the_decks_of_the_game_it_reads(
    files: dict[str, Path], rules: str, decks: int
) -> None:
    """``run`` gives the reader the rule set's decks: the faces step of an enrolled deck looks for a
    covered copy of a card only where the decks hold another (a one-deck game has none)."""
    from edge_app.cli import _check

    info = {"rules": rules, "level": "5", "trump": "H", "dealer": "S"}
    from edge_app.config import TableConfig

    checked = _check(TableConfig(), files["table"], info, [])
    assert checked.reader.config.decks == decks


def test_run_keeps_cards_not_named_unless_told_not_to(files: dict[str, Path], tmp_path: Path) -> None:
    """By default ``run`` keeps the indices the classifier cannot name in full as cards (``??``,
    ``K?``, ``?C``, ``?J``) for the decoding and a referee; ``unknown_cards = false`` in the table's
    file or ``--no-unknown-cards`` drops them."""
    from edge_app.cli import _check
    from edge_app.config import TableConfig, load_config, merged

    info = {"rules": "national-2deck", "level": "5", "trump": "H", "dealer": "S"}
    assert TableConfig().unknown_cards is True
    cfg = merged(None, unknown_cards=None)
    checked = _check(cfg, files["table"], info, [])
    assert checked.reader.config.unknown_cards is not None
    assert checked.reader.config.unknown_cards.partial is not None  # K?, ?C, ?J, not only ??
    toml = tmp_path / "table.toml"
    toml.write_text("unknown_cards = false\n")
    assert load_config(toml).unknown_cards is False
    assert merged(load_config(toml), unknown_cards=True).unknown_cards is True  # the option wins
    off = _check(merged(None, unknown_cards=False), files["table"], info, [])
    assert off.reader.config.unknown_cards is None
