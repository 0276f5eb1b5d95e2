"""``tractorcam score FILE|-``: score a log, by its game (``shared/spec/deal-log.md``, ``games.md``):
a log without ``"game"`` is a Shengji deal log."""

from __future__ import annotations

import json

import typer

from engine.jsontext import JsonInputError, load_json
from games import UnknownGameError, game_of
from tractorcam_cli.inputs import fail, read_input


def score(file: str = typer.Argument(..., help="A log (JSON) file, or - for standard input.")) -> None:
    """Score a log (a Shengji deal, or the game its "game" names) and print the result as one JSON
    object."""
    text = read_input(file)
    try:
        data = load_json(text)
    except JsonInputError as exc:
        fail(f"bad JSON: {exc}")
    try:
        game = game_of(data)
    except UnknownGameError as exc:
        fail(str(exc))
    try:
        result = game.score(data)
    except game.errors as exc:
        fail(str(exc))
    typer.echo(json.dumps(result, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    app.command("score")(score)
