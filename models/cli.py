"""Subcommands of this package (registered into the `tractorcam` command line): ``eval``,
``train``, ``resume``, ``finetune``, ``export``, ``select``, the ``heads`` group (the reader's crop
networks: ``classifier``, ``orientation``, ``upright``) and the ``gpu``
group (``pack``, ``train``, ``check``). Heavy imports stay inside the functions.

A GPU machine without an install runs the same entry point from the tree,
``python3 -m tractorcam_cli gpu ...`` (no training module runs as a program of its own).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import replace
from enum import StrEnum
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

heads_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Train the reader's crop networks: the index classifier (and the suit head), the orientation "
    "and upright heads.",
)
gpu_app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Train the reader's networks on a lent GPU machine: pack what travels (here), train (there: "
    "python3 -m tractorcam_cli gpu train ...), check the weights that come back (here), average a fine-tuned "
    "classifier's weights with its base's (soup, here). See docs/gpu.md.",
)


def register(app: typer.Typer) -> None:
    """Add this package's subcommands to ``app``."""
    app.command("eval")(eval_command)
    app.command("train")(train_command)
    app.command("resume")(resume_command)
    app.command("finetune")(finetune_command)
    app.command("export")(export_command)
    app.command("select")(select_command)
    app.add_typer(heads_app, name="heads")
    app.add_typer(gpu_app, name="gpu")


def _fail(exc: Exception | str) -> typer.Exit:
    typer.echo(f"error: {exc}", err=True)
    return typer.Exit(2)


