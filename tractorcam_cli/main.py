"""The `tractorcam` command line: one entry point; each package registers its own subcommands.

Every package's ``cli.py`` exposes ``register(app)`` and keeps heavy imports (torch, cv2, the
web stack) inside the command functions, so ``tractorcam score`` starts fast.
"""

from __future__ import annotations

import typer

from edge_app import cli as edge_cli
from scoreboard import cli as scoreboard_cli
from tourney import cli as tourney_cli
from tractorcam_cli import bridge as bridge_cli
from tractorcam_cli import calibrate as calibration_cli
from tractorcam_cli import enroll as enroll_cli
from tractorcam_cli import score as score_cli
from tractorcam_cli import simulate as simulate_cli
from vision import cli as vision_cli

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="tractorcam: score Shengji / Tractor (升级 / 拖拉机) from an overhead camera.",
)

#: The lab's commands (``models.cli``, ``models.synth.cli``): training, export, evaluation, synthetic
#: data. The lab is in no install (a table's carries none of it); it runs from a source checkout.
LAB_COMMANDS = ("eval", "train", "resume", "finetune", "export", "select", "heads", "gpu", "synth")
LAB_MISSING = (
    "this command needs the lab (models/: synthetic data, training, export, evaluation), which only a "
    "source checkout has: clone the repository and run bash scripts/setup"
)


def _register_lab(app: typer.Typer) -> None:
    """The lab's commands; where the lab is absent, each says so in one line (exit 1)."""
    try:
        from models import cli as models_cli
        from models.synth import cli as synth_cli
    except ModuleNotFoundError as exc:
        if exc.name != "models":
            raise
        for name in LAB_COMMANDS:
            app.command(
                name,
                help="(the lab: a source checkout only)",
                context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
                add_help_option=False,
            )(_lab_missing)
        return
    models_cli.register(app)
    synth_cli.register(app)


def _lab_missing() -> None:
    typer.echo(f"error: {LAB_MISSING}", err=True)
    raise typer.Exit(1)


for module in (score_cli, bridge_cli, simulate_cli, vision_cli, calibration_cli, enroll_cli):
    module.register(app)
_register_lab(app)
for module in (scoreboard_cli, edge_cli, tourney_cli):
    module.register(app)

#: The install extra that brings each optional package (or project package) a command may need.
EXTRA_OF: dict[str, str] = {
    **dict.fromkeys(
        ("fastapi", "starlette", "uvicorn", "sqlalchemy", "alembic", "jinja2", "psycopg"), "server"
    ),
    **dict.fromkeys(("torch", "torchvision", "ultralytics", "onnx", "onnxslim", "ncnn", "yaml"), "train"),
}


def missing_extra(exc: ImportError) -> str | None:
    """The extra that would install what ``exc`` did not find, or None when no extra does.

    >>> missing_extra(ModuleNotFoundError("No module named 'uvicorn'", name="uvicorn"))
    'server'
    >>> missing_extra(ModuleNotFoundError("No module named 'torch.nn'", name="torch.nn"))
    'train'
    >>> missing_extra(ModuleNotFoundError("No module named 'numpy'", name="numpy")) is None
    True
    """
    return EXTRA_OF.get((exc.name or "").split(".")[0])


def main() -> None:
    """The ``tractorcam`` entry point: the command line, with one line (exit 1) instead of a
    traceback when a command needs a package that this install's extras left out (the Pi's
    ``.[edge]`` install has no server or training stack)."""
    try:
        app()
    except ImportError as exc:
        if (exc.name or "").split(".")[0] == "models":  # a command that uses the lab (enroll learn)
            typer.echo(f"error: {LAB_MISSING}", err=True)
            raise SystemExit(1) from None
        extra = missing_extra(exc)
        if extra is None:
            raise
        typer.echo(
            f"error: this command needs the {extra} extra, which this install does not have "
            f"({exc.name} is missing): pip install 'tractorcam[{extra}]'",
            err=True,
        )
        raise SystemExit(1) from None
