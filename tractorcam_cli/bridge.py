"""``tractorcam bridge pbn FILE.json`` and ``tractorcam bridge log FILE.pbn`` (``shared/spec/games.md``,
"Results"): a bridge log written as PBN 2.1, and PBN read back to logs. A file of one log (or one
game) gives one game (or one log, a JSON object); a JSON list of logs, or a PBN file of several
games, gives them all (a list). Bad input: one line on standard error and exit 2."""

from __future__ import annotations

import json
from typing import Any

import typer

from tractorcam_cli.inputs import fail, read_input

bridge_app = typer.Typer(
    no_args_is_help=True, help="Bridge boards as PBN 2.1: write a log as PBN, read PBN back."
)


@bridge_app.command("pbn")
def pbn(
    file: str = typer.Argument(..., help="A bridge log (JSON), or a list of them; - for standard input."),
) -> None:
    """Print the log as PBN 2.1 (export format): one game per log."""
    from bridge.log import BridgeLogError, parse_bridge_log
    from bridge.pbn import PbnError, to_pbn
    from engine.jsontext import JsonInputError, load_json

    try:
        data: Any = load_json(read_input(file))
    except JsonInputError as exc:
        fail(f"bad JSON: {exc}")
    items = data if isinstance(data, list) else [data]
    logs = []
    for i, item in enumerate(items, 1):
        try:
            logs.append(parse_bridge_log(item))
        except BridgeLogError as exc:
            fail(f"log {i}: {exc}" if isinstance(data, list) else str(exc))
    try:
        typer.echo(to_pbn(logs), nl=False)
    except PbnError as exc:
        fail(str(exc))


@bridge_app.command("log")
def log(file: str = typer.Argument(..., help="A PBN file, or - for standard input.")) -> None:
    """Print the PBN file's game as a bridge log (JSON), or its games as a list of logs."""
    from bridge.pbn import PbnError, read_pbn

    raw = read_input(file)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")  # PBN 2.1's own character set (ISO 8859-1)
    try:
        logs = read_pbn(text)
    except PbnError as exc:
        fail(str(exc))
    out = [g.to_json() for g in logs]
    typer.echo(json.dumps(out[0] if len(out) == 1 else out, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    app.add_typer(bridge_app, name="bridge")