def eval_command(
    backend: Annotated[str, typer.Option("--backend", help="onnx or ultralytics")] = "onnx",
    weights: Annotated[
        Path | None,
        typer.Option("--weights", help="default: vision/weights/best.onnx, models/weights/best.pt"),
    ] = None,
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
    skip_real: Annotated[
        bool, typer.Option("--skip-real", help="skip both real photo sets (rank-labelled and card-labelled)")
    ] = False,
    real_cards: Annotated[
        Path | None,
        typer.Option(
            "--real-cards", help="card-labelled photo folder with labels.jsonl (default: ../shared/real/...)"
        ),
    ] = None,
    skip_real_cards: Annotated[
        bool, typer.Option("--skip-real-cards", help="skip the card-labelled real photos only")
    ] = False,
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
    joker_head: Annotated[
        Path | None,
        typer.Option(
            "--joker-head", help="joker-head .onnx (default: the committed one, if the settings name one)"
        ),
    ] = None,
    no_joker_head: Annotated[bool, typer.Option("--no-joker-head", help="no joker head")] = False,
    joker_weight: Annotated[
        float | None,
        typer.Option("--joker-weight", help="weight of the joker head's reading (default: the settings')"),
    ] = None,
    no_pair_naming: Annotated[
        bool,
        typer.Option("--no-pair-naming", help="name every corner alone, not a card's two corners together"),
    ] = False,
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
    """Print metrics: held-out synthetic scenes (per card, per play, jokers), real photos (ranks) and
    card-labelled real photos (cards and jokers, per view)."""
    from models import evaluate as ev
    from vision.detectors.base import ClassifierRequiredError, UnknownDetectorType, WeightsNotFoundError
    from vision.heads import ClassifierNotFoundError, HeadError
    from vision.reader import CardReader, default_reader_config
    from vision.tiling import TilingConfigError

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
    if no_joker_head or joker_head is not None:
        options["joker_head"] = None if no_joker_head else joker_head
    if joker_weight is not None:
        options["joker_weight"] = joker_weight
    if sweep:
        options["conf"] = 0.05
        options["det_conf"] = min(sweep_det_confs or SWEEP_DET_CONFS)
        options["joker_conf"] = None
    elif conf is not None:
        options["conf"] = conf
    elif no_classifier:
        options["conf"] = 0.25
    if det_conf is not None and sweep:
        raise _fail("--det-conf with --sweep: the sweep tries its own (--sweep-det-conf)")
    if det_conf is not None:
        options["det_conf"] = det_conf
    if joker_conf is not None:
        options["joker_conf"] = joker_conf
    try:
        config = default_reader_config(backend, **options)  # type: ignore[arg-type]
        reader = CardReader(replace(config, pair_naming=None) if no_pair_naming else config)
    except (
        UnknownDetectorType,
        WeightsNotFoundError,
        ClassifierNotFoundError,
        HeadError,
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
        + (f", joker head {d.joker_head} (weight {d.joker_weight:g})" if d.joker_head is not None else "")
        + ("" if reader.adjust is not None else ", no pair naming")
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
        if not skip_real and not skip_real_cards:
            card_photos = ev.load_real_cards(real_cards or ev.REAL_CARDS_DIR)[:limit]
            report_cards = ev.evaluate_real_cards(reader, _progress(card_photos, total=len(card_photos)))
            typer.echo(ev.format_real_cards_report(report_cards))
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


# --------------------------------------------------------------------------- select


def select_command(
    sweeps: Annotated[
        list[Path],
        typer.Argument(
            help="sweep outputs of `tractorcam eval --sweep`; the last --unseen are unseen designs"
        ),
    ],
    shipped: Annotated[
        list[Path] | None,
        typer.Option(
            "--shipped", help="a sweep of the shipped reader: the same sets, in the same order (repeat it)"
        ),
    ] = None,
    joker_floor: Annotated[
        float,
        typer.Option(
            "--joker-floor", help="least probability a joker may need in an eligible setting (0: any)"
        ),
    ] = 0.8,
    unseen: Annotated[
        int,
        typer.Option(
            "--unseen",
            help="how many of the last sweeps are unseen-design sets (pooled for the not-worse check)",
        ),
    ] = 1,
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            help="put the pick's thresholds into this reader settings file (vision/weights/reader.json); "
            "refused when --shipped says the candidate does not replace the shipped reader",
        ),
    ] = None,
    real: Annotated[
        Path | None,
        typer.Option(
            "--real", help="the candidate's `tractorcam eval --n 0` output at its pick (the real-photo gate)"
        ),
    ] = None,
    shipped_real: Annotated[
        Path | None,
        typer.Option("--shipped-real", help="the shipped reader's `tractorcam eval --n 0` output"),
    ] = None,
) -> None:
    """Pick a reader's thresholds from pooled `eval --sweep` outputs (models.selection).

    With --shipped, also say whether the candidate replaces the shipped reader."""
    from models.selection import (
        SweepFormatError,
        compare,
        describe,
        parse_sweep,
        pick,
        pool,
        real_gate,
        write_pick,
    )
    from vision.settings import SettingsError

    if (real is None) != (shipped_real is None):
        raise _fail("--real and --shipped-real go together (the gate compares the two readers)")
    try:
        gate = real_gate(real.read_text(), shipped_real.read_text()) if real and shipped_real else None
        cand = [parse_sweep(f.read_text()) for f in sweeps]
        ship = [parse_sweep(f.read_text()) for f in shipped] if shipped else None
        best = pick(pool(cand).values(), joker_floor=joker_floor)
        verdict = compare(cand, ship, joker_floor, unseen) if ship is not None else None
    except (OSError, SweepFormatError, ValueError) as exc:
        raise _fail(exc) from None
    if verdict is not None and verdict.candidate.setting != best.setting:
        typer.echo(f"pick among all settings (pooled): {describe(best)}")
        best = verdict.candidate
        typer.echo(
            "  fewer exact plays than the shipped reader's pick: picked among the settings that keep them"
        )
    typer.echo(f"pick (pooled): {describe(best)}")
    for f, sw in zip(sweeps, cand, strict=True):
        typer.echo(f"  {f.name}: {describe(sw[best.setting])}")
    if verdict is not None:
        v = verdict
        typer.echo(f"shipped pick (pooled): {describe(v.shipped)}")
        typer.echo(
            f"  unseen designs: candidate {v.candidate_unseen.cards.f1:.2%}, shipped {v.shipped_unseen.cards.f1:.2%}"
        )
        typer.echo(
            f"better pooled F1: {v.better_pooled}; unseen designs not worse: {v.unseen_not_worse}; "
            f"exact match not worse: {v.exact_not_worse}; "
            + ("go on to the real-photo gate" if v.replaces else "keep the shipped reader")
        )
    if gate is not None:
        typer.echo("real-photo gate: " + ("passed" if not gate else "failed: " + "; ".join(gate)))
    if write is not None:
        if gate:
            raise _fail(f"--write {write}: the candidate fails the real-photo gate; nothing written")
        if verdict is not None and not verdict.replaces:
            raise _fail(
                f"--write {write}: the candidate does not replace the shipped reader; nothing written"
            )
        try:
            write_pick(best, write)
        except SettingsError as exc:
            raise _fail(exc) from None
        typer.echo(f"thresholds written to {write}")


# --------------------------------------------------------------------------- heads


class Target(StrEnum):
    """What ``heads classifier`` trains (:data:`models.classifier.TARGETS`)."""

    card = "card"
    suit = "suit"


class Augmentation(StrEnum):
    """The per-crop training jitter (:data:`models.classifier.AUGMENTATIONS`)."""

    basic = "basic"
    strong = "strong"


