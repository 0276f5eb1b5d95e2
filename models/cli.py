"""Subcommands of this package (registered into the `tractorcam` command line):
``eval``, ``train``, ``resume``, ``finetune``, ``export``. Heavy imports stay inside the functions."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

if TYPE_CHECKING:
    from models.evaluate import SyntheticScene

T = TypeVar("T")

#: Localiser box scores tried by ``eval --sweep`` (two-stage reader).
SWEEP_DET_CONFS = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4)
#: Joker probabilities tried by ``eval --sweep`` (each above the ``conf`` it is paired with).
SWEEP_JOKER_CONFS = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


def register(app: typer.Typer) -> None:
    """Add this package's subcommands to ``app``."""
    app.command("eval")(eval_command)
    app.command("train")(train_command)
    app.command("resume")(resume_command)
    app.command("finetune")(finetune_command)
    app.command("export")(export_command)


def _fail(exc: Exception) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(2)


def eval_command(
    backend: Annotated[str, typer.Option("--backend", help="onnx or ultralytics")] = "onnx",
    weights: Annotated[Path | None, typer.Option("--weights", help="default: models/weights/best.*")] = None,
    heldout: Annotated[
        Path | None, typer.Option("--heldout", help="rendered dataset folder with a heldout split")
    ] = None,
    split: Annotated[str, typer.Option("--split")] = "heldout",
    n: Annotated[
        int, typer.Option("--n", help="scenes to render when no --heldout folder is given (0: skip)")
    ] = 200,
    seed: Annotated[int, typer.Option("--seed", help="first seed of rendered held-out scenes")] = 10_000,
    real: Annotated[
        Path | None, typer.Option("--real", help="real photo folder (default: ../shared/real/...)")
    ] = None,
    skip_real: Annotated[bool, typer.Option("--skip-real")] = False,
    limit: Annotated[int | None, typer.Option("--limit", help="at most this many images per set")] = None,
    conf: Annotated[float | None, typer.Option("--conf", help="default: tuned (vision.reader)")] = None,
    imgsz: Annotated[int, typer.Option("--imgsz")] = 320,
    per_class: Annotated[bool, typer.Option("--per-class", help="print per-card precision/recall")] = False,
    per_design: Annotated[
        bool, typer.Option("--per-design", help="print the synthetic figures per card design, worst first")
    ] = False,
    per_size: Annotated[
        bool,
        typer.Option(
            "--per-size", help="print the synthetic figures per card-size bin (median card height in px)"
        ),
    ] = False,
    designs: Annotated[
        list[str] | None,
        typer.Option("--design", help="with --heldout: only scenes showing this design (repeatable)"),
    ] = None,
    classifier: Annotated[
        Path | None, typer.Option("--classifier", help="default: the committed one")
    ] = None,
    det_conf: Annotated[
        float | None, typer.Option("--det-conf", help="box score kept for the classifier")
    ] = None,
    joker_conf: Annotated[
        float | None,
        typer.Option(
            "--joker-conf", help="classifier probability a joker needs (default: tuned, vision.reader)"
        ),
    ] = None,
    no_classifier: Annotated[bool, typer.Option("--no-classifier")] = False,
    suit_head: Annotated[
        Path | None, typer.Option("--suit-head", help="suit-head .onnx (default: the committed one, if any)")
    ] = None,
    no_suit_head: Annotated[
        bool, typer.Option("--no-suit-head", help="name cards by the classifier alone")
    ] = False,
    suit_weight: Annotated[
        float | None, typer.Option("--suit-weight", help="weight of the suit head's reading (default: tuned)")
    ] = None,
    orientation_head: Annotated[
        Path | None,
        typer.Option(
            "--orientation-head", help="orientation-head .onnx (default: the committed one, if any)"
        ),
    ] = None,
    no_orientation_head: Annotated[
        bool, typer.Option("--no-orientation-head", help="pair corners by distance alone")
    ] = False,
    upright_head: Annotated[
        Path | None,
        typer.Option("--upright-head", help="upright-head .onnx (default: the committed one, if any)"),
    ] = None,
    no_upright_head: Annotated[
        bool, typer.Option("--no-upright-head", help="no reading of the crops turned upright")
    ] = False,
    upright_weight: Annotated[
        float | None,
        typer.Option("--upright-weight", help="weight of the upright head's reading (default: tuned)"),
    ] = None,
    no_pair_naming: Annotated[
        bool,
        typer.Option("--no-pair-naming", help="name every corner alone, not a card's two corners together"),
    ] = False,
    focus_upscale: Annotated[
        float | None,
        typer.Option(
            "--focus-upscale",
            help="resize factor of the tiling's focus level, looked at only around found indices "
            "(default: the shipped one; 0: none)",
        ),
    ] = None,
    sweep_det_confs: Annotated[
        list[float] | None,
        typer.Option(
            "--sweep-det-conf",
            help="with --sweep: a det_conf to try (repeat it; default: the whole grid from 0.005)",
        ),
    ] = None,
    sweep: Annotated[
        bool,
        typer.Option(
            "--sweep",
            help="synthetic figures at several --conf (and, with the classifier, --det-conf and "
            "--joker-conf) thresholds, for tuning on val",
        ),
    ] = False,
) -> None:
    """Print metrics: held-out synthetic scenes (per card, per play, jokers) and real photos (ranks)."""
    from models import evaluate as ev
    from vision.classifier import ClassifierNotFoundError, SuitHeadError
    from vision.detectors.base import ClassifierRequiredError, UnknownDetectorType, WeightsNotFoundError
    from vision.orientation import OrientationHeadError
    from vision.reader import CardReader, default_reader_config
    from vision.tiling import TilingConfigError
    from vision.upright import UprightHeadError

    if designs and heldout is None:
        raise _fail(ev.EvaluationDataError("--design needs a rendered dataset (--heldout)"))
    options: dict[str, object] = {"weights": weights, "imgsz": imgsz}
    if no_classifier or classifier is not None:
        options["classifier"] = None if no_classifier else classifier
    if no_suit_head or suit_head is not None:
        options["suit_head"] = None if no_suit_head else suit_head
    if suit_weight is not None:
        options["suit_weight"] = suit_weight
    if no_orientation_head or orientation_head is not None:
        options["orientation_head"] = None if no_orientation_head else orientation_head
    if no_upright_head or upright_head is not None:
        options["upright_head"] = None if no_upright_head else upright_head
    if upright_weight is not None:
        options["upright_weight"] = upright_weight
    if sweep:
        options["conf"] = 0.05
        options["det_conf"] = min(sweep_det_confs or SWEEP_DET_CONFS)
        options["joker_conf"] = None
    elif conf is not None:
        options["conf"] = conf
    elif no_classifier:
        options["conf"] = 0.25
    if det_conf is not None:
        options["det_conf"] = det_conf
    if joker_conf is not None:
        options["joker_conf"] = joker_conf
    if focus_upscale is not None:
        options["focus_upscale"] = focus_upscale or None
    try:
        config = default_reader_config(backend, **options)
        reader = CardReader(replace(config, pair_naming=None) if no_pair_naming else config)
    except (
        UnknownDetectorType,
        WeightsNotFoundError,
        ClassifierNotFoundError,
        SuitHeadError,
        OrientationHeadError,
        UprightHeadError,
        ClassifierRequiredError,
        TilingConfigError,
    ) as exc:
        raise _fail(exc) from None
    d = reader.config.detector
    typer.echo(
        f"weights: {d.weights or 'committed'}, classifier: {d.classifier}, det_conf {d.det_conf}, conf {d.conf}"
        + (f", joker_conf {d.joker_conf}" if d.joker_conf is not None else "")
        + (f", suit head {d.suit_head} (weight {d.suit_weight:g})" if d.suit_head is not None else "")
        + (f", orientation head {d.orientation_head}" if d.orientation_head is not None else "")
        + (
            f", upright head {d.upright_head} (weight {d.upright_weight:g})"
            if d.upright_head is not None
            else ""
        )
        + ("" if reader.adjust is not None else ", no pair naming")
        + (
            f", focus level {reader.tiled.config.focus_upscale:g}x"
            if reader.tiled.config.focus_upscale
            else ""
        )
    )
    try:
        if heldout is not None and sweep:
            confs = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
            scenes = _synthetic_scenes(heldout, split, limit, designs)
            if reader.classifier is not None:
                sweeps = ev.sweep_thresholds(
                    reader, scenes, sweep_det_confs or SWEEP_DET_CONFS, confs, SWEEP_JOKER_CONFS
                )
                from models.selection import sweep_label

                results = {sweep_label(setting): r for setting, r in sweeps.items()}
            else:
                results = {f"conf {c:.2f}": r for c, r in ev.sweep_confidence(reader, scenes, confs).items()}
            for label, rep in results.items():
                text = ev.format_scene_report(rep, title=f"synthetic {split}")
                typer.echo(f"{label}: " + text.replace("\n", "\n    "))
            return
        if heldout is not None:
            scenes = _synthetic_scenes(heldout, split, limit, designs)
            report = ev.evaluate_synthetic(reader, scenes)
            title = f"synthetic {split} ({heldout}" + (f"; {', '.join(designs)}" if designs else "") + ")"
            typer.echo(
                ev.format_scene_report(
                    report, per_class, title=title, per_design=per_design, per_size=per_size
                )
            )
        elif n > 0:
            count = n if limit is None else min(n, limit)
            scenes = _progress(ev.render_heldout_scenes(count, seed), total=count)
            report = ev.evaluate_synthetic(reader, scenes)
            typer.echo(
                ev.format_scene_report(
                    report,
                    per_class,
                    title="synthetic held-out whole-table scenes",
                    per_design=per_design,
                    per_size=per_size,
                )
            )
        if not skip_real:
            photos = ev.load_real_photos(real or ev.REAL_DIR)[:limit]
            typer.echo(ev.format_real_report(ev.evaluate_real(reader, _progress(photos, total=len(photos)))))
    except ev.EvaluationDataError as exc:
        raise _fail(exc) from None


