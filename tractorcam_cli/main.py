"""The `tractorcam` command line: one entry point; each package registers its own subcommands.

Every package's ``cli.py`` exposes ``register(app)`` and keeps heavy imports (torch, cv2, the
web stack) inside the command functions, so ``tractorcam score`` starts fast.
"""

from __future__ import annotations

import typer

from edge_app import cli as edge_cli
from models import cli as models_cli
from models.synth import cli as synth_cli
from scoreboard import cli as scoreboard_cli
from tractorcam_cli import score as score_cli
from tractorcam_cli import simulate as simulate_cli
from vision import cli as vision_cli

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="tractorcam: score Shengji / Tractor (升级 / 拖拉机) from an overhead camera.",
)

for module in (score_cli, simulate_cli, vision_cli, models_cli, synth_cli, scoreboard_cli, edge_cli):
    module.register(app)
