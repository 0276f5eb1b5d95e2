"""Load test of the scoreboard: N simulated tables post their edge events and finished deals
concurrently for a while; reports latency percentiles and checks that every event sent is stored
exactly once.

    .venv/bin/python benchmarks/scoreboard.py                      # 200 tables, 60 s, temp SQLite
    .venv/bin/python benchmarks/scoreboard.py --tables 20 --seconds 10
    .venv/bin/python benchmarks/scoreboard.py --db postgresql+psycopg://user@127.0.0.1:5432/db

It starts `tractorcam scoreboard serve` on a free loopback port (or uses --url with
TRACTORCAM_ADMIN_TOKEN). Each table plays simulated deals (engine.sim.simulate_deal): a
`deal_start` event, its first --plays-per-deal `play` events (so that finished deals are posted
often within a minute), then the finished deal log; one request every
--interval seconds on average (jittered). About one request in --replay-every is sent twice with the same
Idempotency-Key, as an edge does after a timeout. Exit status 1 if anything was lost or duplicated.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import random
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Load:
    """The load the command line asks for, and the server it goes to (its process, its database's kind)."""

    tables: int
    seconds: float
    interval: float
    replay_every: int
    deal_pool: int
    seed: int
    screens: int
    plays_per_deal: int
    db_label: str = ""
    server_pid: int | None = None


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    sent: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))  # table -> kind -> n
    keys: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # table -> deal keys
    errors: Counter[str] = field(default_factory=Counter)
    server_ms: list[float] = field(default_factory=list)  # Server-Timing: time inside the app
    screens: list[list[int]] = field(default_factory=list)  # event ids each SSE screen received
    lag: list[float] = field(default_factory=list)  # play stored -> seen on a screen, seconds
    replays: int = 0
    replay_mismatch: int = 0


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux /proc), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


