"""Does the table service keep up with the camera? ``tractorcam run``'s pipeline on filmed deals.

    .venv/bin/python benchmarks/realtime.py FILM [FILM ...] [--every 1] [--inertia 2] [--model DIR]

Each FILM is a ``tractorcam synth deal --seed N --out FILM`` (1920×1440, 10 fps by default). The
film is decoded on a thread of its own a few frames ahead, as ``run`` decodes a file
(:class:`vision.capture.AheadFrames`; a camera gives its frames on its own thread), and read as
``tractorcam run --table FILM/table.json`` reads a camera: every ``--every``-th frame through
:class:`vision.zones.ZoneReader` (the changed, still areas of the rectified table at one scale),
the tracker and the deal builder (:func:`edge_app.pipeline.run_pipeline`).
The deal info (rules, level, trump, dealer) comes from ``truth.json`` as an operator enters it.
``--model DIR`` reads with an event's enrolled deck, as ``tractorcam run --model DIR`` does; the
reader knows the game's decks (from the rule set) and keeps cards it cannot name in full, as ``run``
does by default (``--no-unknown-cards``: not).

Prints per film and in total:

* **wall time against the film's length** (keeps up when wall ≤ film);
* **readings per play**: the areas read while each play lay on the table (from the card landing to
  the table's clear, ``timeline.json``) that read cards in that seat's zone; the bar is ≥ 2 for
  every play. Beside it, how often the area holding the play's cards was read at all (the
  service's cadence, whatever the reader made of the pixels); a play read fewer than twice is
  listed with both counts, so a missed reading is told apart from a card the reader cannot see;
* **trick latency**: film seconds from the trick's last card landing to the first frame at which
  the tracker holds all four plays as finally decided (the trick's result is known; the service
  publishes it when the table is cleared, once no further reading can change it);
* plays exact, outcome, false and missed alerts (as ``benchmarks/deal.py``), and the looks the
  table service would send a referee for (each listed; on a deal read exactly there should be none);
* milliseconds by step: waiting for the decoder, the change test per frame, and per area read (rectify,
  localise, name, group; faces with an enrolled deck), with the areas known bare and not read.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.table import TableGeometry  # noqa: E402
from edge_app.compare import compare_deals  # noqa: E402
from edge_app.deal import DealInfo  # noqa: E402
from edge_app.events import EventStream  # noqa: E402
from edge_app.pipeline import run_pipeline  # noqa: E402
from engine.deal_log import parse_deal_log  # noqa: E402
from engine.rules import get_rule_set  # noqa: E402
from vision.capture import AheadFrames, Frame, VideoFileSource  # noqa: E402
from vision.instances import CardInstance  # noqa: E402
from vision.reader import CardReader, default_reader_config, model_options  # noqa: E402
from vision.tracking import TableState, TrickTracker  # noqa: E402
from vision.zones import ZoneConfig, ZoneReader  # noqa: E402


def play_spans(timeline: dict[str, Any]) -> list[tuple[int, str, int, int]]:
    """Each play of the film: (trick, seat, frame its card lands, frame its trick is cleared)."""
    first: dict[tuple[int, str], int] = {}
    cleared: dict[int, int] = {}
    for k in timeline["keyframes"]:
        e = k["event"]
        if e["kind"] == "play":
            first.setdefault((e["trick"], e["seat"]), k["frame"])
        elif e["kind"] == "cleared":
            cleared.setdefault(e["trick"], k["frame"])
    end = int(timeline["frames"])
    return [(t, seat, f, cleared.get(t, end)) for (t, seat), f in sorted(first.items(), key=lambda kv: kv[1])]


def play_middles(timeline: dict[str, Any]) -> dict[tuple[int, str], list[tuple[float, float]]]:
    """Each play's cards as they lie: the middles (frame pixels) of its face-up cards at the last
    keyframe of its play event (trick, seat)."""
    out: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for k in timeline["keyframes"]:
        e = k["event"]
        if e["kind"] == "play":
            quads = [
                c["quad"]
                for c in k["cards"]
                if c["role"] == "play" and c["seat"] == e["seat"] and c["face_up"]
            ]
            if quads:
                out[(e["trick"], e["seat"])] = [tuple(np.mean(q, axis=0)) for q in quads]
    return out


def measure(folder: Path, reader: CardReader, every: int, inertia: int, config: ZoneConfig) -> dict[str, Any]:
    """One film through the service's pipeline; its figures."""
    timeline = json.loads((folder / "timeline.json").read_text())
    raw = json.loads((folder / "truth.json").read_text())
    truths = raw if isinstance(raw, list) else [raw]
    truth = truths[0]
    geometry = TableGeometry.load(folder / "table.json")
    # a match film (``--deals N``), as benchmarks/deal.py reads it: the first deal's rules, level and
    # dealer given, every trump read from the declarations
    match = len(truths) > 1
    info = DealInfo(truth["rules"], truth["level"], None if match else truth["trump"], truth["dealer"])
    reader = reader.with_decks(get_rule_set(truth["rules"]).decks)  # as run gives it the game's decks
    areas: list[tuple[int, tuple[float, float, float, float], list[CardInstance]]] = []
    at = {"frame": 0}
    zones = ZoneReader(
        reader, geometry, config, on_area=lambda rect, cards: areas.append((at["frame"], rect, cards))
    )
    shadow = TrickTracker(inertia)  # the pipeline's tracker fed the same states: when a trick is known
    known: list[tuple[int, list[tuple[str, tuple[str, ...]]]]] = []
    decode = [0.0]
    src = AheadFrames(VideoFileSource(folder / "video.mp4"))

    def frames() -> Iterator[Frame]:
        while True:
            t = time.perf_counter()
            frame = next(iter_src, None)
            decode[0] += time.perf_counter() - t
            if frame is None:
                return
            at["frame"] = frame.index
            yield frame

    def on_frame(frame: Frame, state: TableState) -> None:
        shadow.update(state)
        tricks = shadow.tricks()
        if tricks and len(tricks[-1].plays) == 4:
            known.append((frame.index, [(p.seat, p.cards) for p in tricks[-1].plays]))

    iter_src = iter(src)
    start = time.perf_counter()
    try:
        result = run_pipeline(
            frames(),
            zones.read,
            geometry,
            info,
            every=every,
            inertia=inertia,
            still_threshold=None,
            on_frame=on_frame,
        )
    finally:
        src.close()
    wall = time.perf_counter() - start
    fps = float(timeline.get("fps", 10))
    film_s = int(timeline["frames"]) / fps
    plays = exact = outcomes = false = missed = 0
    referee = []
    for k, raw_truth in enumerate(truths):
        played = parse_deal_log(raw_truth)
        if k >= len(result.deals):  # a deal the service never saw: every play of it missed
            plays += sum(len(t.plays) for t in played.tricks)
            continue
        deal = result.deals[k]
        events = [e for e in EventStream().update(deal) if e.type == "alert"]
        referee += [
            e for e in EventStream().update(deal, ended=True) if e.type == "alert" and e.kind == "look"
        ]
        alerted = {
            f"{e.kind} {e.seat} trick {e.trick}" for e in events if e.kind in ("revoke", "failed_throw")
        }
        comparison = compare_deals(deal.log, played, alerted)
        plays, exact = plays + comparison.plays, exact + comparison.plays_exact
        outcomes += int(comparison.outcome_right)
        false, missed = false + len(comparison.false_alerts), missed + len(comparison.missed_alerts)
    # readings per play and trick latency: the first deal's plays (a match film's tricks count
    # afresh in each deal)
    timeline = {**timeline, "keyframes": [k for k in timeline["keyframes"] if k["event"].get("deal", 0) == 0]}

    # readings per play: areas read while it lay there that read cards in its seat's zone; looks per
    # play: areas read while it lay there whose rectangle holds one of its cards' middles (the
    # service's cadence, whatever the reader made of the pixels)
    readings, looks = [], []
    thin = []  # plays read fewer than twice: (trick, seat, frame landed, frame cleared, readings, looks)
    middles_mm = {
        key: geometry.pixel_to_table(np.array(points)) for key, points in play_middles(timeline).items()
    }
    for trick_no, seat, landed, cleared in play_spans(timeline):
        n = 0
        inside = middles_mm.get((trick_no, seat), np.zeros((0, 2)))
        looked = sum(
            landed <= frame < cleared
            and any(rect[0] <= x <= rect[2] and rect[1] <= y <= rect[3] for x, y in inside)
            for frame, rect, _cards in areas
        )
        looks.append(looked)
        for frame, _rect, cards in areas:
            if landed <= frame < cleared and cards:
                middles = geometry.pixel_to_table(
                    np.array([[(c.box[0] + c.box[2]) / 2, (c.box[1] + c.box[3]) / 2] for c in cards])
                )
                n += any(geometry.seat_of((float(x), float(y))) == seat for x, y in middles)
        readings.append(n)
        if n < 2:
            thin.append((trick_no, seat, landed, cleared, n, looked))

    # trick latency: the last card's landing → the first frame the tracker held the four final plays
    final = [[(p.seat, p.cards) for p in t.plays] for t in shadow.tricks()]
    last_card = {}
    for trick, _seat, landed, _cleared in play_spans(timeline):
        last_card[trick] = max(last_card.get(trick, 0), landed)
    latency = []
    for trick, landed in sorted(last_card.items()):
        if trick >= len(final) or len(final[trick]) != 4:
            latency.append(None)
            continue
        seen = next((f for f, plays in known if plays == final[trick] and f >= landed), None)
        latency.append(None if seen is None else (seen - landed) / fps)
    st = zones.stats
    return {
        "film": folder.name,
        "design": timeline.get("design", "?"),
        "size": f"{geometry.image_width}x{geometry.image_height}",
        "film_s": film_s,
        "wall_s": wall,
        "readings": readings,
        "thin": thin,
        "looks": looks,
        "latency": latency,
        "plays": plays,
        "exact": exact,
        "deals": len(truths),
        "outcome": outcomes,
        "false": false,
        "missed": missed,
        "referee_looks": [f"{e.trick or '-'}: {e.reasoning[:90]}" for e in referee],
        "decode_ms": 1000 * decode[0] / max(result.stats.frames, 1),
        "frames": result.stats.frames,
        "sampled": result.stats.sampled,
        "areas": st.areas,
        "again": st.confirmations,
        "bare": st.empty,
        "per_frame": st.ms_per_frame(),
        "per_area": st.ms_per_area(),
    }


