"""The fault check of issue 39: ``tractorcam run`` killed with SIGKILL at random moments of a filmed
deal and restarted each time, with the scoreboard down for a while in between; at the end every
event is stored once and the final log equals an uninterrupted run's.

    .venv/bin/python benchmarks/faults.py [--seed 7] [--tricks 4] [--kills 10] [--down 60] \\
        [--every N] [--kill-seed 0] [--dir DIR] [--work DIR]

1. A filmed deal: ``synth deal`` of ``--seed`` cut to its first ``--tricks`` tricks (0: the whole
   deal) at ``--size`` (default 1280x960, the demo's), rendered with the same function as
   ``tractorcam synth deal`` (``models.synth.deal.render_deal``, which takes the cut) into ``--dir``,
   or reused from there. A deal cut short is not finished, so no deal is posted (the reference run
   posts none either); ``--tricks 0`` films the whole deal, which is posted, and takes about ten
   times as long.
2. A local scoreboard, ``tractorcam scoreboard serve`` on a free port of 127.0.0.1 (SQLite in
   ``--work``), with two tables: ``reference`` and ``faults``.
3. The reference: one uninterrupted ``tractorcam run --source DIR/video.mp4 --table DIR/table.json
   --info DIR/truth.json --scoreboard URL --token T --log-out F --outbox O [--every N]`` for the
   reference table; its wall time T sets the range of the kill moments.
4. The faults: the same command for the ``faults`` table (its own log and outbox), started
   ``--kills`` times and SIGKILLed each time after a moment of its own run: ``--kills`` moments
   drawn uniformly from [1 s, 0.97 T] (seeded by ``--kill-seed``) and sorted, so that each run
   gets further into the deal than the one before and new posts are queued all along. The
   scoreboard is stopped right after kill ``kills // 3`` and started again once ``--down`` seconds
   have passed *and* a run has left posts pending in the outbox (so that the check exercises
   them; or when no kill is left), wherever the kills are by then. Each restart reads the film
   from its start again (a film can be; a camera cannot). Then one last run goes to the end with
   the scoreboard up.
5. The checks, read from the scoreboard's database: the faults table's edge events (deal start,
   plays, trick results: kind and body), alerts and deals are the reference table's, each stored
   once (no two with the same content), as many idempotency records (health reports aside: sent
   best effort by each run, never queued, keyed ``health-…``); the outbox holds nothing
   pending and no refusal; the final ``--log-out`` equals the reference's.

Prints the parameters, each kill (moment; what the run found pending in the outbox when it
started; tricks in its log on disk, posts sent and pending in the outbox, edge events the scoreboard
holds when it was killed), the figures and PASS or FAIL (exit 0 or 1).
"""

from __future__ import annotations

import json
import os
import platform
import random
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

