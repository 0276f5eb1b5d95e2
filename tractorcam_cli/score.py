"""Subcommands of this package (registered into the `tractorcam` command line)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this package's subcommands to ``app``."""