@heads_app.command("classifier")
def classifier_command(
    out: Annotated[
        Path, typer.Argument(help="the network's ONNX file (OUT.pt, its best state dict, beside it)")
    ],
    train: Annotated[
        list[str], typer.Option("--train", help="DIR[:split] of a YOLO-layout dataset (repeat it)")
    ],
    val: Annotated[
        list[str], typer.Option("--val", help="DIR[:split] (repeat it); the first one picks the best epoch")
    ],
    epochs: Annotated[int, typer.Option("--epochs", help="passes over the training crops")] = 8,
    jitter: Annotated[int, typer.Option("--jitter", help="jittered copies of each labelled index")] = 2,
    seed: Annotated[int, typer.Option("--seed", help="seeds the crops' jitter and the training")] = 0,
    negatives: Annotated[int, typer.Option("--negatives", help="background crops per image")] = 1,
    size: Annotated[int, typer.Option("--size", help="crop side in pixels")] = 40,
    pad: Annotated[float, typer.Option("--pad", help="context around a box, share of its long side")] = 0.15,
    target: Annotated[
        Target, typer.Option("--target", help="card: 54 cards + background; suit: the suit head")
    ] = Target.card,
    threads: Annotated[int, typer.Option("--threads", help="torch threads (0: all cores)")] = 0,
    lr: Annotated[float, typer.Option("--lr", help="peak learning rate")] = 3e-3,
    width: Annotated[float, typer.Option("--width", help="channel multiplier of the network")] = 1.0,
    augment: Annotated[
        Augmentation, typer.Option("--augment", help="per-crop training jitter")
    ] = Augmentation.basic,
    init: Annotated[
        Path | None, typer.Option("--init", help="start from a saved state dict (OUT.pt of an earlier run)")
    ] = None,
    init_partial: Annotated[
        bool,
        typer.Option(
            "--init-partial",
            help="take from --init only the tensors that fit (e.g. a classifier's convolutions for a suit head)",
        ),
    ] = False,
    mine: Annotated[
        Path | None,
        typer.Option(
            "--mine",
            help="detector .onnx: add its boxes on the --train images as crops (hard negatives, real box shapes)",
        ),
    ] = None,
    mine_on: Annotated[
        list[str] | None,
        typer.Option("--mine-on", help="DIR[:split] to mine on (repeat it; default: the --train sources)"),
    ] = None,
    mine_conf: Annotated[float, typer.Option("--mine-conf", help="detector score of mined boxes")] = 0.05,
    mine_limit: Annotated[
        int | None, typer.Option("--mine-limit", help="at most this many images per mined source")
    ] = None,
    mine_cache: Annotated[
        Path | None, typer.Option("--mine-cache", help=".npz of mined crops: written once, then reused")
    ] = None,
    mine_background: Annotated[
        int | None,
        typer.Option(
            "--mine-background",
            help="keep all named mined crops but at most this many background ones (random, --seed)",
        ),
    ] = None,
    extra_crops: Annotated[
        list[Path] | None,
        typer.Option(
            "--extra-crops",
            help=".npz crop set (arrays x, y, e.g. a --mine-cache file) added to the training crops (repeat it)",
        ),
    ] = None,
) -> None:
    """Train the index classifier (or, with --target suit, the suit head) on index crops.

    The crops are cut around labelled corner indices; the best epoch on the first --val is exported
    to ONNX (models.classifier)."""
    import time

    import numpy as np

    from models.classifier import CropSet, _sources, extract_crops, load_crops, suit_targets, train_classifier
    from vision.classifier import BACKGROUND

    extra = extra_crops or []
    suit = target == Target.suit
    if suit and (mine is not None or extra):
        raise _fail("--target suit reads labelled crops only (no --mine, no --extra-crops)")
    negatives = 0 if suit else negatives
    pick = suit_targets if suit else (lambda c: c)
    t0 = time.time()
    crops = pick(extract_crops(_sources(train), jitter, seed, negatives=negatives, size=size, pad=pad))
    val_crops = [
        (s, pick(extract_crops(_sources([s]), 1, seed + 1, negatives=negatives, size=size, pad=pad)))
        for s in val
    ]
    sizes = ", ".join(f"{k} {len(v.y)}" for k, v in val_crops)
    typer.echo(f"crops: train {len(crops.y)}, {sizes} ({time.time() - t0:.0f}s)")
    parts = [crops]  # joined once below: each join copies every crop
    if mine is not None and mine_cache is not None and mine_cache.is_file():
        parts.append(load_crops(mine_cache))
    elif mine is not None:
        from models.mining import keep_background, mine_crops

        mined = mine_crops(
            mine, _sources(mine_on or train), seed, size=size, det_conf=mine_conf, limit=mine_limit
        )
        typer.echo(f"mined: {len(mined.y)} crops, {(mined.y == BACKGROUND).sum()} background")
        if mine_background is not None:
            mined = keep_background(mined, mine_background, seed)
            typer.echo(f"kept: {len(mined.y)} crops, {(mined.y == BACKGROUND).sum()} background")
        if mine_cache is not None:
            np.savez(mine_cache, x=mined.x, y=mined.y)
        if epochs == 0:
            return
        parts.append(mined)
    for path in extra:
        parts.append(load_crops(path))
        n_bg = int((parts[-1].y == BACKGROUND).sum())
        typer.echo(f"extra crops {path}: {len(parts[-1].y)}, {n_bg} background")
    if len(parts) > 1:
        crops = CropSet(np.concatenate([c.x for c in parts]), np.concatenate([c.y for c in parts]))
    result = train_classifier(
        crops,
        val_crops,
        epochs,
        out,
        seed,
        lr=lr,
        threads=threads,
        init=init,
        width=width,
        augmentation=augment.value,
        classes=4 if suit else 55,
        pad=pad,
        init_partial=init_partial,
    )
    typer.echo(str(result))


