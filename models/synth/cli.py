"""``tractorcam synth``: render training data and whole simulated deals.

``dataset`` and ``deal`` render scenes; ``tiles`` cuts a rendered dataset into index-sized tiles
(:mod:`models.tiles`), ``facetiles`` composes tiles from card faces (:mod:`models.facetiles`) and
``kennard`` fetches and converts Adrian Kennard's card art (:mod:`models.synth.kennard`).

Heavy imports (cv2, numpy, the renderer) stay inside the command functions so the top-level
command line starts fast.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

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
    game: str = typer.Option("shengji", "--game", help="The game filmed (games.md)."),
    rules: str = typer.Option("national-2deck", "--rules", help="Rule set id."),
    inject_revoke: bool = typer.Option(False, "--inject-revoke", help="Make one player revoke."),
    inject_failed_throw: bool = typer.Option(False, "--inject-failed-throw", help="Make one throw fail."),
    fps: int = typer.Option(10, "--fps", min=1, help="Video frame rate."),
    width: int = typer.Option(1920, "--width", min=320, help="Frame width px."),
    height: int = typer.Option(1440, "--height", min=240, help="Frame height px."),
    deals: int = typer.Option(
        1, "--deals", min=1, max=40, help="Deals of one match filmed in a row (truth.json is then a list)."
    ),
    markers: float | None = typer.Option(
        None,
        "--markers",
        min=10,
        max=300,
        help="Lay the corner markers (their side in mm, e.g. 60) so that run calibrates the film itself.",
    ),
) -> None:
    """Render a whole simulated deal (or ``--deals N`` deals of one match, each with its trump
    declared) as an overhead video with its truth log and table calibration."""
    from games import UnknownGameError
    from models.synth.deal import DealError
    from models.synth.films import film_renderer

    try:
        render = film_renderer(game)
    except (UnknownGameError, LookupError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if game == "gomoku":
        typer.echo(
            "error: gomoku is no card game: film it with `tractorcam synth game --game gomoku`", err=True
        )
        raise typer.Exit(2)
    try:
        result = render(
            seed,
            out,
            rules=rules,
            inject_revoke=inject_revoke,
            inject_failed_throw=inject_failed_throw,
            fps=fps,
            width=width,
            height=height,
            deals=deals,
            markers=markers,
        )
    except DealError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    what = f"{result.tricks} tricks" + (f" in {deals} deals" if deals > 1 else "")
    typer.echo(f"{result.video} ({result.frames} frames, {what})")


@synth_app.command("game")
def game_film(
    seed: int = typer.Option(..., "--seed", help="Game seed (the simulator's and the renderer's)."),
    out: Path = typer.Option(..., "--out", help="Output directory: video.mp4, truth.json, table.json."),  # noqa: B008
    game: str = typer.Option("gomoku", "--game", help="The board game filmed (games.md): gomoku."),
    look: str | None = typer.Option(
        None, "--look", help="The board's and stones' look (default: a held-out one)."
    ),
    fps: int = typer.Option(5, "--fps", min=2, max=60, help="Video frame rate."),
    width: int = typer.Option(1280, "--width", min=320, help="Frame width px."),
    height: int = typer.Option(960, "--height", min=240, help="Frame height px."),
) -> None:
    """Render a whole simulated board game as an overhead video with its truth log (the moves timed,
    the long-think presses) and the table's calibration from its corner markers."""
    from games import UnknownGameError, get_game
    from models.synth.films import film_renderer
    from models.synth.gomoku_film import LOOKS

    try:
        get_game(game)
    except UnknownGameError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if game != "gomoku":
        typer.echo(
            f"error: {game} is a card game: film it with `tractorcam synth deal --game {game}`", err=True
        )
        raise typer.Exit(2)
    if look is not None and look not in LOOKS:
        typer.echo(f"error: --look {look[:30]!r} is not one of {', '.join(LOOKS)}", err=True)
        raise typer.Exit(2)
    result = film_renderer(game)(seed, out, fps=fps, width=width, height=height, look=look)
    typer.echo(
        f"{result['video']} ({result['frames']} frames, {result['moves']} moves, look {result['look']})"
    )


def tiles_command(
    src: Annotated[Path, typer.Argument(help="a rendered dataset (its train and val splits are cut)")],
    out: Annotated[Path, typer.Argument(help="the tile dataset (ultralytics layout, data.yaml)")],
    per_image: Annotated[int, typer.Option("--per-image", help="tiles per image")] = 2,
    val_per_image: Annotated[
        int | None, typer.Option("--val-per-image", help="tiles per val image (default: --per-image)")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="seeds the tiles' scales and places")] = 0,
    extra_train: Annotated[
        list[Path] | None,
        typer.Option(
            "--extra-train", help="an image folder (e.g. face tiles) added to the training list (repeat it)"
        ),
    ] = None,
) -> None:
    """Cut a rendered dataset's train and val splits into index-sized training tiles.

    Writes OUT/data.yaml (models.tiles)."""
    from models.tiles import TileSettings, make_tiles, write_data_yaml

    for split in ("train", "val"):
        k = per_image if split == "train" or val_per_image is None else val_per_image
        n = make_tiles(src, split, out, TileSettings(tiles_per_image=k, seed=seed))
        typer.echo(f"{split}: {n} tiles")
    path = write_data_yaml(out, {"train": "train", "val": "val"})
    if extra_train:
        text = path.read_text()
        folders = ["images/train"] + [str(Path(d).resolve()) for d in extra_train]
        text = text.replace("train: images/train\n", "train:\n" + "".join(f"  - {f}\n" for f in folders))
        path.write_text(text)
    typer.echo(str(path))


