"""Benchmark of the synthetic renderer: dataset images per second and seconds per rendered deal.

    .venv/bin/python benchmarks/synth.py               # 40 dataset images + one deal at 1920x1440
    .venv/bin/python benchmarks/synth.py --images 100 --deal-width 1280 --deal-height 960

Prints one line per figure. Faces are loaded (and cached) before timing starts.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

# run as a script, this folder comes first on sys.path and its engine.py would shadow the package
_here = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
sys.path.insert(0, str(_here.parent))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--images", type=int, default=40, help="dataset images to render (single process)")
    p.add_argument("--imgsz", type=int, default=640)
    p.add_argument("--deal-seed", type=int, default=1)
    p.add_argument("--deal-width", type=int, default=1920)
    p.add_argument("--deal-height", type=int, default=1440)
    p.add_argument("--fps", type=int, default=10)
    p.add_argument("--no-deal", action="store_true")
    a = p.parse_args()

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
    for i in range(a.images):
        sc = render_example(image_seed(0, "train", i), a.imgsz, names)
        modes[sc.meta["mode"]] += 1
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"dataset images {a.imgsz}px: {a.images / dt:.2f} images/s wall, {a.images / cpu:.2f} images per CPU-second"
        f" ({cpu / a.images * 1000:.0f} ms CPU each; modes {dict(modes)})"
    )
    if a.no_deal:
        return
    from models.synth.deal import render_deal

    with tempfile.TemporaryDirectory() as tmp:
        res = render_deal(a.deal_seed, Path(tmp), fps=a.fps, width=a.deal_width, height=a.deal_height)
    print(
        f"deal national-2deck seed {a.deal_seed} at {a.deal_width}x{a.deal_height} {a.fps} fps: "
        f"{res.seconds:.1f} s per rendered deal ({res.tricks} tricks, {res.frames} frames,"
        f" {res.frames / a.fps:.0f} s of video)"
    )


if __name__ == "__main__":
    main()
