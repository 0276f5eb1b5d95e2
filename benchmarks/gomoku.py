"""The gomoku table service on filmed games: every move right (colour and point, in order), each
move's time against the truth, the winner, the overtimes, looks (none is right on a quiet film) and
the speed against the film.

    .venv/bin/python benchmarks/gomoku.py GAME_DIR [GAME_DIR ...] [--every 1]

Each GAME_DIR is a ``tractorcam synth game --game gomoku --seed N --out GAME_DIR`` (``video.mp4``,
``truth.json``, ``table.json``; held-out looks unless told otherwise). The video goes through the
gomoku pipeline (:func:`edge_app.gomoku.run_gomoku_pipeline`) as ``tractorcam run --game gomoku``
reads a board, with the film's long-think presses as the table's key would give them. Prints one
line per game and a total, with the date and machine.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.table import TableGeometry  # noqa: E402
from edge_app.gomoku import GomokuResult, read_presses, run_gomoku_pipeline  # noqa: E402
from gomoku.rules import score_log  # noqa: E402
from vision.capture import AheadFrames, VideoFileSource  # noqa: E402

app = typer.Typer(add_completion=False)
#: The bar: each move timed within this many seconds of the truth.
TIMING_S = 0.5


def compare(read: GomokuResult, truth: dict[str, Any]) -> dict[str, Any]:
    """The game as read against its truth: moves right (same colour and point at the same number),
    each move's seconds off the truth's, the winner, the overtimes and long thinks."""
    want = score_log(truth)
    got = read.log["moves"]
    right = sum(1 for g, w in zip(got, truth["moves"], strict=False) if g[:2] == w[:2])
    errors = [abs(g[2] - w[2]) for g, w in zip(got, truth["moves"], strict=False) if g[:2] == w[:2]]
    result = read.result or {}
    return {
        "moves": len(truth["moves"]),
        "read": len(got),
        "right": right if len(got) == len(truth["moves"]) else min(right, len(got)),
        "worst": max(errors, default=0.0),
        "late": sum(e > TIMING_S for e in errors),
        "winner_right": result.get("winner") == want["winner"] and result.get("draw") == want["draw"],
        # the same moves over their time (the seconds themselves are checked as each move's time)
        "overtime_right": [(v["colour"], v["move"], v["limit"]) for v in result.get("violations", [])]
        == [(v["colour"], v["move"], v["limit"]) for v in want["violations"]],
        "thinks_right": read.log["long_thinks"] == {c: truth["long_thinks"].get(c, []) for c in ("B", "W")},
        "looks": len(read.looks),
        "problem": read.problem,
        "winner": want["winner"],
    }


@app.command(help=__doc__.splitlines()[0])
def main(
    games: Annotated[list[Path], typer.Argument(help="synth game --game gomoku folders")],
    every: Annotated[int, typer.Option(help="read every N-th frame")] = 1,
) -> None:
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {platform.machine()} {platform.processor() or ''}".rstrip())
    tot: dict[str, float] = {}
    for folder in games:
        truth = json.loads((folder / "truth.json").read_text())
        geometry = TableGeometry.load(folder / "table.json")
        presses = read_presses(truth.get("presses", []))
        start = time.perf_counter()
        frames = AheadFrames(VideoFileSource(folder / "video.mp4"))
        try:
            result = run_gomoku_pipeline(frames, geometry, presses=lambda p=presses: p, every=every)
        finally:
            frames.close()
        wall = time.perf_counter() - start
        film = result.frames / float(truth["fps"])
        c = compare(result, truth)
        print(
            f"{folder.name} ({truth['look']}): moves right {c['right']}/{c['moves']} (read {c['read']}), "
            f"worst time {c['worst']:.2f} s ({c['late']} over {TIMING_S} s), winner "
            f"{'right' if c['winner_right'] else 'wrong'} ({c['winner'] or 'none'}), overtimes "
            f"{'right' if c['overtime_right'] else 'wrong'}, long thinks {'right' if c['thinks_right'] else 'wrong'}, "
            f"looks {c['looks']}, refused: {c['problem'] or 'no'}; "
            f"wall {wall:.0f} s for a {film:.0f} s film ({wall / film:.2f}× real time)"
        )
        for look in result.looks:
            print(f"  look at {look.at:.1f} s: {look.reason}")
        for key, v in (
            ("games", 1),
            ("moves", c["moves"]),
            ("right", c["right"]),
            ("late", c["late"]),
            ("winner", c["winner_right"]),
            ("overtime", c["overtime_right"]),
            ("thinks", c["thinks_right"]),
            ("looks", c["looks"]),
            ("wall", wall),
            ("film", film),
        ):
            tot[key] = tot.get(key, 0.0) + float(v)
        tot["worst"] = max(tot.get("worst", 0.0), c["worst"])
    n = int(tot["games"])
    print(
        f"total: {n} games, moves right {int(tot['right'])}/{int(tot['moves'])}, worst time {tot['worst']:.2f} s "
        f"({int(tot['late'])} moves over {TIMING_S} s), winners right {int(tot['winner'])}/{n}, overtimes right "
        f"{int(tot['overtime'])}/{n}, long thinks right {int(tot['thinks'])}/{n}, looks {int(tot['looks'])}; "
        f"wall {tot['wall']:.0f} s for {tot['film']:.0f} s of film ({tot['wall'] / tot['film']:.2f}× real time)"
    )


if __name__ == "__main__":
    app()