def _synthetic_scenes(
    dataset: Path, split: str, limit: int | None, designs: list[str] | None
) -> Iterator[SyntheticScene]:
    """The split's scenes with a progress bar: its total is the number of annotations (at most
    ``limit``), unknown when ``designs`` filters them."""
    from models import evaluate as ev

    total = None
    if not designs:
        total = sum(1 for _ in (dataset / "annotations" / split).glob("*.json"))
        total = total if limit is None else min(total, limit)
    return _progress(ev.load_synthetic_split(dataset, split, limit, designs or ()), total)


def _progress(items: Iterable[T], total: int | None = None) -> Iterator[T]:
    """``items`` with a progress bar on standard error when it is a terminal (none in logs or tests)."""
    from tqdm import tqdm

    yield from tqdm(items, total=total, desc="eval", unit="img", disable=None, leave=False)


def train_command(
    data: Annotated[Path, typer.Argument(help="data.yaml (ultralytics layout)")],
    model: Annotated[
        str, typer.Option("--model", help="model YAML (from scratch) or .pt to start from")
    ] = "",
    imgsz: Annotated[int, typer.Option("--imgsz")] = 320,
    epochs: Annotated[int, typer.Option("--epochs")] = 30,
    batch: Annotated[int, typer.Option("--batch")] = 32,
    workers: Annotated[int, typer.Option("--workers")] = 1,
    project: Annotated[Path, typer.Option("--project")] = Path("runs/detect"),
    name: Annotated[str, typer.Option("--name")] = "cards",
    cache: Annotated[str, typer.Option("--cache", help="ram, disk or none")] = "ram",
    single_cls: Annotated[
        bool, typer.Option("--single-cls", help="one class 'index': localise only (needs the classifier)")
    ] = False,
    lr0: Annotated[float, typer.Option("--lr0")] = 0.002,
) -> None:
    """Train the corner-index detector (checkpoints every epoch in PROJECT/NAME/weights)."""
    from models.train import PICO_YAML, TrainConfig, TrainConfigError, train

    try:
        config = TrainConfig(
            data=data,
            model=model or str(PICO_YAML),
            imgsz=imgsz,
            epochs=epochs,
            batch=batch,
            workers=workers,
            project=project,
            name=name,
            cache=False if cache == "none" else cache,
            single_cls=single_cls,
            lr0=lr0,
        )
    except TrainConfigError as exc:
        raise _fail(exc) from None
    typer.echo(str(train(config)))


