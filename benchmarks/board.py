"""The bridge table service on filmed boards: per-play exact match (and as scored: the unknown
cards the rules settle filled), dummy, score, revokes alerted, false alerts, looks, and the speed
against the film.

    .venv/bin/python benchmarks/board.py BOARD_DIR [BOARD_DIR ...] [--model DIR] [--every 1] [--inertia 2]

Each BOARD_DIR is a ``tractorcam synth deal --game bridge --seed N --out BOARD_DIR`` (``video.mp4``,
``truth.json``, ``table.json``; held-out card designs only). The video goes through the bridge
pipeline (:func:`edge_app.bridge.run_bridge_pipeline`) with the zone reader, as ``tractorcam run``
reads a bridge table; the board, contract and declarer are taken from ``truth.json`` as the table's
operator would enter them. Prints one line per board and a total, with the date and machine.
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

from bridge.play import score_log  # noqa: E402
from calibration.table import TableGeometry  # noqa: E402
from edge_app.bridge import BoardInfo, RecognisedBoard, run_bridge_pipeline  # noqa: E402
from vision.capture import AheadFrames, VideoFileSource  # noqa: E402

app = typer.Typer(add_completion=False)


def compare(read: RecognisedBoard, truth: dict[str, Any]) -> dict[str, Any]:
    """The board as read against its truth: plays exact (the same seat's card in the same trick),
    dummy's cards, the score, each revoke the truth holds alerted or not, false alerts, looks."""
    plain = {k: v for k, v in truth.items() if k not in ("hands", "injected")}
    want = score_log(plain)
    got_tricks = read.log.get("tricks", [])
    settled = {(r["trick"], r["seat"]): r["card"] for r in (read.result or {}).get("resolved", [])}
    exact = scored = plays = 0
    for k, trick in enumerate(plain["tricks"]):
        got = dict(tuple(p) for p in got_tricks[k]["plays"]) if k < len(got_tricks) else {}
        for seat, card in trick["plays"]:
            plays += 1
            exact += got.get(seat) == card
            scored += settled.get((k + 1, seat), got.get(seat)) == card
    dummy_right = len(set(read.log.get("dummy", [])) & set(plain.get("dummy", [])))
    true_revokes = {(v["seat"], v["trick"]) for v in want["violations"]}
    alerted = {(a["seat"], a["trick"]) for a in read.alerts}
    return {
        "plays": plays,
        "exact": exact,
        "scored": scored,
        "dummy": dummy_right,
        "score_right": read.result is not None and read.result.get("score") == want.get("score"),
        "missed": sorted(true_revokes - alerted),
        "false": sorted(alerted - true_revokes),
        "revokes": len(true_revokes),
        "looks": len(read.looks),
        "problem": read.problem,
    }


@app.command(help=__doc__.splitlines()[0])
def main(
    boards: Annotated[list[Path], typer.Argument(help="synth deal --game bridge folders")],
    model: Annotated[Path | None, typer.Option(help="an enrolled deck's folder")] = None,
    every: Annotated[int, typer.Option(help="read every N-th frame")] = 1,
    inertia: Annotated[int, typer.Option(help="readings a zone must hold before it counts")] = 2,
) -> None:
    from vision.reader import CardReader, default_reader_config, model_options
    from vision.zones import ZoneReader

    reader = CardReader(default_reader_config("onnx", unknown_cards=True, **model_options(model))).with_decks(
        1
    )
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {platform.machine()} {platform.processor() or ''}".rstrip())
    tot: dict[str, float] = {}
    for folder in boards:
        truth = json.loads((folder / "truth.json").read_text())
        timeline = json.loads((folder / "timeline.json").read_text())
        geometry = TableGeometry.load(folder / "table.json")
        info = BoardInfo(truth["board"], truth["contract"], truth["declarer"], truth.get("vulnerable"))
        zones = ZoneReader(reader, geometry)
        start = time.perf_counter()
        frames = AheadFrames(VideoFileSource(folder / "video.mp4"))
        try:
            result = run_bridge_pipeline(frames, zones.read, geometry, info, every=every, inertia=inertia)
        finally:
            frames.close()
        wall = time.perf_counter() - start
        film = timeline["frames"] / timeline["fps"]
        c = compare(result.board, truth)
        exact_board = c["exact"] == c["plays"] and c["dummy"] == 13
        print(
            f"{folder.name} ({timeline['design']}, {truth['contract']} by {truth['declarer']}): plays exact "
            f"{c['exact']}/{c['plays']} (as scored, the unknowns the rules settle filled: {c['scored']}), dummy {c['dummy']}/13, score {'right' if c['score_right'] else 'wrong'}, "
            f"revokes alerted {c['revokes'] - len(c['missed'])}/{c['revokes']}, false alerts {len(c['false'])} "
            f"{c['false']}, looks {c['looks']}{' (read exactly)' if exact_board else ''}, "
            f"refused: {c['problem'] or 'no'}; wall {wall:.0f} s for a {film:.0f} s film ({wall / film:.2f}× real time)"
        )
        for line in result.board.looks:
            print(f"  look: {line}")
        for key, v in (
            ("plays", c["plays"]),
            ("exact", c["exact"]),
            ("scored", c["scored"]),
            ("boards", 1),
            ("score", c["score_right"]),
            ("revokes", c["revokes"]),
            ("alerted", c["revokes"] - len(c["missed"])),
            ("false", len(c["false"])),
            ("looks_exact", c["looks"] if exact_board else 0),
            ("wall", wall),
            ("film", film),
        ):
            tot[key] = tot.get(key, 0.0) + float(v)
    print(
        f"total: {int(tot['boards'])} boards, plays exact {tot['exact'] / tot['plays']:.2%} "
        f"({int(tot['exact'])}/{int(tot['plays'])}; as scored {int(tot['scored'])}), score right {int(tot['score'])}/{int(tot['boards'])}, "
        f"revokes alerted {int(tot['alerted'])}/{int(tot['revokes'])}, false alerts {int(tot['false'])}, "
        f"looks on boards read exactly {int(tot['looks_exact'])}; wall {tot['wall']:.0f} s for "
        f"{tot['film']:.0f} s of film ({tot['wall'] / tot['film']:.2f}× real time)"
    )


if __name__ == "__main__":
    app()
