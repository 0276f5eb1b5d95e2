"""``tractorcam score FILE|-``: score a log, by its game (``shared/spec/deal-log.md``, ``games.md``):
a log without ``"game"`` is a Shengji deal log."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import typer

from engine.jsontext import JsonInputError, load_json
from games import UnknownGameError, game_of

#: An error line longer than this is cut (a bad value is never echoed at length).
MAX_ERROR_CHARS = 300


def _fail(message: str) -> NoReturn:
    line = " ".join(message.split())
    if len(line) > MAX_ERROR_CHARS:
        line = line[: MAX_ERROR_CHARS - 1] + "…"
    typer.echo(f"error: {line}", err=True)
    raise typer.Exit(2)


def score(file: str = typer.Argument(..., help="A log (JSON) file, or - for standard input.")) -> None:
    """Score a log (a Shengji deal, or the game its "game" names) and print the result as one JSON
    object."""
    try:
        text = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as exc:
        _fail(f"cannot read {file}: {exc.strerror or exc}")
    try:
        data = load_json(text)
    except JsonInputError as exc:
        _fail(f"bad JSON: {exc}")
    try:
        game = game_of(data)
    except UnknownGameError as exc:
        _fail(str(exc))
    try:
        result = game.score(data)
    except game.errors as exc:
        _fail(str(exc))
    typer.echo(json.dumps(result, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    app.command("score")(score)