@heads_app.command("orientation")
def orientation_command(
    out: Annotated[
        Path, typer.Argument(help="the head's ONNX file (OUT.pt, its best state dict, beside it)")
    ],
    train: Annotated[
        list[str], typer.Option("--train", help="DIR[:split] of a rendered dataset (annotations; repeat it)")
    ],
    val: Annotated[
        list[str], typer.Option("--val", help="DIR[:split] (repeat it); the first one picks the best epoch")
    ],
    epochs: Annotated[int, typer.Option("--epochs", help="passes over the training crops")] = 2,
    jitter: Annotated[int, typer.Option("--jitter", help="jittered copies of each labelled index")] = 1,
    limit: Annotated[int | None, typer.Option("--limit", help="at most this many images per source")] = None,
    seed: Annotated[int, typer.Option("--seed", help="seeds the crops' jitter and the training")] = 0,
    threads: Annotated[int, typer.Option("--threads", help="torch threads (0: all cores)")] = 0,
    lr: Annotated[float, typer.Option("--lr", help="peak learning rate")] = 3e-3,
    width: Annotated[float, typer.Option("--width", help="channel multiplier of the network")] = 0.75,
) -> None:
    """Train the orientation head: which way a corner index reads, in 8 sectors.

    On the renderer's labelled index crops, each also turned by 90°, 180° and 270°
    (models.orientation)."""
    import time

    from models.classifier import _sources, train_classifier
    from models.orientation import extract_oriented_crops, turned
    from vision.orientation import BINS

    t0 = time.time()
    crops = turned(extract_oriented_crops(_sources(train), jitter, seed, limit))
    val_crops = [(s, turned(extract_oriented_crops(_sources([s]), 1, seed + 1, limit))) for s in val]
    sizes = ", ".join(f"{k} {len(v.y)}" for k, v in val_crops)
    typer.echo(f"crops: train {len(crops.y)}, {sizes} ({time.time() - t0:.0f}s)")
    result = train_classifier(
        crops, val_crops, epochs, out, seed, lr=lr, threads=threads, width=width, classes=BINS
    )
    typer.echo(str(result))


