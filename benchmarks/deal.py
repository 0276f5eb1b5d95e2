"""The table service on filmed deals: per-play exact match, false revoke alerts, outcome, speed.

    .venv/bin/python benchmarks/deal.py DEAL_DIR [DEAL_DIR ...] [--every 5] [--inertia 2] [--oracle]
                                        [--replay-reads] [--calibrate] [--model DIR]

Each DEAL_DIR is a ``tractorcam synth deal --seed N --out DEAL_DIR`` (``video.mp4``, ``truth.json``,
``table.json``; the films use held-out card designs only). The video goes through the same
pipeline as ``tractorcam run`` (:func:`edge_app.pipeline.run_pipeline`) with the shipped reader;
the deal info (rules, level, trump, dealer) is taken from ``truth.json`` as an operator would enter
it (a match film, ``--deals N``, gives the first deal's rules, level and dealer only: each trump is
read from its declaration, each later level and dealer follow from the outcome). The reader's
answers are recorded in ``DEAL_DIR/reads.json``; ``--replay-reads`` measures the pipeline again on
them without the reader. ``--oracle`` replaces the reader by the film's own labels (``timeline.json``: every face-up
card with more than ``--oracle-visible`` of it in view) to measure the tracker alone.

Prints one line per deal and a total: plays exact (and right as far as named: unknown cards
standing for the rest; and as scored: the unknown cards the engine settles by the deck's
inventory and the order of leaders, ``resolved``, filled in), cards right, tricks found, bottom,
outcome, false and missed alerts (the alerts the table service raises as it runs: every event of each deal's :mod:`edge_app.events`
stream, fed as :mod:`edge_app.service` feeds it; doubtful alerts become looks),
looks asked of the referee, and seconds per reader call. ``--calibrate`` (films made with
``synth deal --markers``) calibrates each film from its corner markers as ``run`` does without
``--table``, and prints that calibration's error against the film's truth.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.table import TableGeometry  # noqa: E402
from edge_app.compare import DealComparison, compare_deals  # noqa: E402
from edge_app.deal import DealInfo, RecognisedDeal  # noqa: E402
from edge_app.events import EventStream  # noqa: E402
from edge_app.pipeline import run_pipeline  # noqa: E402
from engine.cards import parse_any  # noqa: E402
from engine.deal_log import parse_deal_log  # noqa: E402
from engine.rules import get_rule_set  # noqa: E402
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
                out.append(CardInstance(parse_any(c["card"]), 0, 1.0, (x1, y1, x2, y2), 2))
        return out

    return read, state


looks: dict[str, int] = {}


def recorded(
    folder: Path, read_fn: Any, state: dict[str, int], replay: bool, name: str = "reads.json"
) -> Any:
    """The reader with its answers recorded in ``DEAL_DIR/NAME`` (frame index → cards), or,
    with ``replay``, answered from that record without the reader: the pipeline and decoding
    measured again in seconds on the same readings."""
    path = folder / name
    if replay:
        if not path.exists():
            raise SystemExit(f"{path} missing: run once without --replay-reads to record the readings")
        saved = json.loads(path.read_text())

        def replayed(image: np.ndarray) -> list[CardInstance]:
            key = str(state["frame"])
            if key not in saved:
                raise SystemExit(f"{path} has no reading of frame {key} (recorded with another --every?)")
            return [CardInstance(parse_any(c), k, s, tuple(b), n) for c, k, s, b, n in saved[key]]

        return replayed, None
    record: dict[str, list[Any]] = {}

    def recording(image: np.ndarray) -> list[CardInstance]:
        out = list(read_fn(image))
        record[str(state["frame"])] = [
            [str(c.card), c.class_id, c.score, list(c.box), c.corners] for c in out
        ]
        return out

    return recording, lambda: path.write_text(json.dumps(record))


def self_calibrated(video: Path, truth: TableGeometry) -> TableGeometry:
    """The film calibrated from its corner markers (``synth deal --markers``), as ``tractorcam run``
    does without ``--table``: the sharpest of the first frames, the table's size as a referee
    measures it (the truth's); the geometry's error against the truth printed."""
    from calibration.markers import calibrate, marker_mm_of
    from vision.capture import sharpest_frame

    image = sharpest_frame(str(video), 10)
    assert image is not None, f"{video}: no frame"
    if not truth.markers:
        raise SystemExit("--calibrate needs a film with markers (tractorcam synth deal --markers 60)")
    marker_mm = marker_mm_of(truth)
    cal = calibrate(image, truth.table_width_mm, truth.table_height_mm, marker_mm)
    xs = np.arange(0.0, truth.table_width_mm + 0.01, 25.0)
    ys = np.arange(0.0, truth.table_height_mm + 0.01, 25.0)
    grid = np.array([(x, y) for x in xs for y in ys])
    err = np.linalg.norm(cal.geometry.pixel_to_table(truth.table_to_pixel(grid)) - grid, axis=1)
    print(
        f"{video.parent.name}: calibrated from markers {cal.markers}, RMS {float(np.sqrt(np.mean(err**2))):.2f} mm "
        f"(worst {err.max():.1f} mm) against the film's truth"
    )
    return cal.geometry.model_copy(
        update={"card_width_mm": truth.card_width_mm, "card_height_mm": truth.card_height_mm}
    )


@dataclass(frozen=True)
class Options:
    """The command line's options that :func:`run_one` reads."""

    every: int = 5
    inertia: int = 2
    oracle: bool = False
    oracle_visible: float = 0.0
    replay_reads: bool = False
    calibrate: bool = False
    zones: bool = False
    model: Path | None = None  # an enrolled deck: its readings recorded in their own file
    unknown_cards: bool = True  # False: readings without cards not named, in their own file


def run_one(folder: Path, args: Options, reader: Any) -> tuple[list[DealComparison], float, int]:
    """One film through the pipeline: the comparison of each deal it shows with its truth (a match
    film, ``--deals N``, shows several: only the first deal's rules, level and dealer are given,
    as an operator would at the start; every trump is read from its declaration)."""
    raw = json.loads((folder / "truth.json").read_text())
    truths = [parse_deal_log(t) for t in (raw if isinstance(raw, list) else [raw])]
    first = raw[0] if isinstance(raw, list) else raw
    geometry = TableGeometry.load(folder / "table.json")
    if args.calibrate:  # as `run` without --table: the film's own markers, the table's measured size
        geometry = self_calibrated(folder / "video.mp4", geometry)
    match = isinstance(raw, list)
    info = DealInfo(first["rules"], first["level"], None if match else first["trump"], first["dealer"])
    seconds = [0.0]
    state = {"frame": 0}
    zone_reader = None
    if args.oracle:
        read_fn, state = oracle(json.loads((folder / "timeline.json").read_text()), args.oracle_visible)
        save = None
    else:
        if reader is not None:  # the faces step looks for covered copies the game's decks hold
            reader = reader.with_decks(get_rule_set(first["rules"]).decks)
        if args.zones and not args.replay_reads:
            from vision.zones import ZoneReader

            zone_reader = ZoneReader(reader, geometry)

            def read_fn(image: np.ndarray) -> list[CardInstance]:
                return zone_reader.read(image)

        else:

            def read_fn(image: np.ndarray) -> list[CardInstance]:
                return reader.read(image).cards

        name = "reads-zones.json" if args.zones else "reads.json"
        if args.model is not None:  # an enrolled deck's readings, apart from the general reader's
            name = name.replace(".json", f"-{args.model.name}.json")
        if not args.unknown_cards:
            name = name.replace(".json", "-known.json")
        read_fn, save = recorded(folder, read_fn, state, args.replay_reads, name)

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

    # the events as the table service sends them (edge_app.service): each deal's stream fed the deal
    # so far after every trick, the finished deal, and the deal as it ended
    streams: dict[int, EventStream] = {}
    events: dict[int, list[Any]] = {}

    def feed(deal: RecognisedDeal, ended: bool = False) -> None:
        events.setdefault(deal.number, []).extend(
            streams.setdefault(deal.number, EventStream()).update(deal, ended=ended)
        )

    try:
        result = run_pipeline(
            frames(),
            timed,
            geometry,
            info,
            every=args.every,
            inertia=args.inertia,
            still_threshold=None if args.zones else 2.0,
            on_trick=feed,
            on_finished=feed,
            on_deal_end=lambda deal: feed(deal, True),
        )
        feed(result.deal, True)
    finally:
        src.close()
        if save is not None:
            save()  # the readings are kept even when the pipeline fails
    if zone_reader is not None:
        st = zone_reader.stats
        steps = ", ".join(f"{k} {v:.0f}" for k, v in sorted(st.ms_per_area().items()))
        print(
            f"{folder.name}: zones: {st.frames} frames, {st.areas} areas read and {st.confirmations} read again, "
            f"{st.deferred} put off (moving); ms per frame: signature {st.ms_per_frame().get('signature', 0):.1f}; "
            f"ms per area: {steps}"
        )
    logs = [d.log.to_json() for d in result.deals]
    (folder / ("read_oracle.json" if args.oracle else "read.json")).write_text(
        json.dumps(logs[0] if len(logs) == 1 else logs, indent=1)
    )
    out = []
    for k, truth in enumerate(truths):
        if k >= len(result.deals):
            out.append(compare_deals(replace(truth, tricks=(), bottom=None, finished=False), truth, set()))
            continue
        deal = result.deals[k]
        # what the table service raised: alerts it is sure of, looks for the rest
        raised = [e for e in events.get(deal.number, []) if e.type == "alert"]
        alerted = {
            f"{e.kind} {e.seat} trick {e.trick}" for e in raised if e.kind in ("revoke", "failed_throw")
        }
        looks[f"{folder.name}/{k}"] = sum(e.kind == "look" for e in raised)
        out.append(compare_deals(deal.log, truth, alerted))
    if len(result.deals) > len(truths):
        print(f"{folder.name}: {len(result.deals)} deals seen, the film has {len(truths)}")
    return out, seconds[0], result.stats.read


app = typer.Typer(add_completion=False)


@app.command(help=__doc__.splitlines()[0])
def main(
    deals: Annotated[
        list[Path], typer.Argument(help="synth deal folders (video.mp4, truth.json, table.json)")
    ],
    every: Annotated[int, typer.Option(help="read every N-th frame")] = 5,
    inertia: Annotated[int, typer.Option(help="readings a zone must hold before it counts")] = 2,
    oracle: Annotated[
        bool, typer.Option("--oracle", help="the film's own labels (timeline.json) instead of the reader")
    ] = False,
    oracle_visible: Annotated[
        float, typer.Option(help="--oracle: only cards with more than this share of them in view")
    ] = 0.0,
    replay_reads: Annotated[
        bool,
        typer.Option(
            "--replay-reads",
            help="answer from each film's recorded readings (reads.json) instead of the reader",
        ),
    ] = False,
    model: Annotated[
        Path | None, typer.Option(help="an enrolled deck's folder (tractorcam enroll learn): its classifier")
    ] = None,
    calibrate: Annotated[
        bool,
        typer.Option(
            "--calibrate",
            help="calibrate each film from its corner markers (synth deal --markers) instead of its table.json",
        ),
    ] = False,
    zones: Annotated[
        bool,
        typer.Option(
            "--zones",
            help="read only the table's changed areas at one scale (vision.zones.ZoneReader); readings kept in reads-zones.json (-DECK.json with --model)",
        ),
    ] = False,
    unknown_cards: Annotated[
        bool,
        typer.Option(
            "--unknown-cards/--no-unknown-cards",
            help="keep indices the classifier cannot name as cards not (fully) named, ??, K?, ?C, ?J "
            "(vision.reader.UnknownCards), as tractorcam run does by default; readings without them "
            "kept apart (reads-zones-known.json)",
        ),
    ] = True,
) -> None:
    args = Options(
        every, inertia, oracle, oracle_visible, replay_reads, calibrate, zones, model, unknown_cards
    )
    reader = None
    if not args.oracle and not args.replay_reads:
        from vision.reader import CardReader, default_reader_config, model_options

        reader = CardReader(
            default_reader_config("onnx", unknown_cards=unknown_cards, **model_options(model))
        )
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {platform.machine()} {platform.processor() or ''}".rstrip())
    tot: dict[str, float] = {}
    for folder in deals:
        comparisons, secs, reads = run_one(folder, args, reader)
        design = json.loads((folder / "timeline.json").read_text()).get("design", "?")
        for k, c in enumerate(comparisons):
            name = folder.name if len(comparisons) == 1 else f"{folder.name} deal {k + 1}"
            print(
                f"{name} ({design}): plays exact {c.plays_exact}/{c.plays} (right as far as named "
                f"{c.plays_consistent}; as scored {c.plays_scored}), cards right {c.cards_right}/{c.cards}, "
                f"tricks {c.tricks_read}/{c.tricks}, bottom {'right' if c.bottom_exact else 'wrong'}, "
                f"outcome {'right' if c.outcome_right else 'wrong'}, false alerts {len(c.false_alerts)} "
                f"{list(c.false_alerts)}, missed alerts {len(c.missed_alerts)}, "
                f"looks asked {looks.get(f'{folder.name}/{k}', 0)}, refused: {c.refused or 'no'}"
            )
            for key, v in (
                ("plays", c.plays),
                ("exact", c.plays_exact),
                ("scored", c.plays_scored),
                ("cards", c.cards),
                ("right", c.cards_right),
                ("false", len(c.false_alerts)),
                ("outcome", c.outcome_right),
                ("deals", 1),
                ("refused", c.refused is not None),
            ):
                tot[key] = tot.get(key, 0) + float(v)
        print(f"{folder.name}: {reads} reads, {secs / max(reads, 1):.2f} s per read")
    print(
        f"total: {int(tot['deals'])} deals, plays exact {tot['exact'] / tot['plays']:.2%} "
        f"({int(tot['exact'])}/{int(tot['plays'])}; as scored, the unknowns the engine settles "
        f"filled: {int(tot['scored'])}), cards right {tot['right'] / tot['cards']:.2%}, "
        f"outcome right {int(tot['outcome'])}/{int(tot['deals'])}, logs refused by the engine "
        f"{int(tot['refused'])}, false alerts {int(tot['false'])}"
    )


if __name__ == "__main__":
    app()
