"""``tractorcam synth``: render training data and whole simulated deals.

Heavy imports (cv2, numpy, the renderer) stay inside the command functions so the top-level
command line starts fast.
"""

from __future__ import annotations

from pathlib import Path

import typer

synth_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Synthetic table renderer: training datasets and simulated deal videos.",
)


@synth_app.command("dataset")
def dataset(
    out: Path = typer.Option(..., "--out", help="Output directory (YOLO layout + annotations + data.yaml)."),  # noqa: B008
    n: int = typer.Option(1000, "--n", min=1, help="Number of images."),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same images)."),
    split: str = typer.Option(
        "train",
        "--split",
        help="train | val (TRAIN designs), heldout (HELDOUT designs: the test), heldout_val "
        "(HELDOUT_VAL designs: unseen decks for choosing between readers) or heldout_val_proc "
        "(HELDOUT_VAL_PROC: unseen random decks with small indices, also for choosing).",
    ),
    imgsz: int = typer.Option(640, "--imgsz", min=64, help="Square image size in px."),
    workers: int = typer.Option(
        1, "--workers", min=1, help="Worker processes (output does not depend on it)."
    ),
    design: list[str] | None = typer.Option(  # noqa: B008
        None,
        "--design",
        help="Render only this design (repeatable), instead of the split's: e.g. one deck to enroll.",
    ),
    text_share: float = typer.Option(
        0.0,
        "--text-share",
        min=0.0,
        max=1.0,
        help="Chance that an image has printed sheets (pages, score sheets, labels) on the table, "
        "unlabelled; 0 leaves every image as before.",
    ),
) -> None:
    """Render a YOLO dataset of corner indices (images/, labels/, annotations/, data.yaml)."""
    from models.synth.dataset import SPLITS, UnknownDesignError, make_dataset

    if split not in SPLITS:
        typer.echo(f"error: --split must be one of {', '.join(SPLITS)}, not {split!r}", err=True)
        raise typer.Exit(2)

    designs = tuple(design) if design else None
    try:
        path = make_dataset(
            out,
            n=n,
            seed=seed,
            split=split,
            imgsz=imgsz,
            workers=workers,
            designs=designs,
            printed=text_share,
        )
    except UnknownDesignError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(str(path))


@synth_app.command("deal")
def deal(
    seed: int = typer.Option(..., "--seed", help="Deal seed (the simulator's and the renderer's)."),
    out: Path = typer.Option(..., "--out", help="Output directory: video.mp4, truth.json, table.json."),  # noqa: B008
    rules: str = typer.Option("national-2deck", "--rules", help="Rule set id."),
    inject_revoke: bool = typer.Option(False, "--inject-revoke", help="Make one player revoke."),
    inject_failed_throw: bool = typer.Option(False, "--inject-failed-throw", help="Make one throw fail."),
    fps: int = typer.Option(10, "--fps", min=1, help="Video frame rate."),
    width: int = typer.Option(1920, "--width", min=320, help="Frame width px."),
    height: int = typer.Option(1440, "--height", min=240, help="Frame height px."),
    deals: int = typer.Option(
        1, "--deals", min=1, max=40, help="Deals of one match filmed in a row (truth.json is then a list)."
    ),
) -> None:
    """Render a whole simulated deal (or ``--deals N`` deals of one match, each with its trump
    declared) as an overhead video with its truth log and table calibration."""
    from models.synth.deal import DealError, render_deal

    try:
        result = render_deal(
            seed,
            out,
            rules=rules,
            inject_revoke=inject_revoke,
            inject_failed_throw=inject_failed_throw,
            fps=fps,
            width=width,
            height=height,
            deals=deals,
        )
    except DealError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    what = f"{result.tricks} tricks" + (f" in {deals} deals" if deals > 1 else "")
    typer.echo(f"{result.video} ({result.frames} frames, {what})")


def register(app: typer.Typer) -> None:
    """Add the ``synth`` sub-app to ``app``."""
    app.add_typer(synth_app, name="synth")
