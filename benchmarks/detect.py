"""Milliseconds per full-table frame of the card reader: PyTorch (ultralytics), ONNX Runtime and NCNN.

    .venv/bin/python benchmarks/detect.py [--image FRAME.jpg] [--runs 10] [--levels 1.0]

Without ``--image`` a whole-table scene is rendered with the synthetic renderer (seed 1). ``--levels``
gives the pyramid levels (resize factors) the pipeline uses; default: the automatic pyramid.
Prints one line per backend: the frame size, number of tiles, median and mean ms per frame (single
process, both cores), plus the bare network time per tile.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.capture import read_image  # noqa: E402
from vision.detectors.base import (  # noqa: E402
    WeightsNotFoundError,
    create_detector,
    default_classifier,
    default_weights,
)
from vision.reader import CardReader, default_reader_config  # noqa: E402

BACKENDS = ("onnx", "ncnn", "ultralytics")


def table_frame(seed: int = 1) -> np.ndarray:
    """A rendered whole-table frame (BGR)."""
    from models.synth.scene import render_scene

    return render_scene(seed).image


def bench(
    backend: str,
    image: np.ndarray,
    levels: tuple[float, ...] | None,
    runs: int,
    imgsz: int,
    weights_dir: Path | None,
) -> str:
    """One result line."""
    weights = default_weights(backend)
    if weights_dir is not None:
        weights = weights_dir / weights.name
    classifier = default_classifier() if weights_dir is None else weights_dir / "classifier.onnx"
    if classifier is not None and not classifier.is_file():
        classifier = None
    # the shipped thresholds: how many proposals reach the classifier depends on det_conf
    shipped = default_reader_config(backend, weights=weights, imgsz=imgsz, classifier=classifier)
    det_cfg = shipped.detector
    reader = CardReader(replace(shipped, tiling=replace(shipped.tiling, levels=levels)))
    reader.read(image)  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        reading = reader.read(image)
        times.append((time.perf_counter() - t0) * 1000)
    tile_img = np.ascontiguousarray(image[:imgsz, :imgsz])
    net = create_detector(det_cfg)
    net.detect(tile_img)
    t0 = time.perf_counter()
    for _ in range(runs):
        net.detect(tile_img)
    per_tile = (time.perf_counter() - t0) * 1000 / runs
    h, w = image.shape[:2]
    return (
        f"{backend:12s} frame {w}x{h} tiles {reader.tiled.last_tiles:3d} levels {levels or 'auto'}"
        ": "
        f"median {statistics.median(times):7.1f} ms, mean {statistics.mean(times):7.1f} ms per frame; "
        f"network {per_tile:5.1f} ms per {imgsz}px tile; {len(reading.cards)} cards; "
        f"classifier {'yes' if classifier else 'no'}"
    )


app = typer.Typer(add_completion=False)


@app.command(help=__doc__.split("\n")[0])
def main(
    frame: Annotated[
        Path | None, typer.Option("--image", help="a frame to read (default: a rendered table, seed 1)")
    ] = None,
    runs: Annotated[int, typer.Option(help="timed reads per backend")] = 10,
    imgsz: Annotated[int, typer.Option(help="tile size, pixels")] = 320,
    pyramid: Annotated[
        list[float] | None,
        typer.Option("--levels", help="a pyramid level, resize factor (repeat it; default: automatic)"),
    ] = None,
    backends: Annotated[
        list[str] | None,
        typer.Option(help=f"a backend to time (repeat it for several; default: {', '.join(BACKENDS)})"),
    ] = None,
    weights_dir: Annotated[Path | None, typer.Option(help="folder with best.onnx / best.pt")] = None,
) -> None:
    """Command line."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    image = read_image(frame) if frame else table_frame()
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, python {platform.python_version()}"
    )
    levels = tuple(pyramid) if pyramid else None
    for backend in backends or BACKENDS:
        try:
            print(bench(backend, image, levels, runs, imgsz, weights_dir))
        except (ImportError, WeightsNotFoundError) as exc:  # e.g. no ncnn package or export here
            print(f"{backend:12s} skipped: {exc}")


if __name__ == "__main__":
    app()
