"""Identical outputs before and after a change that should change nothing (a refactor): the films'
readings, and what the table service makes of them.

    .venv/bin/python benchmarks/identity.py record FILM [FILM ...]    # before the change
    .venv/bin/python benchmarks/identity.py compare FILM [FILM ...] [--full]   # after it

Each FILM is a ``tractorcam synth deal`` folder (``docs/edge.md`` lists the films and their seeds).
``record`` reads each film with the shipped reader (or ``--model DIR``'s, an enrolled deck's: the
faces step) as ``benchmarks/deal.py FILM --zones --every 1``
does (the zone reader; readings kept in ``reads-zones.json``) and writes ``identity.json``: every
deal's log, the engine's score of it and every event the table service sends for it (alerts, looks,
plays, tricks), and the whole-frame readings of every ``--check-every``-th frame (the reader's
stages without the zones). ``compare`` replays the recorded readings through the table service and
reads the check frames again: any difference is printed and the exit status is 1. ``--full`` also
reads each film again with the zone reader and compares every reading.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.deal import recorded  # noqa: E402
from calibration.table import TableGeometry  # noqa: E402
from edge_app.deal import DealInfo, RecognisedDeal  # noqa: E402
from edge_app.events import EventStream, event_body  # noqa: E402
from edge_app.pipeline import run_pipeline  # noqa: E402
from engine.rules import get_rule_set  # noqa: E402
from vision.capture import VideoFileSource  # noqa: E402
from vision.instances import CardInstance  # noqa: E402

READS = "reads-zones.json"
OUT = "identity.json"

app = typer.Typer(add_completion=False, help=__doc__.splitlines()[0])


def _reader(decks: int, model: Path | None = None) -> Any:
    """The shipped reader, or the one of an enrolled deck's folder (``--model``: its faces step)."""
    from vision.reader import CardReader, default_reader_config, model_options

    return CardReader(default_reader_config("onnx", unknown_cards=True, **model_options(model))).with_decks(
        decks
    )


def _row(c: CardInstance) -> list[Any]:
    return [str(c.card), c.class_id, c.score, list(c.box), c.corners]


def service_outputs(folder: Path, read_fn: Any, state: dict[str, int]) -> list[dict[str, Any]]:
    """The film through the table service's pipeline (``benchmarks/deal.py --zones --every 1``):
    each deal's log, score and events, as JSON."""
    raw = json.loads((folder / "truth.json").read_text())
    first = raw[0] if isinstance(raw, list) else raw
    info = DealInfo(
        first["rules"], first["level"], None if isinstance(raw, list) else first["trump"], first["dealer"]
    )
    geometry = TableGeometry.load(folder / "table.json")
    streams: dict[int, EventStream] = {}
    events: dict[int, list[dict[str, Any]]] = {}

    def feed(deal: RecognisedDeal, ended: bool = False) -> None:
        got = streams.setdefault(deal.number, EventStream()).update(deal, ended=ended)
        events.setdefault(deal.number, []).extend(event_body(e) for e in got)

    src = VideoFileSource(folder / "video.mp4")

    def frames() -> Any:
        for f in src:
            state["frame"] = f.index
            yield f

    try:
        result = run_pipeline(
            frames(),
            read_fn,
            geometry,
            info,
            every=1,
            inertia=2,
            still_threshold=None,
            on_trick=feed,
            on_finished=feed,
            on_deal_end=lambda deal: feed(deal, True),
        )
        feed(result.deal, True)
    finally:
        src.close()
    return [
        {"log": d.log.to_json(), "result": d.result, "events": events.get(d.number, [])} for d in result.deals
    ]


def zone_read(folder: Path, name: str, model: Path | None = None) -> list[dict[str, Any]]:
    """The film read with the zone reader, its readings recorded in ``name``; the service's outputs."""
    from vision.zones import ZoneReader

    raw = json.loads((folder / "truth.json").read_text())
    first = raw[0] if isinstance(raw, list) else raw
    zones = ZoneReader(
        _reader(get_rule_set(first["rules"]).decks, model), TableGeometry.load(folder / "table.json")
    )
    state = {"frame": 0}
    read_fn, save = recorded(folder, zones.read, state, False, name)
    try:
        return service_outputs(folder, read_fn, state)
    finally:
        save()


