"""``tractorcam score FILE|-``: score a deal log (``shared/spec/deal-log.md``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from engine import DealLogError, score_log


def _fail(message: str) -> None:
    typer.echo(f"error: {' '.join(message.split())}", err=True)
    raise typer.Exit(2)


def score(file: str = typer.Argument(..., help="Deal log JSON file, or - for standard input.")) -> None:
    """Score a deal log and print the result as one JSON object."""
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        _fail(f"cannot read {file}: {exc}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        _fail(f"bad JSON: {exc}")
    try:
        result = score_log(data)
    except DealLogError as exc:
        _fail(str(exc))
    typer.echo(json.dumps(result, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    app.command("score")(score)
