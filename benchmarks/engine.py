"""Engine throughput: score N simulated full deals per rule set and print deals per second.

    .venv/bin/python benchmarks/engine.py [--deals 300] [--rules national-2deck [--rules ...]] [--unknown 0.05]

Deals are simulated first (not timed); only ``score_log`` (parse + tricks + evidence model +
outcome) is timed, as the scoreboard and the table service call it. ``--unknown F`` writes a
share F of each deal's cards (seeded) as the camera would when it cannot name them (``??``, or
their rank or suit alone; a joker ``?J``): the engine's unknown-card path.
"""

from __future__ import annotations

import json
import platform
import random
import sys
import time
from pathlib import Path
from typing import Annotated

# This file is named like the package it measures: keep its own folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import typer  # noqa: E402

from engine import RULE_SET_IDS, score_log  # noqa: E402
from engine.sim import simulate_deal  # noqa: E402

app = typer.Typer(add_completion=False)


@app.command(help=__doc__)
def main(
    deals: Annotated[int, typer.Option(help="simulated deals per rule set")] = 300,
    rule_sets: Annotated[
        list[str] | None,
        typer.Option("--rules", help="a rule set to score (repeat it for several; default: every one)"),
    ] = None,
    repeat: Annotated[int, typer.Option(help="timed passes; the best is reported")] = 3,
    unknown: Annotated[float, typer.Option(help="share of cards written unknown")] = 0.0,
) -> None:
    print(
        f"engine benchmark on {platform.machine()} {platform.processor() or ''} python {platform.python_version()}"
    )
    print("deals/s by wall clock, and by this process's CPU time (steadier on a shared machine)")
    print(
        f"{'rule set':18} {'deals':>6} {'tricks/deal':>12} {'deals/s':>10} {'ms/deal':>9} {'CPU deals/s':>12}"
    )
    for rules in rule_sets or RULE_SET_IDS:
        logs = [hide(simulate_deal(rules, seed), unknown, seed) for seed in range(deals)]
        tricks = sum(len(log["tricks"]) for log in logs) / len(logs)
        best = cpu_best = float("inf")
        for _ in range(repeat):
            start, cpu_start = time.perf_counter(), time.process_time()
            for log in logs:
                score_log(log)
            best = min(best, time.perf_counter() - start)
            cpu_best = min(cpu_best, time.process_time() - cpu_start)
        rate = len(logs) / best
        cpu_rate = len(logs) / max(cpu_best, 1e-9)
        print(f"{rules:18} {len(logs):6d} {tricks:12.1f} {rate:10.0f} {1000 / rate:9.2f} {cpu_rate:12.0f}")


def hide(log: dict, share: float, seed: int) -> dict:
    """``log`` with a share of its cards (plays and bottom) written as partly or wholly unknown."""
    if share <= 0:
        return log
    rng = random.Random(seed)
    out = json.loads(json.dumps(log))
    lists = [play[1] for trick in out["tricks"] for play in trick["plays"]] + [out["bottom"]]
    for cards in lists:
        for i, card in enumerate(cards):
            if rng.random() < share:
                how = rng.randrange(3)
                if card in ("BJ", "SJ"):
                    cards[i] = "?J" if how else "??"
                else:
                    cards[i] = ["??", card[:-1] + "?", "?" + card[-1]][how]
    for trick in out["tricks"]:
        for play in trick["plays"]:
            del play[2:]  # a declared split names its cards
    return out


if __name__ == "__main__":
    app()