EDGE_KINDS = ("deal_start", "play", "trick")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Scoreboard:
    """``tractorcam scoreboard serve`` as a child process that can be stopped and started again."""

    def __init__(self, db: Path, log: Path) -> None:
        self.db = db
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.admin = secrets.token_urlsafe(24)
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "TRACTORCAM_ADMIN_TOKEN": self.admin}
        command = [sys.executable, "-m", "tractorcam_cli", "scoreboard", "serve"]
        command += ["--db", f"sqlite:///{self.db}", "--port", str(self.port)]
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(command, stdout=log, stderr=log, env=env, cwd=ROOT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the scoreboard exited ({self.proc.returncode}); see {self.log}")
            try:
                httpx.get(f"{self.url}/api/events", params={"limit": 1}, timeout=1.0)
                return
            except httpx.TransportError:
                time.sleep(0.2)
        raise RuntimeError("the scoreboard did not start in 60 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    @property
    def up(self) -> bool:
        return self.proc is not None

    def table(self, name: str, rules: str) -> tuple[str, str]:
        r = httpx.post(
            f"{self.url}/api/tables",
            json={"name": name, "rules": rules},
            headers={"Authorization": f"Bearer {self.admin}"},
        )
        r.raise_for_status()
        return r.json()["id"], r.json()["token"]


def run_command(
    film: Path, url: str, token: str, log_out: Path, outbox: Path, every: int | None
) -> list[str]:
    command = [sys.executable, "-m", "tractorcam_cli", "run", "--source", str(film / "video.mp4")]
    command += ["--table", str(film / "table.json"), "--info", str(film / "truth.json")]
    command += ["--scoreboard", url, "--token", token, "--log-out", str(log_out), "--outbox", str(outbox)]
    return command + (["--every", str(every)] if every is not None else [])


def outbox_counts(path: Path) -> dict[str, int]:
    if not path.exists():
        return {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10) as db:
        try:
            rows = db.execute("SELECT state, count(*), max(attempts) FROM posts GROUP BY state").fetchall()
        except sqlite3.OperationalError:  # killed before the table was made
            return {}
    out = {str(s): int(n) for s, n, _ in rows}
    out["max_attempts"] = max((int(a or 0) for _, _, a in rows), default=0)
    return out


def tricks_on_disk(log_out: Path) -> int | None:
    try:
        return len(json.loads(log_out.read_text())["tricks"])
    except (OSError, ValueError, KeyError):
        return None


def stored(db: Path, table_id: str) -> dict[str, Any]:
    """What the scoreboard holds for a table: its edge events (kind, body without the server's
    own fields), alerts, deals and idempotency records."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as c:
        events = [
            (kind, json.dumps(json.loads(payload), sort_keys=True))
            for kind, payload in c.execute(
                "SELECT kind, payload FROM events WHERE table_id = ? AND kind IN (?, ?, ?) ORDER BY id",
                (table_id, *EDGE_KINDS),
            )
        ]
        alerts = [
            tuple(r)
            for r in c.execute(
                "SELECT kind, seat, trick, reasoning, source FROM alerts WHERE table_id = ? ORDER BY id",
                (table_id,),
            )
        ]
        deals = [
            json.dumps(json.loads(log), sort_keys=True)
            for (log,) in c.execute(
                "SELECT v.log FROM deals d JOIN deal_versions v ON v.deal_id = d.id "
                "WHERE d.table_id = ? AND v.version = 1 ORDER BY d.seq",
                (table_id,),
            )
        ]
        keys = dict(
            c.execute(
                "SELECT scope, count(*) FROM idempotency WHERE table_id = ? AND key NOT LIKE 'health-%' "
                "GROUP BY scope",
                (table_id,),
            ).fetchall()
        )
    return {"events": events, "alerts": alerts, "deals": deals, "keys": keys}


def found(stderr: Path) -> str:
    """What a run said about its outbox when it started (``N pending ...``), or that it did not."""
    for line in stderr.read_text(errors="replace").splitlines():
        if line.startswith("outbox "):
            return line.split(": ", 1)[-1].replace(" from a previous run", "")
        if line.startswith("reading "):
            break
    return "killed before its outbox line"


def duplicates(items: list[Any]) -> int:
    return sum(n - 1 for n in Counter(items).values())


app = typer.Typer(add_completion=False)


@app.command(help=__doc__.split("\n\n")[0])
def main(
    seed: Annotated[int, typer.Option(help="the filmed deal's seed")] = 7,
    tricks: Annotated[int, typer.Option(help="film the first N tricks (0: the whole deal)")] = 4,
    size: Annotated[str, typer.Option(help="film size WxH")] = "1280x960",
    folder: Annotated[
        Path | None,
        typer.Option("--dir", help="the film's folder (default ~/.cache/tractorcam/faults-SEED-TRICKS)"),
    ] = None,
    work: Annotated[
        Path | None, typer.Option(help="logs, outboxes, the scoreboard's database (default: a temp dir)")
    ] = None,
    kills: Annotated[int, typer.Option(help="SIGKILLs, each followed by a restart")] = 10,
    down: Annotated[float, typer.Option(help="seconds the scoreboard is down")] = 60.0,
    every: Annotated[
        int | None, typer.Option(help="tractorcam run --every (default: run's own, every frame with zones)")
    ] = None,
    kill_seed: Annotated[int, typer.Option(help="seed of the kill moments")] = 0,
) -> None:
    """Exit status 0 when every check passes, 1 when one fails."""
    from edge_app.demo import default_folder, ensure_deal

    width, height = (int(v) for v in size.lower().split("x"))
    cut = tricks or None
    film = folder or default_folder(seed).with_name(f"faults-{seed}-{tricks}")
    work = work or Path(tempfile.mkdtemp(prefix="tractorcam-faults-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    rendered = ensure_deal(film, seed, cut, (width, height))
    truth = json.loads((film / "truth.json").read_text())
    frames = int(json.loads((film / "timeline.json").read_text()).get("frames", 0) or 0)
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}"
    )
    print(
        f"film {film} ({'rendered' if rendered else 'reused'}): seed {seed}, "
        f"{len(truth['tricks'])} tricks{' (cut short: not finished)' if not truth['finished'] else ''}, "
        f"{width}x{height}{f', {frames} frames' if frames else ''}; --every {every or 'as run'}, "
        f"{kills} kills (seed {kill_seed}), scoreboard down {down:g} s; work {work}"
    )

    board = Scoreboard(work / "scoreboard.db", work / "scoreboard.log")
    board.start()
    try:
        ref_id, ref_token = board.table("reference", truth["rules"])
        faults_id, faults_token = board.table("faults", truth["rules"])

        t0 = time.monotonic()
        ref_log, ref_box = work / "reference.json", work / "reference.outbox.sqlite"
        with (work / "reference.stderr").open("wb") as err:
            ref = subprocess.run(
                run_command(film, board.url, ref_token, ref_log, ref_box, every),
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=ROOT,
            )
        ref_s = time.monotonic() - t0
        print(f"reference run: {ref_s:.1f} s, exit {ref.returncode}: {ref.stdout.decode().strip()}")
        if ref.returncode != 0:
            print(f"FAIL: the reference run failed (see {work / 'reference.stderr'})")
            raise typer.Exit(1)

        rng = random.Random(kill_seed)
        log_out, box = work / "faults.json", work / "faults.outbox.sqlite"
        command = run_command(film, board.url, faults_token, log_out, box, every)
        down_after = kills // 3 if kills else -1
        down_since: float | None = None
        ended_early = 0

        def tend_board(force: bool = False) -> None:
            nonlocal down_since
            if down_since is None or time.monotonic() - down_since < down:
                return
            pending = outbox_counts(box).get("pending", 0)
            if pending or force:
                board.start()
                print(
                    f"  scoreboard up again after {time.monotonic() - down_since:.1f} s "
                    f"({pending} posts pending in the outbox)"
                )
                down_since = None

        moments = sorted(rng.uniform(1.0, 0.97 * ref_s) for _ in range(kills))
        for k, moment in enumerate(moments):
            with (work / f"faults-{k + 1}.stderr").open("wb") as err:
                proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT)
                t = time.monotonic()
                while time.monotonic() - t < moment and proc.poll() is None:
                    tend_board()
                    time.sleep(0.05)
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
                else:
                    ended_early += 1
                proc.wait()
            counts = outbox_counts(box)
            how = "killed" if proc.returncode == -signal.SIGKILL else f"ended first, exit {proc.returncode}"
            print(
                f"kill {k + 1}: after {moment:5.1f} s ({how}); at its start {found(work / f'faults-{k + 1}.stderr')}; "
                f"then tricks on disk {tricks_on_disk(log_out)}, outbox sent {counts.get('sent', 0)} "
                f"pending {counts.get('pending', 0)}, scoreboard {'up' if board.up else 'down'} "
                f"holding {len(stored(board.db, faults_id)['events'])} edge events"
            )
            if k == down_after:
                board.stop()
                down_since = time.monotonic()
                print(f"  scoreboard stopped for {down:g} s")
        if down_since is not None:
            time.sleep(max(0.0, down - (time.monotonic() - down_since)))
            tend_board(force=True)

        t0 = time.monotonic()
        runs = 0
        while True:
            runs += 1
            with (work / f"faults-final-{runs}.stderr").open("wb") as err:
                final = subprocess.run(command, stdout=subprocess.PIPE, stderr=err, cwd=ROOT)
            if final.returncode == 0 or runs == 3:
                break
        final_s = time.monotonic() - t0
        print(
            f"last run: {final_s:.1f} s, exit {final.returncode} ({runs} run(s)); "
            f"at its start {found(work / 'faults-final-1.stderr')}"
        )

        want, got = stored(board.db, ref_id), stored(board.db, faults_id)
        counts = outbox_counts(box)
        same_log = log_out.exists() and json.loads(log_out.read_text()) == json.loads(ref_log.read_text())
        checks = {
            "edge events as the reference's, in order": got["events"] == want["events"],
            "no edge event stored twice": duplicates(got["events"]) == 0,
            "alerts as the reference's": Counter(got["alerts"]) == Counter(want["alerts"]),
            "no alert stored twice": duplicates(got["alerts"]) == 0,
            "deals as the reference's, each once": got["deals"] == want["deals"]
            and duplicates(got["deals"]) == 0,
            "idempotency records as the reference's": got["keys"] == want["keys"],
            "outbox: nothing pending, nothing refused": counts.get("pending", 0) == 0
            and counts.get("refused", 0) == 0,
            "final log equal to the reference's": same_log,
        }
        kinds = Counter(k for k, _ in got["events"])
        print(
            f"stored for the faults table: {len(got['events'])} edge events ({dict(kinds)}), "
            f"duplicates {duplicates(got['events'])}; alerts {len(got['alerts'])}; deals {len(got['deals'])}; "
            f"idempotency records {got['keys']} (reference: {len(want['events'])} events, "
            f"{len(want['alerts'])} alerts, {len(want['deals'])} deals, {want['keys']})"
        )
        print(
            f"outbox {box}: {counts.get('sent', 0)} sent, {counts.get('pending', 0)} pending, "
            f"{counts.get('refused', 0)} refused, most attempts for one post {counts.get('max_attempts', 0)}; "
            f"runs killed {kills - ended_early} of {kills} (the others ended first)"
        )
        for name, ok in checks.items():
            print(f"  {'ok  ' if ok else 'FAIL'} {name}")
        ok = all(checks.values())
        print(f"{'PASS' if ok else 'FAIL'} in {time.monotonic() - started:.0f} s")
        raise typer.Exit(0 if ok else 1)
    finally:
        board.stop()


if __name__ == "__main__":
    app()