class DesignGroup(StrEnum):
    """The design groups face tiles can draw (:data:`models.facetiles.DESIGN_GROUPS`)."""

    train = "train"
    randomised = "randomised"
    fonts = "fonts"
    glyphs = "glyphs"
    kde = "kde"
    kennard = "kennard"


def facetiles_command(
    out: Annotated[Path, typer.Argument(help="the tile dataset (ultralytics layout, data.yaml)")],
    train: Annotated[int, typer.Option("--train", help="training tiles")] = 4000,
    val: Annotated[int, typer.Option("--val", help="validation tiles")] = 300,
    seed: Annotated[
        int, typer.Option("--seed", help="seeds the training tiles (the val tiles: seed + 1)")
    ] = 0,
    designs: Annotated[
        DesignGroup,
        typer.Option(
            "--designs",
            help="train: the scene training designs; randomised: the seeded random procedural decks; "
            "fonts: the same with outline-font indices (RANDOMISED_TTF); "
            "glyphs: the same, most with suit symbols from fonts (RANDOMISED_GLYPH); "
            "kde: the KDE training decks (models.synth.designs.KDE_TRAIN); "
            "kennard: Adrian Kennard's deck (KENNARD_TRAIN; tractorcam synth kennard first)",
        ),
    ] = DesignGroup.train,
    joker_share: Annotated[
        float | None,
        typer.Option(
            "--joker-share", help="chance that a drawn card is a joker (default: uniform over the 54 cards)"
        ),
    ] = None,
    text_share: Annotated[
        float,
        typer.Option(
            "--text-share",
            help="chance that a tile also shows printed text (unlabelled negatives) under its cards",
        ),
    ] = 0.0,
    index_px: Annotated[
        tuple[float, float],
        typer.Option(
            "--index-px",
            metavar="MIN MAX",
            help="range of the corner index's long side in tile pixels, drawn log-uniformly "
            "(the held-out scenes hold many indices of 9-16 px)",
        ),
    ] = (16.0, 64.0),
) -> None:
    """Compose index-sized training tiles from the card faces of one design group.

    Writes OUT/data.yaml (models.facetiles)."""
    from models.facetiles import FaceTileSettings, design_group, make_face_tiles
    from models.tiles import write_data_yaml

    lo, hi = index_px
    if not 4.0 <= lo <= hi <= FaceTileSettings.tile / 2:
        raise _fail(f"--index-px needs 4 <= MIN <= MAX <= {FaceTileSettings.tile // 2}")
    if not 0.0 <= text_share <= 1.0:
        raise _fail("--text-share must lie in [0, 1]")
    if joker_share is not None and not 0.0 <= joker_share <= 1.0:
        raise _fail("--joker-share must lie in [0, 1]")
    names = [d.name for d in design_group(designs.value)]
    settings = FaceTileSettings(index_px=(lo, hi), joker_share=joker_share, text_share=text_share)
    make_face_tiles(out, "train", train, names, seed, settings)
    make_face_tiles(out, "val", val, names, seed + 1, settings)
    typer.echo(str(write_data_yaml(out, {"train": "train", "val": "val"})))


def kennard_command(
    bundle: Annotated[
        Path | None, typer.Option("--bundle", help="an index.esm.js already on disk (default: npm pack it)")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="output directory (default: the cache)")] = None,
) -> None:
    """Write Adrian Kennard's card art (CC0-1.0) as one SVG per card, for the face tiles.

    Fetched with npm pack unless --bundle names the bundle (models.synth.kennard)."""
    import tempfile

    from models.synth.faces import kennard_dir
    from models.synth.kennard import KennardArtError, convert_bundle, fetch_bundle

    folder = out or kennard_dir()
    try:
        if bundle is not None:
            n = convert_bundle(bundle, folder)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                n = convert_bundle(fetch_bundle(Path(tmp)), folder)
    except KennardArtError as exc:
        raise _fail(exc) from None
    typer.echo(f"{n} cards -> {folder}")


synth_app.command("tiles")(tiles_command)
synth_app.command("facetiles")(facetiles_command)
synth_app.command("kennard")(kennard_command)


def _fail(exc: Exception | str) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Add the ``synth`` sub-app to ``app``."""
    app.add_typer(synth_app, name="synth")
