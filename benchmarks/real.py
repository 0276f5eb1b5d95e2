"""The shipped reader on the card-labelled real phone photos (``../shared/real/cardcounterml-phone``).

    .venv/bin/python benchmarks/real.py [--folder DIR] [--view phone] [--limit N] [--dump FILE.jsonl]

Per photo the multiset of the reader's card names against the labelled multiset (no boxes; a ``??``
or any name not on the photo is a false positive): card precision, recall and F1, jokers (``SJ``,
``BJ``) apart, per view (``phone``: one gold-on-black deck; ``phone2022``: other designs) and
pooled, the photos read exactly, and the seconds per photo spent in ``CardReader.read``.

``--dump`` writes one JSON line per photo for looking at the failures: the labels, the cards read,
and (diagnostics, not timed) how many index boxes the localiser finds at the reader's ``det_conf``
(``boxes``: all levels and tiles; ``proposals``: after the overlap filters the classifier applies)
and the classifier's best name and probability of each proposal it does not call background,
whatever the card threshold.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from datetime import date
from pathlib import Path
from typing import IO, Annotated

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402
import typer  # noqa: E402
from tqdm import tqdm  # noqa: E402

from models.evaluate import (  # noqa: E402
    REAL_CARDS_DIR,
    CardPhoto,
    CardPhotoReport,
    evaluate_real_cards,
    load_real_cards,
)
from vision.classifier import proposals  # noqa: E402
from vision.reader import CardReader, Reading, default_reader_config  # noqa: E402


def _pct(num: int, den: int) -> str:
    return f"{100 * num / den:.1f} %" if den else "–"


def table(report: CardPhotoReport) -> str:
    """A markdown table: one row per view, then the pooled one."""
    lines = [
        "| view | photos | cards | precision | recall | F1 | jokers found | false jokers | read exactly | s/photo |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    rows = [*sorted(report.by_view.items()), ("pooled", report)]
    for name, r in rows:
        c, j = r.cards, r.jokers
        lines.append(
            f"| {name} | {r.photos} | {c.tp + c.fn} | {_pct(c.tp, c.tp + c.fp)} | {_pct(c.tp, c.tp + c.fn)} "
            f"| {_pct(2 * c.tp, 2 * c.tp + c.fp + c.fn)} | {j.tp}/{j.tp + j.fn} | {j.fp} "
            f"| {r.perfect}/{r.photos} | {r.seconds / r.photos:.2f} |"
        )
    return "\n".join(lines)


def main(
    folder: Annotated[Path, typer.Option(help="folder with labels.jsonl and images/")] = REAL_CARDS_DIR,
    view: Annotated[list[str] | None, typer.Option(help="only the photos of this view (repeatable)")] = None,
    limit: Annotated[int | None, typer.Option(help="at most this many photos")] = None,
    dump: Annotated[Path | None, typer.Option(help="one JSON line per photo (diagnostics)")] = None,
    backend: Annotated[str, typer.Option(help="onnx or ultralytics")] = "onnx",
) -> None:
    os.environ.setdefault("YOLO_OFFLINE", "1")
    photos = [p for p in load_real_cards(folder) if not view or p.view in view][:limit]
    reader = CardReader(default_reader_config(backend))
    d = reader.config.detector
    print(
        f"# real card-labelled photos, {date.today()}, {os.cpu_count()}-core {platform.machine()}, "
        f"python {platform.python_version()}, {backend}; det_conf {d.det_conf}, conf {d.conf}, "
        f"joker_conf {d.joker_conf}; {len(photos)} photos from {folder}"
    )
    out: IO[str] | None = dump.open("w") if dump is not None else None

    def record(photo: CardPhoto, image: npt.NDArray[np.uint8], reading: Reading) -> None:
        if out is None:
            return
        boxes = reader.tiled.detect(image)
        named_here = proposals(boxes, d.det_conf)  # the boxes the classifier names
        named = []
        if reader.classifier is not None:
            every = reader.classifier.name_boxes(image, boxes, d.det_conf, 0.0, adjust=reader.adjust)
            named = [
                [every_name, round(float(p), 3)]
                for every_name, p in zip(every.names, every.confidence, strict=True)
            ]
        entry = {
            "image": photo.path.name,
            "view": photo.view,
            "labels": list(photo.cards),
            "read": [str(c.card) for c in reading.cards],
            "boxes": int((boxes.confidence >= d.det_conf).sum()),
            "proposals": len(named_here),
            "named": named,
        }
        out.write(json.dumps(entry) + "\n")

    start = time.perf_counter()
    try:
        report = evaluate_real_cards(reader, tqdm(photos, unit="photo", leave=False), record)
    finally:
        if out is not None:
            out.close()
    print(table(report))
    print(f"wall {time.perf_counter() - start:.0f} s (with the --dump diagnostics when given)")


if __name__ == "__main__":
    typer.run(main)
