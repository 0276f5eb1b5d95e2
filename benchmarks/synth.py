"""Benchmark of the synthetic renderer: dataset images per second and seconds per rendered deal.

    .venv/bin/python benchmarks/synth.py               # 40 dataset images + one deal at 1920x1440
    .venv/bin/python benchmarks/synth.py --images 100 --deal-width 1280 --deal-height 960

Prints one line per figure. Faces are loaded (and cached) before timing starts.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

# run as a script, this folder comes first on sys.path and its engine.py would shadow the package
_here = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
sys.path.insert(0, str(_here.parent))


app = typer.Typer(add_completion=False)


@app.command(help=__doc__)
def main(
    images: Annotated[int, typer.Option(help="dataset images to render (single process)")] = 40,
    imgsz: Annotated[int, typer.Option(help="dataset image size, pixels")] = 640,
    deal_seed: Annotated[int, typer.Option(help="seed of the rendered deal")] = 1,
    deal_width: Annotated[int, typer.Option(help="the deal film's width, pixels")] = 1920,
    deal_height: Annotated[int, typer.Option(help="the deal film's height, pixels")] = 1440,
    fps: Annotated[int, typer.Option(help="the deal film's frames per second")] = 10,
    no_deal: Annotated[bool, typer.Option("--no-deal", help="dataset images only, no deal rendered")] = False,
) -> None:
    from models.synth.dataset import image_seed, render_example
    from models.synth.designs import HELDOUT, TRAIN
    from models.synth.faces import load_faces
    from models.synth.scene import available_designs

    names = tuple(available_designs(TRAIN))
    t0 = time.perf_counter()
    for n in set(names) | set(available_designs(HELDOUT)):
        load_faces(n)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores, load {load:.1f},"
        f" python {platform.python_version()}"
    )
    print(f"designs: {len(names)} train available; faces loaded in {time.perf_counter() - t0:.1f} s")
    modes: Counter[str] = Counter()
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(images):
        sc = render_example(image_seed(0, "train", i), imgsz, names)
        modes[sc.meta["mode"]] += 1
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"dataset images {imgsz}px: {images / dt:.2f} images/s wall, {images / cpu:.2f} images per CPU-second"
        f" ({cpu / images * 1000:.0f} ms CPU each; modes {dict(modes)})"
    )
    if no_deal:
        return
    from models.synth.deal import render_deal

    with tempfile.TemporaryDirectory() as tmp:
        res = render_deal(deal_seed, Path(tmp), fps=fps, width=deal_width, height=deal_height)
    print(
        f"deal national-2deck seed {deal_seed} at {deal_width}x{deal_height} {fps} fps: "
        f"{res.seconds:.1f} s per rendered deal ({res.tricks} tricks, {res.frames} frames,"
        f" {res.frames / fps:.0f} s of video)"
    )


if __name__ == "__main__":
    app()