@heads_app.command("upright")
def upright_command(
    out: Annotated[
        Path, typer.Argument(help="the head's ONNX file (OUT.pt, its best state dict, beside it)")
    ],
    train: Annotated[
        list[str] | None, typer.Option("--train", help="DIR[:split] of a YOLO-layout dataset (repeat it)")
    ] = None,
    val: Annotated[
        list[str] | None,
        typer.Option("--val", help="DIR[:split] (repeat it); the first one picks the best epoch"),
    ] = None,
    save_crops: Annotated[
        Path | None,
        typer.Option("--save-crops", help=".npz: write the --train crops here (then stop if --epochs 0)"),
    ] = None,
    extra_crops: Annotated[
        list[Path] | None,
        typer.Option("--extra-crops", help=".npz crop set (a --save-crops file) to add (repeat it)"),
    ] = None,
    epochs: Annotated[int, typer.Option("--epochs", help="passes over the training crops")] = 6,
    jitter: Annotated[int, typer.Option("--jitter", help="jittered copies of each labelled index")] = 2,
    angle_jitter: Annotated[
        float, typer.Option("--angle-jitter", help="random turn, degrees either way")
    ] = 8.0,
    limit: Annotated[
        int | None, typer.Option("--limit", help="at most this many images per training source")
    ] = None,
    val_limit: Annotated[
        int | None, typer.Option("--val-limit", help="at most this many images per --val source")
    ] = None,
    orientation_head: Annotated[
        Path | None, typer.Option("--orientation-head", help="default: the committed one")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="seeds the crops' jitter and the training")] = 0,
    threads: Annotated[int, typer.Option("--threads", help="torch threads (0: all cores)")] = 0,
    lr: Annotated[float, typer.Option("--lr", help="peak learning rate")] = 3e-3,
    width: Annotated[float, typer.Option("--width", help="channel multiplier of the network")] = 1.0,
) -> None:
    """Train the upright head: the 54 cards from index crops turned upright.

    The committed orientation head turns them (models.upright). --save-crops R.npz --epochs 0 cuts
    the crops once; --extra-crops R.npz adds them to a later run."""
    import time

    import numpy as np

    from models.classifier import CropSet, _sources, load_crops, train_classifier
    from models.upright import _fits, extract_upright_crops
    from vision.crops import CROP_SIZE
    from vision.detectors.base import default_orientation_head
    from vision.heads import ORIENTATION, UPRIGHT, CropHead

    train, val, extra = train or [], val or [], extra_crops or []
    if not train and not extra:
        raise _fail("nothing to train on: pass --train and/or --extra-crops")
    if epochs > 0 and not val:
        raise _fail("training needs --val (its first source picks the best epoch)")
    if save_crops is not None and not train:
        raise _fail("--save-crops writes the crops of --train")
    turn = orientation_head or default_orientation_head()
    if turn is None:
        raise _fail("no orientation head: pass --orientation-head")
    head = CropHead(Path(turn), ORIENTATION, threads=1)
    cards = UPRIGHT.outputs[0]
    t0 = time.time()
    parts = [load_crops(f) for f in extra]
    misfits = [f for f, c in zip(extra, parts, strict=True) if not _fits(c)]
    if misfits:  # checked before the (minutes of) cutting, not after
        raise _fail(f"{misfits}: crops must be (3, {CROP_SIZE}, {CROP_SIZE}) with labels < {cards}")
    if train:
        cut = extract_upright_crops(_sources(train), head, jitter, seed, angle_jitter, limit)
        typer.echo(f"crops cut: {len(cut.y)} ({time.time() - t0:.0f}s)")
        if save_crops is not None:
            np.savez(save_crops, x=cut.x, y=cut.y)
        parts.append(cut)
    if epochs == 0:
        return
    crops = (
        parts[0]
        if len(parts) == 1
        else CropSet(np.concatenate([c.x for c in parts]), np.concatenate([c.y for c in parts]))
    )
    val_crops = [(s, extract_upright_crops(_sources([s]), head, 0, seed + 1, 0.0, val_limit)) for s in val]
    sizes = ", ".join(f"{k} {len(v.y)}" for k, v in val_crops)
    typer.echo(f"crops: train {len(crops.y)}, {sizes} ({time.time() - t0:.0f}s)")
    result = train_classifier(
        crops, val_crops, epochs, out, seed, lr=lr, threads=threads, width=width, classes=cards
    )
    typer.echo(str(result))


# --------------------------------------------------------------------------- gpu


@gpu_app.command("pack")
def gpu_pack_command(
    dest: Annotated[Path, typer.Argument(help="the folder that travels (carry it), e.g. .gpu")],
    font_kb: Annotated[int, typer.Option("--font-kb", help="fonts larger than this (kB) stay behind")] = 200,
    no_wheels: Annotated[
        bool, typer.Option("--no-wheels", help="leave the wheels out (no package index is asked)")
    ] = False,
    webp_quality: Annotated[
        int, typer.Option("--webp-quality", help="WebP quality of the face atlases (1-100)", min=1, max=100)
    ] = 80,
    no_localiser: Annotated[
        bool,
        typer.Option("--no-localiser", help="leave out the wheels only the localiser needs (ultralytics)"),
    ] = False,
) -> None:
    """Write the folder that travels to the GPU machine (here).

    The training decks' face atlases, the randomised decks' fonts, and the wheels the machine's image
    lacks (models.gpu.packing)."""
    from models.gpu import GpuRunError, pack

    try:
        pack(dest, font_kb, not no_wheels, webp_quality, not no_localiser)
    except GpuRunError as exc:
        raise _fail(exc) from None


#: ``gpu train --variant`` by default: NAME:WIDTH:LR[:init] of each classifier trained.
GPU_VARIANTS = ["w2init:2:0.001:init", "w2:2:0.003", "w3:3:0.003"]


