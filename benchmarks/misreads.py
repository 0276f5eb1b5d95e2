"""False alerts from confident misreads: simulated deals read with cards misread in every frame.

    .venv/bin/python benchmarks/misreads.py [--deals 300] [--misreads 1 --misreads 2 ...] [--final-only]

Each deal (seeds 0…N-1, national-1deck and national-2deck in turn; a third with a revoke injected,
a third with a failed throw) is read with 1, 2 or 3 of its cards swapped for other cards of the
deck in every frame, which no agreement between readings can catch, and goes through the table
service's decoding and alert policy as it runs live (``tests/edge_app/misreads.py``: the deal so
far after every trick, then the finished deal). Prints, per number of misreads: false alerts
(revoke or failed-throw alerts the truth does not hold), the deals with one, the truth's
violations and how many were alerted, and the logs the engine refused. ``--final-only`` looks at
the finished deal alone.
"""

from __future__ import annotations

import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import typer  # noqa: E402
from tqdm import tqdm  # noqa: E402

from tests.edge_app.misreads import read_deal  # noqa: E402

app = typer.Typer(add_completion=False)


@app.command(help=__doc__.splitlines()[0])
def main(
    deals: Annotated[int, typer.Option(help="deals per number of misreads")] = 300,
    misreads: Annotated[list[int] | None, typer.Option(help="cards misread per deal (repeat)")] = None,
    final_only: Annotated[bool, typer.Option(help="alerts of the finished deal only")] = False,
) -> None:
    print(f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC {platform.machine()}")
    for n in misreads or [1, 2]:
        t = time.perf_counter()
        false = deals_false = truth = alerted = refused = 0
        for seed in tqdm(range(deals), desc=f"{n} misread(s)", leave=False):
            rules = ("national-1deck", "national-2deck")[seed % 2]
            d = read_deal(rules, seed, n, live=not final_only)
            false += len(d.false_alerts)
            deals_false += bool(d.false_alerts)
            truth += len(d.truth)
            alerted += len(d.truth & d.alerted)
            refused += d.refused is not None
        print(
            f"{n} misread(s) per deal, {deals} deals: false alerts {false} (in {deals_false} deals), "
            f"violations alerted {alerted}/{truth}, logs refused {refused}, {time.perf_counter() - t:.0f} s"
        )


if __name__ == "__main__":
    app()