class Connection:
    """One keep-alive HTTP/1.1 connection per table, as an edge has: a few lines of asyncio rather
    than an HTTP client library, so that the load generator's own CPU stays small next to the server's."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(
        self, path: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None and self.writer is not None
        head = [
            f"POST {path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            *(f"{k}: {v}" for k, v in headers.items()),
        ]
        try:
            self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
            status = int((await self.reader.readline()).split()[1])
            reply_headers: dict[str, str] = {}
            while (line := await self.reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                reply_headers[name.strip().lower()] = value.strip()
            length = int(reply_headers.get("content-length", "0"))
            data = await self.reader.readexactly(length) if length else b""
        except (OSError, asyncio.IncompleteReadError, IndexError, ValueError):
            self.close()
            raise
        return status, reply_headers, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def table_loop(
    base: str,
    table_id: str,
    token: str,
    deals: list[dict[str, Any]],
    deadline: float,
    args: Load,
    tally: Tally,
    rng: random.Random,
) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    url = httpx.URL(base)
    conn = Connection(url.host, url.port or 80)

    async def send(path: str, body: dict[str, Any], key: str, kind: str) -> None:
        h = {**headers, "Idempotency-Key": key}
        raw = json.dumps(body).encode()
        target = f"/api/tables/{table_id}/{path}"
        t0 = time.perf_counter()
        try:
            status, reply_headers, data = await conn.post(target, raw, h)
        except (OSError, asyncio.IncompleteReadError, IndexError, ValueError) as exc:
            tally.errors[f"{kind}: {type(exc).__name__}"] += 1
            return
        tally.latencies[kind].append(time.perf_counter() - t0)
        timing = reply_headers.get("server-timing", "")
        if timing.startswith("app;dur="):
            tally.server_ms.append(float(timing[8:]))
        if status != 201:
            tally.errors[f"{kind}: HTTP {status} {data[:120]!r}"] += 1
            return
        tally.sent[table_id][kind] += 1
        if kind == "deal":
            tally.keys[table_id].append(key)
        if args.replay_every and rng.random() < 1 / args.replay_every:
            t0 = time.perf_counter()
            again = await conn.post(target, raw, h)
            tally.latencies["replay"].append(time.perf_counter() - t0)
            tally.replays += 1
            if again[0] != status or json.loads(again[2]) != json.loads(data):
                tally.replay_mismatch += 1

    async def pause() -> None:
        await asyncio.sleep(args.interval * rng.uniform(0.5, 1.5))

    await asyncio.sleep(rng.uniform(0, args.interval))  # tables don't start in lockstep
    seq = 0
    while time.monotonic() < deadline:
        log = deals[rng.randrange(len(deals))]
        seq += 1
        start = {
            "type": "deal_start",
            "rules": log["rules"],
            "level": log["level"],
            "trump": log["trump"],
            "dealer": log["dealer"],
        }
        await send("events", start, f"d{seq}-start", "deal_start")
        plays_left = args.plays_per_deal or 10**6
        if seq == 1:  # tables join mid-deal, so their deals don't all finish together
            plays_left = rng.randint(1, plays_left) if args.plays_per_deal else plays_left
        for t, trick in enumerate(log["tricks"], start=1):
            for p, play in enumerate(trick["plays"]):
                if time.monotonic() >= deadline:
                    return
                plays_left -= 1
                if plays_left < 0:
                    break
                await pause()
                body = {"type": "play", "trick": t, "seat": play[0], "cards": play[1]}
                await send("events", body, f"d{seq}-t{t}-p{p}", "play")
        await pause()
        await send("deals", log, f"d{seq}-deal", "deal")
    conn.close()


async def fetch_all(
    client: httpx.AsyncClient, path: str, key: str, cursor: str, params: dict[str, Any], after: int = 0
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _ in range(100_000):
        r = await client.get(path, params={**params, "after": after, "limit": 500})
        r.raise_for_status()
        page = r.json()
        if not page[key]:
            break
        out += page[key]
        after = page[cursor]
    return out


async def screen(base: str, cursor: int, tally: Tally) -> None:
    """A projector: follows /api/stream from the cursor the run started at; records ids and lag."""
    seen: list[int] = []
    tally.screens.append(seen)
    async with (
        httpx.AsyncClient(base_url=base, timeout=None) as client,
        client.stream("GET", "/api/stream", params={"after": cursor}) as r,
    ):
        async for line in r.aiter_lines():
            if line.startswith("data: "):
                ev = json.loads(line[6:])
                seen.append(ev["id"])
                if ev["kind"] == "play" and ev.get("at"):
                    at = datetime.fromisoformat(ev["at"])
                    at = at if at.tzinfo else at.replace(tzinfo=UTC)
                    tally.lag.append((datetime.now(UTC) - at).total_seconds())


async def verify(client: httpx.AsyncClient, tables: list[tuple[str, str]], tally: Tally) -> list[str]:
    problems: list[str] = []
    for table_id, _ in tables:
        events = await fetch_all(client, "/api/events", "events", "cursor", {"table": table_id})
        ids = [e["id"] for e in events]
        if len(ids) != len(set(ids)):
            problems.append(f"{table_id}: duplicate event ids")
        stored = Counter(e["kind"] for e in events)
        sent = tally.sent[table_id]
        for kind in ("deal_start", "play", "deal"):
            if stored[kind] != sent[kind]:
                problems.append(f"{table_id}: {kind} sent {sent[kind]}, stored {stored[kind]}")
        deals = await fetch_all(client, f"/api/tables/{table_id}/deals", "deals", "next", {})
        keys = [d["idempotency_key"] for d in deals]
        if keys != tally.keys[table_id]:
            problems.append(
                f"{table_id}: deals stored {len(keys)} (keys {len(set(keys))}), "
                f"sent {len(tally.keys[table_id])}"
            )
    return problems


RULES = ["national-2deck", "national-3deck", "zhku-3deck", "challenge-2deck", "national-1deck"]


def pick_deals(n: int) -> dict[str, list[dict[str, Any]]]:
    """``n`` simulated deals of each rule set (a table keeps one rule set)."""
    sys.path.insert(0, str(ROOT))
    from engine.sim import simulate_deal

    return {rules: [simulate_deal(rules, seed=i) for i in range(n)] for rules in RULES}


async def run(args: Load, base: str, admin: str) -> int:
    tally = Tally()
    deals = pick_deals(args.deal_pool)
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:  # setup and checks only
        tables: list[tuple[str, str]] = []
        run_id = secrets.token_hex(3)
        for i in range(args.tables):
            r = await client.post(
                "/api/tables",
                json={"name": f"bench-{run_id}-{i:03d}"},
                headers={"Authorization": f"Bearer {admin}"},
            )
            r.raise_for_status()
            tables.append((r.json()["id"], r.json()["token"]))
        start_cursor = (await client.get("/api/tables")).json()["cursor"]
        deadline = time.monotonic() + args.seconds
        started = time.monotonic()
        cpu0 = cpu_seconds(args.server_pid) if args.server_pid else None
        client0 = time.process_time()
        screens = [asyncio.create_task(screen(base, start_cursor, tally)) for _ in range(args.screens)]
        await asyncio.gather(
            *(
                table_loop(
                    base,
                    tid,
                    tok,
                    deals[RULES[i % len(RULES)]],
                    deadline,
                    args,
                    tally,
                    random.Random(f"{args.seed}-{i}"),
                )
                for i, (tid, tok) in enumerate(tables)
            )
        )
        elapsed = time.monotonic() - started
        cpu1 = cpu_seconds(args.server_pid) if args.server_pid else None
        client_cpu = time.process_time() - client0
        problems = await verify(client, tables, tally)
        stored = await fetch_all(client, "/api/events", "events", "cursor", {}, after=start_cursor)
        await asyncio.sleep(3)  # let the screens drain
        for task in screens:
            task.cancel()
        await asyncio.gather(*screens, return_exceptions=True)
        stored_ids = [e["id"] for e in stored]
        for n, seen in enumerate(tally.screens, start=1):
            if seen[: len(stored_ids)] != stored_ids:
                missing = len(set(stored_ids) - set(seen))
                problems.append(
                    f"screen {n}: saw {len(seen)} events ({len(set(seen))} distinct, "
                    f"{missing} of {len(stored_ids)} missing), not the feed in order"
                )

    every = [x for kind, v in tally.latencies.items() if kind != "replay" for x in v]
    sent_total = sum(sum(c.values()) for c in tally.sent.values())
    print(
        f"scoreboard benchmark: {args.tables} tables, {elapsed:.1f} s, interval {args.interval} s/table, "
        f"db {args.db_label}"
    )
    print(
        f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(
        f"requests: {len(every)} ({len(every) / elapsed:.0f}/s), stored events+deals: {sent_total}, "
        f"replays: {tally.replays} (mismatched {tally.replay_mismatch}), errors: {sum(tally.errors.values())}"
    )
    print(f"{'kind':<11} {'n':>7} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for kind, values in sorted(tally.latencies.items()) + [("all", every)]:
        ms = [v * 1000 for v in values]
        print(
            f"{kind:<11} {len(ms):>7} {statistics.median(ms) if ms else float('nan'):>8.1f} "
            f"{percentile(ms, 90):>8.1f} {percentile(ms, 99):>8.1f} {max(ms, default=float('nan')):>8.1f}"
        )
    if cpu0 is not None and cpu1 is not None and every:
        print(
            f"server CPU: {cpu1 - cpu0:.1f} s in {elapsed:.0f} s ({(cpu1 - cpu0) / elapsed:.0%} of one core), "
            f"{(cpu1 - cpu0) * 1000 / len(every):.1f} ms per request; "
            f"this client: {client_cpu:.1f} s ({client_cpu / elapsed:.0%} of one core)"
        )
    sm = tally.server_ms
    print(
        f"{'in server':<11} {len(sm):>7} {statistics.median(sm) if sm else float('nan'):>8.1f} "
        f"{percentile(sm, 90):>8.1f} {percentile(sm, 99):>8.1f} {max(sm, default=float('nan')):>8.1f}"
        "   (Server-Timing: app time, without the client's and the network's)"
    )
    for err, n in tally.errors.most_common(5):
        print(f"error x{n}: {err}")
    if tally.screens:
        lag = [x * 1000 for x in tally.lag]
        print(
            f"{len(tally.screens)} SSE screens: each saw every stored event once, in order: "
            f"{'no' if any(p.startswith('screen') for p in problems) else 'yes'}; "
            f"play stored -> on screen p50 {statistics.median(lag) if lag else float('nan'):.0f} ms, "
            f"p99 {percentile(lag, 99):.0f} ms"
        )
    print("stored = sent, no duplicates: " + ("yes" if not problems else f"NO ({len(problems)} problems)"))
    for problem in problems[:10]:
        print("  " + problem)
    p99 = percentile([v * 1000 for v in every], 99)
    print(f"goal p99 < 100 ms: {'met' if p99 < 100 else 'missed'} (p99 {p99:.1f} ms)")
    return 1 if problems or tally.errors or tally.replay_mismatch else 0


def run_async(coro: Any) -> int:
    try:
        import uvloop  # the server's loop too (a dependency of the project)
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)  # type: ignore[no-any-return]


app = typer.Typer(add_completion=False)


@app.command(help=__doc__.split("\n\n")[0])
def main(
    tables: Annotated[int, typer.Option(help="simulated tables")] = 200,
    seconds: Annotated[float, typer.Option(help="how long the tables post")] = 60,
    interval: Annotated[float, typer.Option(help="mean seconds between a table's requests")] = 3.0,
    db: Annotated[
        str | None, typer.Option(help="SQLAlchemy URL for the server (default: a temp SQLite file)")
    ] = None,
    url: Annotated[
        str | None, typer.Option(help="use a running server instead (needs TRACTORCAM_ADMIN_TOKEN)")
    ] = None,
    replay_every: Annotated[int, typer.Option(help="send about one request in n twice (0: never)")] = 25,
    deal_pool: Annotated[int, typer.Option(help="distinct simulated deals per rule set")] = 8,
    seed: Annotated[
        int, typer.Option(help="seed of each table's random choices (deals, timing, replays)")
    ] = 1,
    screens: Annotated[int, typer.Option(help="SSE followers (projectors) checking the live feed")] = 2,
    plays_per_deal: Annotated[
        int, typer.Option(help="play events streamed before each finished deal is posted (0: the whole deal)")
    ] = 12,
) -> None:
    """Exit status 1 when anything was lost or duplicated (2: --url without TRACTORCAM_ADMIN_TOKEN)."""
    args = Load(
        tables=tables,
        seconds=seconds,
        interval=interval,
        replay_every=replay_every,
        deal_pool=deal_pool,
        seed=seed,
        screens=screens,
        plays_per_deal=plays_per_deal,
    )
    if url:
        admin = os.environ.get("TRACTORCAM_ADMIN_TOKEN", "")
        if not admin:
            print("error: --url needs TRACTORCAM_ADMIN_TOKEN", file=sys.stderr)
            raise typer.Exit(2)
        args.db_label = "(external server)"
        args.server_pid = None
        raise typer.Exit(run_async(run(args, url.rstrip("/"), admin)))
    with tempfile.TemporaryDirectory(prefix="scoreboard-bench-") as tmp:
        db = db or f"sqlite:///{tmp}/bench.db"
        args.db_label = db.split("://")[0]
        admin = secrets.token_urlsafe(16)
        port = free_port()
        exe = Path(sys.executable).parent / "tractorcam"
        server = subprocess.Popen(
            [str(exe), "scoreboard", "serve", "--db", db, "--host", "127.0.0.1", "--port", str(port)],
            env={**os.environ, "TRACTORCAM_ADMIN_TOKEN": admin},
            stdout=subprocess.DEVNULL,
        )
        args.server_pid = server.pid
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(300):
                try:
                    if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if server.poll() is not None:
                    print("error: the server exited", file=sys.stderr)
                    raise typer.Exit(1)
                time.sleep(0.1)
            raise typer.Exit(run_async(run(args, base, admin)))
        finally:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    app()
