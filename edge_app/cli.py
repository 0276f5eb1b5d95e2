"""Subcommands of the per-table service (``run``, ``demo``) — to come with the table-service issue."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this package's subcommands to ``app`` (none yet)."""