@gpu_app.command("train")
def gpu_train_command(
    out: Annotated[Path, typer.Argument(help="folder of the run's weights, metrics.json and logs")],
    budget: Annotated[float, typer.Option("--budget", help="wall-clock seconds for the whole run")] = 510.0,
    workers: Annotated[int, typer.Option("--workers", help="rendering processes")] = max(
        1, (os.cpu_count() or 2) - 1
    ),
    seed: Annotated[int, typer.Option("--seed", help="seeds the run's scenes")] = 44,
    chunk: Annotated[int, typer.Option("--chunk", help="scenes per worker job")] = 4,
    warmup: Annotated[float, typer.Option("--warmup", help="seconds of rendering before training")] = 45.0,
    tail: Annotated[float, typer.Option("--tail", help="seconds kept at the end for saving")] = 25.0,
    batch: Annotated[int, typer.Option("--batch", help="classifier crops per step")] = 1024,
    mine_share: Annotated[
        float, typer.Option("--mine-share", help="share of scenes the shipped localiser's boxes are cut from")
    ] = 0.6,
    mined_background: Annotated[
        int,
        typer.Option(
            "--mined-background", help="the localiser's boxes on no index kept per mined scene, at most"
        ),
    ] = 12,
    val_scenes: Annotated[
        int, typer.Option("--val-scenes", help="selection scenes whose crops score the classifiers")
    ] = 200,
    variant: Annotated[
        list[str], typer.Option("--variant", help="NAME:WIDTH:LR[:init] of a classifier to train (repeat it)")
    ] = GPU_VARIANTS,
    device: Annotated[
        str, typer.Option("--device", help="torch device (default: cuda if there, else cpu)")
    ] = "",
    bank_share: Annotated[
        float,
        typer.Option(
            "--bank-share", help="share of each batch cut on the device from the face bank (0: none)"
        ),
    ] = 0.5,
    bank_decks: Annotated[
        int,
        typer.Option("--bank-decks", help="randomised decks drawn for the face bank (plus the art decks)"),
    ] = 1000,
    art_share: Annotated[
        float, typer.Option("--art-share", help="share of rendered scenes dealt from the art decks")
    ] = 0.5,
    bank_art_share: Annotated[
        float,
        typer.Option(
            "--bank-art-share",
            help="share of the face bank's crops cut from the art decks' faces (negative: every face alike)",
        ),
    ] = 0.5,
    bank_background: Annotated[
        float, typer.Option("--bank-background", help="share of the face bank's crops that are background")
    ] = 0.12,
    bank_joker_share: Annotated[
        float,
        typer.Option(
            "--bank-joker-share",
            help="share of the face bank's crops cut from jokers (every deck's, any style)",
        ),
    ] = 0.0,
    tile_share: Annotated[
        float,
        typer.Option(
            "--tile-share",
            help="share of rendered examples that are face tiles (close, a quarter jokers, bare surfaces) not scenes",
        ),
    ] = 0.0,
    bank_proposals: Annotated[
        bool,
        typer.Option(
            "--bank-proposals/--no-bank-proposals",
            help="cut the bank's background where the shipped localiser proposes off the index",
        ),
    ] = True,
    loc_data: Annotated[
        str, typer.Option("--loc-data", help="folder of the scenes written for the localiser")
    ] = "/tmp/gpu_loc",
    loc_project: Annotated[
        str, typer.Option("--loc-project", help="folder of the localiser's ultralytics run")
    ] = "/tmp/gpu_loc_run",
    loc_render: Annotated[
        float, typer.Option("--loc-render", help="seconds of scenes written for the localiser")
    ] = 120.0,
    no_localiser: Annotated[bool, typer.Option("--no-localiser", help="train the classifiers only")] = False,
    loc_tail: Annotated[
        float, typer.Option("--loc-tail", help="seconds before the end at which the localiser's time ends")
    ] = 40.0,
    loc_batch: Annotated[int, typer.Option("--loc-batch", help="the localiser's batch")] = 128,
    loc_workers: Annotated[
        int, typer.Option("--loc-workers", help="the localiser's data-loader processes")
    ] = 6,
    head: Annotated[
        str,
        typer.Option(
            "--head",
            help="what the variants are: 'cards' (the index classifier, 55 classes) or 'joker' "
            "(the joker head: not a joker / small / big, on a wider window)",
        ),
    ] = "cards",
) -> None:
    """Render and train the classifier variants and the localiser in one budget (there).

    Writes their weights, metrics.json and the logs into OUT (models.gpu.runs)."""
    from models.gpu import GpuRunError, GpuTrainConfig, run

    args = GpuTrainConfig(
        out=out,
        budget=budget,
        workers=workers,
        seed=seed,
        chunk=chunk,
        warmup=warmup,
        tail=tail,
        batch=batch,
        mine_share=mine_share,
        mined_background=mined_background,
        val_scenes=val_scenes,
        variant=list(variant),
        device=device,
        bank_share=bank_share,
        bank_decks=bank_decks,
        art_share=art_share,
        bank_art_share=bank_art_share if bank_art_share >= 0 else None,
        bank_background=bank_background,
        bank_joker_share=bank_joker_share,
        tile_share=tile_share,
        bank_proposals=bank_proposals,
        loc_data=loc_data,
        loc_project=loc_project,
        loc_render=loc_render,
        localiser=not no_localiser,
        loc_tail=loc_tail,
        loc_batch=loc_batch,
        loc_workers=loc_workers,
        head=head,
    )
    try:
        run(args)
    except GpuRunError as exc:
        raise _fail(exc) from None


