"""Subcommands of this package (registered into the `tractorcam` command line): ``detect``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer


def register(app: typer.Typer) -> None:
    """Add this package's subcommands to ``app``."""
    app.command("detect")(detect)


def detect(
    images: Annotated[list[Path], typer.Argument(help="image files (table photo, single card, fanned hand)")],
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object per image and line")] = False,
    backend: Annotated[
        str, typer.Option("--backend", help="onnx (default), ncnn, ultralytics, fake")
    ] = "onnx",
    weights: Annotated[
        Path | None,
        typer.Option(
            "--weights", help="model file (default: vision/weights/best.onnx, models/weights/best.pt)"
        ),
    ] = None,
    conf: Annotated[
        float | None,
        typer.Option("--conf", help="minimum card confidence (default: tuned, see the model card)"),
    ] = None,
    imgsz: Annotated[int, typer.Option("--imgsz", help="network input / tile size")] = 320,
    classifier: Annotated[
        Path | None, typer.Option("--classifier", help="index classifier .onnx (default: the committed one)")
    ] = None,
    det_conf: Annotated[
        float | None, typer.Option("--det-conf", help="detector box score kept for the classifier")
    ] = None,
    no_classifier: Annotated[
        bool, typer.Option("--no-classifier", help="use the detector's own classes")
    ] = False,
    model: Annotated[
        Path | None,
        typer.Option("--model", help="the event's enrolled deck folder (tractorcam enroll learn)"),
    ] = None,
) -> None:
    """Recognise the cards visible in each photo: one entry per physical card."""
    from vision.capture import UnreadableImageError, read_image
    from vision.detectors.base import ClassifierRequiredError, UnknownDetectorType, WeightsNotFoundError
    from vision.heads import ClassifierNotFoundError, HeadError
    from vision.reader import CardReader, ModelFolderError, default_reader_config, model_options

    if model is not None and (classifier is not None or no_classifier):
        typer.echo("error: --model gives the classifier: not with --classifier or --no-classifier", err=True)
        raise typer.Exit(2)
    try:
        learned = model_options(model)
    except ModelFolderError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    reader: CardReader | None = None
    for path in images:
        try:
            image = read_image(path)
        except UnreadableImageError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        if reader is None:
            options: dict[str, Any] = {"weights": weights, "imgsz": imgsz, **learned}
            if no_classifier or classifier is not None:
                options["classifier"] = None if no_classifier else classifier
            if conf is not None:
                options["conf"] = conf
            elif no_classifier:
                options["conf"] = 0.25
            if det_conf is not None:
                options["det_conf"] = det_conf
            try:
                reader = CardReader(default_reader_config(backend, **options))
            except (
                UnknownDetectorType,
                WeightsNotFoundError,
                ClassifierNotFoundError,
                HeadError,
                ClassifierRequiredError,
            ) as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(2) from None
        cards = reader.read(image).cards
        if as_json:
            typer.echo(json.dumps({"image": str(path), "cards": [c.to_json() for c in cards]}))
        else:
            listing = " ".join(f"{c.card}({c.score:.2f})" for c in cards) or "(no cards)"
            typer.echo(f"{path}: {len(cards)} cards: {listing}")
