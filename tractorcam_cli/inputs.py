"""What the scoring commands share: one error line and exit 2, and reading a file or standard
input."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import typer

#: An error line longer than this is cut (a bad value is never echoed at length).
MAX_ERROR_CHARS = 300


def fail(message: str) -> NoReturn:
    """Print ``error: message`` on one line of standard error and exit 2."""
    line = " ".join(message.split())
    if len(line) > MAX_ERROR_CHARS:
        line = line[: MAX_ERROR_CHARS - 1] + "…"
    typer.echo(f"error: {line}", err=True)
    raise typer.Exit(2)


def read_input(file: str) -> bytes:
    """The bytes of ``file``, or of standard input for ``-``; exit 2 when it cannot be read."""
    try:
        return sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}")