@gpu_app.command("localiser", hidden=True)
def gpu_localiser_command(
    data: Annotated[Path, typer.Argument(help="the scenes written for the localiser")],
    project: Annotated[Path, typer.Argument(help="folder of the ultralytics run")],
    minutes: Annotated[float, typer.Option("--minutes", help="training time")],
    device: Annotated[str, typer.Option("--device", help="ultralytics device")] = "0",
    batch: Annotated[int, typer.Option("--batch", help="images per step")] = 128,
    workers: Annotated[int, typer.Option("--workers", help="data-loader processes")] = 6,
    arch: Annotated[
        str, typer.Option("--arch", help="shipped, or a scale to train from scratch")
    ] = "shipped",
    lr: Annotated[float, typer.Option("--lr", help="ultralytics lr0")] = 0.001,
    name: Annotated[str, typer.Option("--name", help="the run's name in the project folder")] = "loc",
    cache: Annotated[
        str, typer.Option("--cache", help="ultralytics image cache: ram, disk or none")
    ] = "none",
) -> None:
    """Train one localiser (the subprocess that `gpu train` and `gpu localisers` start)."""
    from models.gpu import GpuRunError, train_localiser

    try:
        train_localiser(
            data, project.resolve(), minutes, device, batch, workers, arch, lr, name, _cache(cache)
        )
    except GpuRunError as exc:
        raise _fail(exc) from None


def _cache(value: str) -> str | bool:
    if value not in ("ram", "disk", "none"):
        raise typer.BadParameter(f"--cache {value!r}: ram, disk or none")
    return False if value == "none" else value


#: ``gpu localisers --variant`` by default: NAME:ARCH:LR of each localiser trained.
GPU_LOC_VARIANTS = ("pft:shipped:0.001", "n:n:0.002")


@gpu_app.command("localisers")
def gpu_localisers_command(
    out: Annotated[Path, typer.Argument(help="folder of the run's weights, metrics.json and logs")],
    budget: Annotated[float, typer.Option("--budget", help="wall-clock seconds for the whole run")] = 510.0,
    workers: Annotated[int, typer.Option("--workers", help="rendering and data-loader processes")] = max(
        1, (os.cpu_count() or 2) - 1
    ),
    render: Annotated[
        float, typer.Option("--render", help="seconds every core renders scenes first")
    ] = 140.0,
    seed: Annotated[int, typer.Option("--seed", help="seeds the run's scenes")] = 45,
    chunk: Annotated[int, typer.Option("--chunk", help="scenes per worker job")] = 4,
    tail: Annotated[float, typer.Option("--tail", help="seconds kept at the end for saving")] = 20.0,
    batch: Annotated[int, typer.Option("--batch", help="images per step of each localiser")] = 64,
    art_share: Annotated[
        float, typer.Option("--art-share", help="share of scenes drawn from the training art decks")
    ] = 0.5,
    tiles: Annotated[
        float,
        typer.Option(
            "--tiles",
            help="share of the render jobs that make face tiles with bare-surface and empty negatives",
        ),
    ] = 0.0,
    cache: Annotated[str, typer.Option("--cache", help="ultralytics image cache: ram, disk or none")] = "ram",
    device: Annotated[str, typer.Option("--device", help="ultralytics device")] = "0",
    variant: Annotated[
        list[str] | None,
        typer.Option("--variant", help="NAME:ARCH:LR, ARCH shipped or a scale p, n, s (repeat it)"),
    ] = None,
    loc_data: Annotated[
        str, typer.Option("--loc-data", help="folder of the scenes written for the localisers")
    ] = "/tmp/gpu_loc_scenes",
    loc_project: Annotated[
        str, typer.Option("--loc-project", help="folder of the localisers' ultralytics runs")
    ] = "/tmp/gpu_loc_runs",
) -> None:
    """Render scenes (and face tiles, --tiles) on every core, then train localiser variants side by
    side (there).

    Writes loc_NAME.pt for each variant, their logs, metrics.json and log.txt; evaluate here with
    `tractorcam export`, `gpu check --localiser` and the selection rule (docs/gpu.md)."""
    from models.gpu import GpuLocalisersConfig, GpuRunError, run_localisers

    _cache(cache)
    if not 0.0 <= tiles <= 1.0:
        raise typer.BadParameter(f"--tiles {tiles}: a share from 0 to 1")
    args = GpuLocalisersConfig(
        out=out,
        budget=budget,
        workers=workers,
        render=render,
        seed=seed,
        chunk=chunk,
        tail=tail,
        batch=batch,
        art_share=art_share,
        tiles=tiles,
        cache=cache,
        device=device,
        variant=list(variant or GPU_LOC_VARIANTS),
        loc_data=loc_data,
        loc_project=loc_project,
    )
    try:
        run_localisers(args)
    except GpuRunError as exc:
        raise _fail(exc) from None


