"""The gold-on-black deck of the real phone photos, learned from half of its labelled photos.

    .venv/bin/python benchmarks/enroll_labels.py [--minutes 10 | --steps N] [--out DIR] [--view phone]

The photos of ``--view`` in ``../shared/real/cardcounterml-phone/labels.jsonl`` are split in two
halves (alternate lines); ``tractorcam enroll --labels`` learns the deck on the first
(:func:`models.enroll.learn_from_photos`: the look and the despeckle size, then the index classifier fine-tuned on the
indices the labels name); card precision, recall and F1 are measured on the second half, for the
shipped reader, the shipped reader in the learned look, the learned classifier, and with ``--localiser-epochs`` the
localiser taught on pseudo-boxes too (:mod:`models.deck_localiser`; the learned deck, ``--model
DIR``).
The labels a person found wrong by eye (``benchmarks/real-label-corrections.jsonl``: image, the
label as it stands, the right one and why) give one more row, the last reader on the corrected
labels; the rows above use the labels as given.
The learned model is written to ``--out`` (not shipped: the photos are third-party and validation
only).
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path
from typing import Annotated

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import typer  # noqa: E402

from models.deck_localiser import EPOCHS, learn_localiser  # noqa: E402
from models.enroll import learn_from_photos  # noqa: E402
from models.evaluate import (  # noqa: E402
    REAL_CARDS_DIR,
    CardPhoto,
    CardPhotoReport,
    evaluate_real_cards,
    load_real_cards,
)
from vision.capture import read_image  # noqa: E402
from vision.reader import CardReader, default_reader_config, model_options  # noqa: E402


def row(name: str, r: CardPhotoReport) -> str:
    c, j = r.cards, r.jokers
    p = 100 * c.tp / max(1, c.tp + c.fp)
    rec = 100 * c.tp / max(1, c.tp + c.fn)
    f1 = 100 * 2 * c.tp / max(1, 2 * c.tp + c.fp + c.fn)
    return (
        f"| {name} | {r.photos} | {c.tp + c.fn} | {p:.1f} % | {rec:.1f} % | **{f1:.1f} %** "
        f"| {j.tp}/{j.tp + j.fn} | {j.fp} | {r.perfect}/{r.photos} |"
    )


#: Test-half labels that a person checked against the photo and found wrong (the photos are not here).
CORRECTIONS = Path(__file__).with_name("real-label-corrections.jsonl")


def corrected(photos: list[CardPhoto], path: Path) -> tuple[list[CardPhoto], int]:
    """``photos`` with the labels in ``path`` put right (each line's ``was`` must be the label
    as it stands), and how many were changed."""
    fixes = {}
    for line in path.read_text().splitlines():
        if line.strip():
            fix = json.loads(line)
            fixes[fix["image"]] = fix
    out, changed = [], 0
    for photo in photos:
        fix = fixes.get(f"{photo.path.parent.name}/{photo.path.name}")
        if fix is not None:
            if sorted(fix["was"]) != sorted(photo.cards):
                raise SystemExit(f"{path}: {fix['image']} is labelled {list(photo.cards)}, not {fix['was']}")
            photo = dataclasses.replace(photo, cards=tuple(fix["cards"]))
            changed += 1
        out.append(photo)
    return out, changed


def main(
    minutes: Annotated[float, typer.Option(help="fine-tuning time (CPU)")] = 10.0,
    out: Annotated[Path, typer.Option(help="the learned deck's folder")] = Path("runs/gold-deck"),
    view: Annotated[str, typer.Option(help="the deck's photos (labels' view)")] = "phone",
    folder: Annotated[Path, typer.Option(help="folder with labels.jsonl and images/")] = REAL_CARDS_DIR,
    localiser_epochs: Annotated[
        int, typer.Option(help="then teach the localiser for this many epochs (0: not)")
    ] = EPOCHS,
    steps: Annotated[
        int, typer.Option(help="fine-tune for this many steps instead of --minutes (0: by time)")
    ] = 0,
    corrections: Annotated[
        Path, typer.Option(help="labels corrected by eye (JSON lines: image, was, cards, why)")
    ] = CORRECTIONS,
    reuse: Annotated[
        bool, typer.Option(help="keep the look and classifier already learned in --out")
    ] = False,
) -> None:
    os.environ.setdefault("YOLO_OFFLINE", "1")
    photos = [p for p in load_real_cards(folder) if p.view == view]
    learn_half, test_half = photos[0::2], photos[1::2]
    print(
        f"# {view} deck learned from {len(learn_half)} labelled photos, measured on the other "
        f"{len(test_half)}; {date.today()}, {os.cpu_count()}-core {platform.machine()}"
    )
    start = time.perf_counter()
    learning = [(read_image(p.path), p.cards) for p in learn_half]
    (out / "localiser.onnx").unlink(missing_ok=True)
    if reuse and (out / "learned.json").is_file():
        record = json.loads((out / "learned.json").read_text())
    else:
        record = learn_from_photos(learning, out, minutes, steps=steps, log=lambda s: print(s, flush=True))
    print(f"learned in {time.perf_counter() - start:.0f} s: {record}")
    readers = {
        "shipped": default_reader_config("onnx"),
        f"shipped, look {record['look']}, despeckle {record['despeckle']}": default_reader_config(
            "onnx", look=record["look"], despeckle=record["despeckle"]
        ),
        "learned classifier": default_reader_config("onnx", **model_options(out)),  # type: ignore[arg-type]
    }
    if localiser_epochs:
        start = time.perf_counter()
        taught = learn_localiser(learning, out, localiser_epochs, log=lambda s: print(s, flush=True))
        print(f"localiser taught in {time.perf_counter() - start:.0f} s: {taught}")
        readers["learned classifier and localiser (--model)"] = default_reader_config(
            "onnx",
            **model_options(out),  # type: ignore[arg-type]
        )
    print(
        "| reader | photos | cards | precision | recall | F1 | jokers found | false jokers | read exactly |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, config in readers.items():
        print(row(name, evaluate_real_cards(CardReader(config), test_half)), flush=True)
    fixed, changed = corrected(test_half, corrections)
    if changed:
        name, config = list(readers.items())[-1]
        report = evaluate_real_cards(CardReader(config), fixed)
        print(row(f"{name}, {changed} labels corrected ({corrections.name})", report), flush=True)


if __name__ == "__main__":
    typer.run(main)
