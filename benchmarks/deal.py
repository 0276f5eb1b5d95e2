"""The table service on filmed deals: per-play exact match, false revoke alerts, outcome, speed.

    .venv/bin/python benchmarks/deal.py DEAL_DIR [DEAL_DIR ...] [--every 5] [--inertia 2] [--oracle]

Each DEAL_DIR is a ``tractorcam synth deal --seed N --out DEAL_DIR`` (``video.mp4``, ``truth.json``,
``table.json``; the films use held-out card designs only). The video goes through the same
pipeline as ``tractorcam run`` (:func:`edge_app.pipeline.run_pipeline`) with the shipped reader;
the deal info (rules, level, trump, dealer) is taken from ``truth.json`` as an operator would enter
it. ``--oracle`` replaces the reader by the film's own labels (``timeline.json``: every face-up
card with more than ``--oracle-visible`` of it in view) to measure the tracker alone.

Prints one line per deal and a total: plays exact (and right as far as named: unknown cards
standing for the rest), cards right, tricks found, bottom, outcome, false and missed alerts (the
alerts the table service raises: :mod:`edge_app.events`, which turns doubtful ones into looks),
looks asked of the referee, and seconds per reader call.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.table import TableGeometry  # noqa: E402
from edge_app.compare import DealComparison, compare_deals  # noqa: E402
from edge_app.deal import DealInfo  # noqa: E402
from edge_app.events import EventStream  # noqa: E402
from edge_app.pipeline import run_pipeline  # noqa: E402
from vision.capture import VideoFileSource  # noqa: E402
from vision.instances import CardInstance  # noqa: E402


def oracle(timeline: dict[str, Any], visible: float) -> Any:
    """A reader that returns the film's labels for the frame last asked about (see the docstring)."""
    starts = [k["frame"] for k in timeline["keyframes"]]
    state = {"frame": 0}

    def read(image: np.ndarray) -> list[CardInstance]:
        k = timeline["keyframes"][int(np.searchsorted(starts, state["frame"], side="right")) - 1]
        out = []
        for c in k["cards"]:
            if c["face_up"] and c["visible"] > visible:
                q = np.array(c["quad"])
                x1, y1 = q.min(axis=0)
                x2, y2 = q.max(axis=0)
                out.append(CardInstance(c["card"], 0, 1.0, (x1, y1, x2, y2), 2))
        return out

    return read, state


looks: dict[str, int] = {}


def run_one(folder: Path, args: argparse.Namespace, reader: Any) -> tuple[DealComparison, float, int]:
    truth = json.loads((folder / "truth.json").read_text())
    truth = {k: v for k, v in truth.items() if k not in ("hands", "injected")}
    geometry = TableGeometry.load(folder / "table.json")
    info = DealInfo(truth["rules"], truth["level"], truth["trump"], truth["dealer"])
    seconds = [0.0]
    if args.oracle:
        read_fn, state = oracle(json.loads((folder / "timeline.json").read_text()), args.oracle_visible)
    else:
        state = {"frame": 0}

        def read_fn(image: np.ndarray) -> list[CardInstance]:
            return reader.read(image).cards

    def timed(image: np.ndarray) -> list[CardInstance]:
        t = time.perf_counter()
        out = read_fn(image)
        seconds[0] += time.perf_counter() - t
        return out

    src = VideoFileSource(folder / "video.mp4")

    def frames() -> Any:
        for f in src:
            state["frame"] = f.index
            yield f

    try:
        result = run_pipeline(frames(), timed, geometry, info, every=args.every, inertia=args.inertia)
    finally:
        src.close()
    (folder / ("read_oracle.json" if args.oracle else "read.json")).write_text(
        json.dumps(result.deal.log, indent=1)
    )
    # what the table service would raise: alerts it is sure of, looks for the rest
    events = [e for e in EventStream().update(result.deal) if e.type == "alert"]
    alerted = {f"{e.kind} {e.seat} trick {e.trick}" for e in events if e.kind in ("revoke", "failed_throw")}
    looks[folder.name] = sum(e.kind == "look" for e in events)
    return compare_deals(result.deal.log, truth, alerted), seconds[0], result.stats.read


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("deals", nargs="+", type=Path)
    ap.add_argument("--every", type=int, default=5)
    ap.add_argument("--inertia", type=int, default=2)
    ap.add_argument("--oracle", action="store_true")
    ap.add_argument("--oracle-visible", type=float, default=0.0)
    ap.add_argument(
        "--unknown-cards",
        action="store_true",
        help="keep indices the classifier cannot name as cards written ?? (vision.reader.UnknownCards)",
    )
    args = ap.parse_args()
    reader = None
    if not args.oracle:
        from dataclasses import replace

        from vision.reader import CardReader, UnknownCards, default_reader_config

        config = default_reader_config("onnx")
        if args.unknown_cards:
            config = replace(config, unknown_cards=UnknownCards())
        reader = CardReader(config)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {platform.machine()} {platform.processor() or ''}".rstrip())
    tot: dict[str, float] = {}
    for folder in args.deals:
        c, secs, reads = run_one(folder, args, reader)
        design = json.loads((folder / "timeline.json").read_text()).get("design", "?")
        print(
            f"{folder.name} ({design}): plays exact {c.plays_exact}/{c.plays} (right as far as named "
            f"{c.plays_consistent}), cards right {c.cards_right}/{c.cards}, "
            f"tricks {c.tricks_read}/{c.tricks}, bottom {'right' if c.bottom_exact else 'wrong'}, "
            f"outcome {'right' if c.outcome_right else 'wrong'}, false alerts {len(c.false_alerts)} "
            f"{list(c.false_alerts)}, missed alerts {len(c.missed_alerts)}, looks asked {looks.get(folder.name, 0)}, "
            f"refused: {c.refused or 'no'}; "
            f"{reads} reads, {secs / max(reads, 1):.2f} s per read"
        )
        for key, v in (
            ("plays", c.plays),
            ("exact", c.plays_exact),
            ("cards", c.cards),
            ("right", c.cards_right),
            ("false", len(c.false_alerts)),
            ("outcome", c.outcome_right),
            ("deals", 1),
            ("refused", c.refused is not None),
        ):
            tot[key] = tot.get(key, 0) + float(v)
    print(
        f"total: {int(tot['deals'])} deals, plays exact {tot['exact'] / tot['plays']:.2%} "
        f"({int(tot['exact'])}/{int(tot['plays'])}), cards right {tot['right'] / tot['cards']:.2%}, "
        f"outcome right {int(tot['outcome'])}/{int(tot['deals'])}, logs refused by the engine "
        f"{int(tot['refused'])}, false alerts {int(tot['false'])}"
    )


if __name__ == "__main__":
    main()