def resume_command(last: Annotated[Path, typer.Argument(help="the run's weights/last.pt")]) -> None:
    """Continue an interrupted training run."""
    from models.train import TrainConfigError, resume

    try:
        typer.echo(str(resume(last)))
    except TrainConfigError as exc:
        raise _fail(exc) from None


def finetune_command(
    data: Annotated[Path, typer.Argument(help="data.yaml of the new deck's images")],
    weights: Annotated[Path, typer.Option("--weights")] = Path("models/weights/best.pt"),
    epochs: Annotated[int, typer.Option("--epochs")] = 10,
    imgsz: Annotated[int, typer.Option("--imgsz")] = 320,
    name: Annotated[str, typer.Option("--name")] = "finetune",
) -> None:
    """Fine-tune the shipped detector on a new deck (deck enrollment)."""
    from models.train import TrainConfigError, finetune

    try:
        typer.echo(str(finetune(data, weights, epochs=epochs, imgsz=imgsz, name=name)))
    except TrainConfigError as exc:
        raise _fail(exc) from None


def export_command(
    weights: Annotated[Path, typer.Argument(help="a trained .pt")],
    out: Annotated[Path | None, typer.Option("--out", help="default: beside the weights")] = None,
    imgsz: Annotated[int, typer.Option("--imgsz")] = 320,
    format: Annotated[str, typer.Option("--format", help="onnx or ncnn (a folder)")] = "onnx",
) -> None:
    """Export to ONNX (ONNX Runtime) or NCNN (fastest on a Raspberry Pi; see docs/vision.md)."""
    from models.export import ExportError, export_ncnn, export_onnx

    if format not in ("onnx", "ncnn"):
        raise _fail(ExportError(f"unknown format {format!r}: onnx or ncnn"))
    try:
        typer.echo(str((export_ncnn if format == "ncnn" else export_onnx)(weights, out, imgsz)))
    except ExportError as exc:
        raise _fail(exc) from None