@gpu_app.command("soup")
def gpu_soup_command(
    tuned: Annotated[Path, typer.Argument(help="the fine-tuned classifier's state dict (.pt)")],
    out: Annotated[Path, typer.Argument(help="where to write OUT.pt and OUT.onnx")],
    base: Annotated[Path, typer.Option("--base", help="the classifier it was fine-tuned from (.pt)")] = Path(
        "models/weights/classifier.pt"
    ),
    alpha: Annotated[float, typer.Option("--alpha", help="the fine-tuned network's weight")] = 0.5,
    width: Annotated[float, typer.Option("--width", help="the networks' width")] = 2.0,
) -> None:
    """Interpolate a fine-tuned classifier's weights with its base's (weight-space ensembling, here).

    (1 - alpha) * base + alpha * tuned, written as OUT.pt and OUT.onnx (models.gpu.checks.soup)."""
    from models.gpu import GpuRunError, soup

    try:
        soup(base, tuned, alpha, out, width)
    except GpuRunError as exc:
        raise _fail(exc) from None
    typer.echo(f"wrote {out.with_suffix('.pt')} and {out.with_suffix('.onnx')}")


@gpu_app.command("export")
def gpu_export_command(
    weights: Annotated[Path, typer.Argument(help="a network's state dict (.pt) from `gpu train`")],
    out: Annotated[Path, typer.Argument(help="the ONNX file to write")],
    head: Annotated[
        str, typer.Option("--head", help="what it is: 'cards' or 'joker' (gpu train --head)")
    ] = "joker",
    width: Annotated[float, typer.Option("--width", help="its width (the variant's)")] = 2.0,
) -> None:
    """Write a network trained by `gpu train` as ONNX, its window's pad in the file (here)."""
    from models.gpu import GpuRunError, export_head

    try:
        export_head(weights, out, head, width)
    except GpuRunError as exc:
        raise _fail(exc) from None
    typer.echo(f"wrote {out}")


@gpu_app.command("check")
def gpu_check_command(
    split: Annotated[
        list[str], typer.Option("--split", help="NAME=DIR:SPLIT of a rendered dataset (repeat it)")
    ],
    classifier: Annotated[
        list[str] | None,
        typer.Option("--classifier", help="NAME=PATH.pt:WIDTH of a classifier state dict (repeat it)"),
    ] = None,
    localiser: Annotated[
        list[str] | None, typer.Option("--localiser", help="NAME=PATH.onnx of a localiser (repeat it)")
    ] = None,
    every: Annotated[int, typer.Option("--every", help="localisers: every n-th image")] = 3,
) -> None:
    """Compare a run's networks with the shipped ones on selection splits (here).

    Classifiers: top-1 on label crops; localisers: recall and boxes on no index (models.gpu.checks)."""
    from models.gpu import GpuRunError, check_classifiers, check_localisers
    from models.gpu.checks import _cell

    try:
        tables = (
            ("classifiers: top-1 on label crops", check_classifiers(classifier, split) if classifier else {}),
            ("localisers", check_localisers(localiser, split, every) if localiser else {}),
        )
    except GpuRunError as exc:
        raise _fail(exc) from None
    for title, table in tables:
        if table:
            typer.echo(title)
            for name, row in table.items():
                typer.echo(f"  {name}: " + ", ".join(_cell(k, v) for k, v in row.items()))