def check_reads(folder: Path, every: int, model: Path | None = None) -> dict[str, list[list[Any]]]:
    """The whole-frame readings of every ``every``-th frame."""
    raw = json.loads((folder / "truth.json").read_text())
    first = raw[0] if isinstance(raw, list) else raw
    reader = _reader(get_rule_set(first["rules"]).decks, model)
    out: dict[str, list[list[Any]]] = {}
    src = VideoFileSource(folder / "video.mp4")
    try:
        for f in src:
            if f.index % every == 0:
                out[str(f.index)] = [_row(c) for c in reader.read(f.image).cards]
    finally:
        src.close()
    return out


def _json(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples as lists, keys as strings)."""
    return json.loads(json.dumps(value))


def _differences(a: Any, b: Any, where: str = "", limit: int = 5) -> list[str]:
    """Where two JSON values differ (at most ``limit`` places)."""
    out: list[str] = []

    def walk(x: Any, y: Any, at: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y)):
                walk(x.get(k, "<missing>"), y.get(k, "<missing>"), f"{at}.{k}")
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for k, (p, q) in enumerate(zip(x, y, strict=True)):
                walk(p, q, f"{at}[{k}]")
        elif x != y:
            out.append(f"{at or '.'}: {json.dumps(x)[:160]} != {json.dumps(y)[:160]}")

    walk(a, b, where)
    return out


@app.command()
def record(
    films: Annotated[list[Path], typer.Argument(help="synth deal folders")],
    check_every: Annotated[int, typer.Option(help="whole-frame readings of every N-th frame")] = 60,
    model: Annotated[
        Path | None,
        typer.Option(
            "--model", help="read with this enrolled deck's folder (its faces step), as run --model"
        ),
    ] = None,
) -> None:
    """Read each film now (the code before a change) and keep what came out."""
    for folder in films:
        t = time.perf_counter()
        deals = zone_read(folder, READS, model)
        checks = check_reads(folder, check_every, model)
        kept = {"deals": deals, "checks": checks, "check_every": check_every, "model": model and str(model)}
        (folder / OUT).write_text(json.dumps(_json(kept)))
        print(
            f"{folder.name}: recorded {len(deals)} deal(s), {len(checks)} check frames ({time.perf_counter() - t:.0f} s)"
        )


@app.command()
def compare(
    films: Annotated[list[Path], typer.Argument(help="synth deal folders, recorded before")],
    full: Annotated[
        bool, typer.Option("--full", help="also read each film again with the zone reader")
    ] = False,
) -> None:
    """Replay each film's recorded readings and read its check frames again: the same as recorded?"""
    failed = 0
    for folder in films:
        t = time.perf_counter()
        before = json.loads((folder / OUT).read_text())
        model = Path(before["model"]) if before.get("model") else None
        problems: list[str] = []
        state = {"frame": 0}
        replayed, _ = recorded(folder, None, state, True, READS)
        problems += _differences(before["deals"], _json(service_outputs(folder, replayed, state)), "deals")
        problems += _differences(
            before["checks"], _json(check_reads(folder, before["check_every"], model)), "checks"
        )
        if full:
            again = _json(zone_read(folder, "reads-zones-again.json", model))
            problems += _differences(before["deals"], again, "deals read again")
            problems += _differences(
                json.loads((folder / READS).read_text()),
                json.loads((folder / "reads-zones-again.json").read_text()),
                "zone readings",
            )
        took = time.perf_counter() - t
        if problems:
            failed += 1
            print(f"{folder.name}: DIFFERENT ({took:.0f} s)")
            for line in problems:
                print(f"  {line}")
        else:
            what = "readings, " if full else ""
            print(f"{folder.name}: identical {what}logs, scores, events and check frames ({took:.0f} s)")
    print(f"{len(films) - failed} of {len(films)} films identical")
    raise typer.Exit(1 if failed else 0)


if __name__ == "__main__":
    app()
