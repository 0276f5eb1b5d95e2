"""Swiss pairing speed: a field of N entries (512 by default) in round R (5), the earlier rounds
paired by the same code and played with seeded random results; only the last pairing is timed.

    .venv/bin/python benchmarks/pairing.py [--entries 512] [--round 5] [--units 8] [--repeat 3]

The target (issue 43): under 2 s for 512 entries in round 5 on a 2-core x86_64 machine. It also
prints how far apart in points the paired entries are and how many rules the pairing relaxed.
"""

from __future__ import annotations

import platform
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

# Run from anywhere: the repository root on the import path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tourney import pair_next, parse_event, standings  # noqa: E402

LEVELS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]


def field(entries: int, units: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    return {
        "format": "swiss",
        "scoring": "zhku",
        "seed": seed,
        "entries": [
            {"id": f"E{k:04d}", "name": f"Pair {k}", "unit": f"Unit {rng.randrange(units)}"}
            for k in range(entries)
        ],
        "rounds": [],
    }


def play(data: dict[str, Any], rng: random.Random) -> None:
    """Pair the next round and give every match a random result."""
    out = pair_next(parse_event(data)).to_json()
    items = []
    for m in out["matches"]:
        if "table" in m:
            m = dict(m, result={"home_level": rng.choice(LEVELS), "away_level": rng.choice(LEVELS)})
        items.append(m)
    data["rounds"].append({"round": out["round"], "matches": items})


app = typer.Typer(add_completion=False)


@app.command(help=__doc__)
def main(
    entries: Annotated[int, typer.Option(help="entries in the field")] = 512,
    timed_round: Annotated[int, typer.Option("--round", help="the round whose pairing is timed")] = 5,
    units: Annotated[
        int, typer.Option(help="units the entries belong to (two of one unit are not paired)")
    ] = 8,
    seed: Annotated[int, typer.Option(help="seed of the field and of the earlier rounds' results")] = 1,
    repeat: Annotated[int, typer.Option(help="timed pairings; the best is reported")] = 3,
) -> None:
    print(f"pairing benchmark on {platform.machine()} python {platform.python_version()}")
    data = field(entries, units, seed)
    rng = random.Random(seed)
    for _ in range(timed_round - 1):
        play(data, rng)
    event = parse_event(data)
    best = cpu_best = float("inf")
    for _ in range(repeat):
        start, cpu_start = time.perf_counter(), time.process_time()
        pairing = pair_next(event)
        best = min(best, time.perf_counter() - start)
        cpu_best = min(cpu_best, time.process_time() - cpu_start)
    points = {r.id: r.points for r in standings(event).rows}
    gaps = Counter(abs(points[m.home] - points[m.away]) for m in pairing.matches)
    print(
        f"{entries} entries, {units} units, round {pairing.round}: "
        f"{len(pairing.matches)} matches, {len(pairing.byes)} bye, {len(pairing.relaxed)} relaxed"
    )
    print("point gap of the pairs: " + ", ".join(f"{gap}: {n}" for gap, n in sorted(gaps.items())))
    print(f"pairing time: {best:.3f} s wall, {cpu_best:.3f} s CPU (best of {repeat})")


if __name__ == "__main__":
    app()