def main(
    films: Annotated[
        list[Path], typer.Argument(help="synth deal folders (video.mp4, truth.json, table.json)")
    ],
    every: Annotated[int, typer.Option(help="read every N-th frame")] = 1,
    inertia: Annotated[int, typer.Option(help="readings a zone must hold before it counts")] = 2,
    px_per_mm: Annotated[float, typer.Option(help="the rectified table's scale")] = ZoneConfig.px_per_mm,
    model: Annotated[
        Path | None,
        typer.Option(help="an enrolled deck's folder (tractorcam enroll), as run --model reads it"),
    ] = None,
    unknown_cards: Annotated[
        bool,
        typer.Option(
            "--unknown-cards/--no-unknown-cards",
            help="keep indices the classifier cannot name as cards not (fully) named, as run does by default",
        ),
    ] = True,
) -> None:
    """Wall time against film time, readings per play, trick latency, plays exact, ms by step."""
    reader = CardReader(
        default_reader_config("onnx", unknown_cards=unknown_cards, **model_options(model))  # type: ignore[arg-type]
    )
    config = ZoneConfig(px_per_mm=px_per_mm)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {platform.machine()} {platform.processor() or ''}".rstrip())
    total: Counter[str] = Counter()
    all_readings: list[int] = []
    all_looks: list[int] = []
    all_latency: list[float | None] = []
    for folder in films:
        r = measure(folder, reader, every, inertia, config)
        lat = [x for x in r["latency"] if x is not None]
        print(
            f"{r['film']} ({r['design']}, {r['size']}): wall {r['wall_s']:.0f} s for a {r['film_s']:.0f} s film "
            f"({'keeps up' if r['wall_s'] <= r['film_s'] else 'falls behind'}, {r['wall_s'] / r['film_s']:.2f}× real time); "
            f"readings per play min {min(r['readings'], default=0)}, median {np.median(r['readings']):.0f}, "
            f"plays read twice or more {sum(n >= 2 for n in r['readings'])}/{len(r['readings'])} "
            f"(their area read twice or more {sum(n >= 2 for n in r['looks'])}); "
            f"trick latency median {np.median(lat) if lat else float('nan'):.1f} s, worst "
            f"{max(lat, default=float('nan')):.1f} s, within 1 s {sum(x <= 1.0 for x in lat)}/{len(r['latency'])}; "
            f"plays exact {r['exact']}/{r['plays']}, "
            + (
                f"outcome {'right' if r['outcome'] else 'wrong'}, "
                if r["deals"] == 1
                else f"{r['deals']} deals (readings and latency: the first), outcomes right {r['outcome']}, "
            )
            + f"false alerts {r['false']}, missed {r['missed']}; looks {len(r['referee_looks'])}"
            + (" (the deal read exactly)" if r["exact"] == r["plays"] else "")
        )
        for line in r["referee_looks"]:
            print(f"  look at trick {line}")
        for trick_no, seat, landed, cleared, n, looked in r["thin"]:
            print(
                f"  trick {trick_no + 1} seat {seat} (frames {landed}–{cleared}): its area read {looked}×, "
                f"cards found in its zone {n}×"
            )
        steps = ", ".join(f"{k} {v:.0f}" for k, v in sorted(r["per_area"].items()))
        print(
            f"  ms per frame: waiting for the decoder {r['decode_ms']:.1f}, change test {r['per_frame'].get('signature', 0):.1f}; "
            f"{r['areas']} areas read + {r['again']} read again ({r['bare']} of them known bare, not read), "
            f"ms per area: {steps}"
        )
        for key in ("film_s", "wall_s", "plays", "exact", "false", "missed"):
            total[key] += r[key]
        total["looks"] += len(r["referee_looks"])
        total["looks_exact"] += len(r["referee_looks"]) if r["exact"] == r["plays"] else 0
        total["films"] += 1
        total["deals"] += r["deals"]
        total["outcome"] += r["outcome"]
        all_readings += r["readings"]
        all_looks += r["looks"]
        all_latency += r["latency"]
    lat = [x for x in all_latency if x is not None]
    print(
        f"total: {total['films']} films, wall {total['wall_s']:.0f} s for {total['film_s']:.0f} s of film "
        f"({total['wall_s'] / max(total['film_s'], 1):.2f}× real time); plays read twice or more "
        f"{sum(n >= 2 for n in all_readings)}/{len(all_readings)} (their area read twice or more "
        f"{sum(n >= 2 for n in all_looks)}); tricks known within 1 s "
        f"{sum(x <= 1.0 for x in lat)}/{len(all_latency)}; plays exact {total['exact']}/{total['plays']}, "
        f"outcome right {total['outcome']}/{total['deals']}, false alerts {total['false']}, "
        f"looks {total['looks']} ({total['looks_exact']} on deals read exactly)"
    )


if __name__ == "__main__":
    typer.run(main)
