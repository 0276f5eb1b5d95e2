"""Engine throughput: score N simulated full deals per rule set and print deals per second.

    .venv/bin/python benchmarks/engine.py [--deals 300] [--rules national-2deck ...] [--unknown 0.05]

Deals are simulated first (not timed); only ``score_log`` (parse + tricks + evidence model +
outcome) is timed, as the scoreboard and the table service call it. ``--unknown F`` writes a
share F of each deal's cards (seeded) as the camera would when it cannot name them (``??``, or
their rank or suit alone; a joker ``?J``): the engine's unknown-card path.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from pathlib import Path

# This file is named like the package it measures: keep its own folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from engine import RULE_SET_IDS, score_log  # noqa: E402
from engine.sim import simulate_deal  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--rules", nargs="*", default=list(RULE_SET_IDS))
    parser.add_argument("--repeat", type=int, default=3, help="timed passes; the best is reported")
    parser.add_argument("--unknown", type=float, default=0.0, help="share of cards written unknown")
    args = parser.parse_args()
    print(
        f"engine benchmark on {platform.machine()} {platform.processor() or ''} python {platform.python_version()}"
    )
    print("deals/s by wall clock, and by this process's CPU time (steadier on a shared machine)")
    print(
        f"{'rule set':18} {'deals':>6} {'tricks/deal':>12} {'deals/s':>10} {'ms/deal':>9} {'CPU deals/s':>12}"
    )
    for rules in args.rules:
        logs = [hide(simulate_deal(rules, seed), args.unknown, seed) for seed in range(args.deals)]
        tricks = sum(len(log["tricks"]) for log in logs) / len(logs)
        best = cpu_best = float("inf")
        for _ in range(args.repeat):
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
    main()
