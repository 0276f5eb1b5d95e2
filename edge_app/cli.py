"""Subcommands of the per-table service: ``run`` and ``demo`` (:mod:`edge_app.demo`).

``tractorcam run --source SRC --table FILE [--log-out FILE] [--scoreboard URL --token TOKEN]``
(``../shared/spec/cli.md``). What the camera cannot see (rule set, level, trump, dealer) comes from
``--info FILE`` (any JSON with those keys, e.g. a deal log such as ``synth deal``'s ``truth.json``)
or the options of the same names; without them the rule set is ``national-2deck``, the dealer the
first trick's leader (the dealer leads the first trick), and level ``2`` / trump ``NT`` with a
warning, since the score depends on them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer


def register(app: typer.Typer) -> None:
    """Add this package's subcommands to ``app``."""
    app.command("run")(run)
    app.command("demo")(demo)


def demo(
    folder: Annotated[
        Path | None,
        typer.Option("--dir", help="where the sample deal lives (default: ~/.cache/tractorcam/demo-SEED)"),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="the sample deal's seed")] = 7,
    tricks: Annotated[
        int | None, typer.Option("--tricks", help="film only the first N tricks (quicker, no outcome)")
    ] = None,
) -> None:
    """The main job on an embedded default: film a sample deal, run the table service on it with a
    local scoreboard, and print what happened."""
    from edge_app.demo import default_folder, run_demo

    run_demo(folder or default_folder(seed), seed, tricks)


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def _info(
    info_file: Path | None, rules: str | None, level: str | None, trump: str | None, dealer: str | None
) -> tuple[dict[str, Any], list[str]]:
    given: dict[str, Any] = {}
    if info_file is not None:
        try:
            raw = json.loads(info_file.read_text())
        except (OSError, ValueError) as exc:
            raise _fail(f"cannot read --info {info_file}: {exc}") from None
        if not isinstance(raw, dict):
            raise _fail(f"--info {info_file} is not a JSON object")
        given = {k: raw[k] for k in ("rules", "level", "trump", "dealer") if k in raw}
    for key, value in (("rules", rules), ("level", level), ("trump", trump), ("dealer", dealer)):
        if value is not None:
            given[key] = value
    missing = [k for k in ("level", "trump") if k not in given]
    given.setdefault("rules", "national-2deck")
    given.setdefault("level", "2")
    given.setdefault("trump", "NT")
    return given, missing


def run(
    source: Annotated[
        str, typer.Option("--source", help="video file, image folder, camera index or picamera2")
    ],
    table: Annotated[Path, typer.Option("--table", help="the table's calibration (table.json)")],
    log_out: Annotated[
        Path | None, typer.Option("--log-out", help="write the recognised deal log here when the source ends")
    ] = None,
    scoreboard: Annotated[str | None, typer.Option("--scoreboard", help="scoreboard URL")] = None,
    token: Annotated[str | None, typer.Option("--token", help="this table's scoreboard token")] = None,
    info_file: Annotated[
        Path | None, typer.Option("--info", help="JSON with rules, level, trump, dealer (e.g. a deal log)")
    ] = None,
    rules: Annotated[str | None, typer.Option("--rules", help="rule set id (default national-2deck)")] = None,
    level: Annotated[str | None, typer.Option("--level", help="the rank being played")] = None,
    trump: Annotated[str | None, typer.Option("--trump", help="S, H, D, C or NT")] = None,
    dealer: Annotated[
        str | None, typer.Option("--dealer", help="dealer's seat (default: first leader)")
    ] = None,
    every: Annotated[int, typer.Option("--every", help="read every N-th frame")] = 5,
    inertia: Annotated[int, typer.Option("--inertia", help="readings a zone must hold before it counts")] = 2,
    backend: Annotated[str, typer.Option("--backend", help="onnx (default), ncnn, ultralytics")] = "onnx",
) -> None:
    """The per-table service: read a source to its end, write the recognised deal log, post it."""
    from tqdm import tqdm  # type: ignore[import-untyped]

    from calibration.table import TableGeometry
    from edge_app.deal import DealInfo
    from edge_app.pipeline import PipelineConfigError
    from edge_app.service import run_service
    from engine.rules import UnknownRuleSetError
    from vision.capture import CameraUnavailableError, SourceNotFoundError, open_source
    from vision.reader import CardReader, default_reader_config
    from vision.tracking import TrackerConfigError

    if (scoreboard is None) != (token is None):
        raise _fail("--scoreboard and --token go together")
    try:
        geometry = TableGeometry.load(table)
    except (OSError, ValueError) as exc:
        raise _fail(f"cannot read --table {table}: {str(exc).splitlines()[0]}") from None
    given, missing = _info(info_file, rules, level, trump, dealer)
    if missing:
        typer.echo(
            f"warning: no {' or '.join(missing)} given: using level {given['level']}, trump {given['trump']}"
            " (the score depends on them; pass --info or --level/--trump)",
            err=True,
        )
    try:
        src = open_source(source)
    except (SourceNotFoundError, CameraUnavailableError) as exc:
        raise _fail(str(exc)) from None
    reader = CardReader(default_reader_config(backend))
    client = None
    if scoreboard is not None and token is not None:
        from scoreboard.client import ScoreboardClient

        client = ScoreboardClient(scoreboard, token)
    try:
        with tqdm(desc="frames", unit="frame", disable=None) as bar:
            result = run_service(
                src,
                lambda image: reader.read(image).cards,
                geometry,
                DealInfo(given["rules"], str(given["level"]), str(given["trump"]), given.get("dealer")),
                every=every,
                inertia=inertia,
                log_out=log_out,
                client=client,
                on_frame=lambda frame, state: bar.update(every),
            )
    except (PipelineConfigError, TrackerConfigError, UnknownRuleSetError, CameraUnavailableError) as exc:
        raise _fail(str(exc)) from None
    finally:
        src.close()
    _report(result)
    if client is not None:
        for r in client.refused:
            typer.echo(f"scoreboard refused {r.path} ({r.status}): {r.detail}", err=True)
        if not result.all_sent:
            typer.echo(
                f"error: scoreboard {scoreboard} unreachable: {len(client.queue)} posts not sent"
                + (f" (the deal log is in {log_out})" if log_out else ""),
                err=True,
            )
            raise typer.Exit(1)
        if client.refused:
            raise typer.Exit(1)


def _report(result: Any) -> None:
    log, stats = result.deal.log, result.stats
    plays = sum(len(t["plays"]) for t in log["tricks"])
    typer.echo(
        f"{stats.frames} frames, {stats.sampled} sampled, {stats.read} read: "
        f"{len(log['tricks'])} tricks, {plays} plays, bottom {'seen' if 'bottom' in log else 'not seen'}, "
        f"finished {str(log['finished']).lower()}"
    )
    for line in result.alerts:
        typer.echo(f"alert: {line}")
    if result.deal.problem:
        typer.echo(f"warning: the engine refuses the recognised log: {result.deal.problem}", err=True)
