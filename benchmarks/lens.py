"""The lens from a ChArUco board (``tractorcam calibrate lens``) against the corner markers' own k1
fit, on rendered frames whose geometry is known.

    .venv/bin/python benchmarks/lens.py [--frames 20] [--seed 0] [--photos 5]

Each frame is one of ``benchmarks/calibration.py``'s (``marker_frame``: a 1920×1440 camera turned
2–10° from straight down, k1 uniform in ±0.08, the renderer's light, blur, noise and JPEG, one
marker in three partly covered). For each, ``--photos`` photos of the board through the same lens
(``models.synth.board_frames.board_photos``: the page spanning 45–70 % of the frame's width, moved
towards each corner of the frame, with the renderer's look) give the lens; the table is then
calibrated three ways, and compared with the renderer's truth at points every 25 mm:

* the markers with their own k1 fit (``calibrate``, what ships);
* the markers with the board's lens (``calibrate --lens``);
* a pinhole homography through the markers.
"""

from __future__ import annotations

import platform
import sys
import time
from datetime import date
from pathlib import Path
from typing import Annotated

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np  # noqa: E402
import typer  # noqa: E402
from tqdm import tqdm  # noqa: E402

from calibration.lens import fit_lens_from_boards  # noqa: E402
from calibration.markers import MarkersMissingError, calibrate  # noqa: E402
from models.synth.board_frames import board_photos  # noqa: E402
from models.synth.setup_frames import marker_frame  # noqa: E402

MARKER_MM = 60.0
WIDTH, HEIGHT = 1920, 1440


def main(
    frames: Annotated[int, typer.Option(help="rendered frames")] = 20,
    seed: Annotated[int, typer.Option(help="first frame's seed")] = 0,
    photos: Annotated[int, typer.Option(help="board photos per lens")] = 5,
) -> None:
    print(f"lens benchmark, {date.today()}, {platform.machine()}, {WIDTH}×{HEIGHT}, {frames} frames")
    k1_err: dict[str, list[float]] = {"board": [], "markers": []}
    rms: dict[str, list[float]] = {"markers": [], "board": [], "pinhole": []}
    fit_before, fit_after, fit_s, reach = [], [], [], []
    for s in tqdm(range(seed, seed + frames), desc="frames", unit="frame"):
        f = marker_frame(s, width=WIDTH, height=HEIGHT, marker_mm=MARKER_MM)
        k1 = f.truth.distortion.k1 if f.truth.distortion is not None else 0.0
        pictures = board_photos(10_000 + s, k1, photos, width=WIDTH, height=HEIGHT)
        t0 = time.perf_counter()
        fit = fit_lens_from_boards(pictures)
        fit_s.append(time.perf_counter() - t0)
        fit_before.append(fit.rms_before_px)
        fit_after.append(fit.rms_after_px)
        reach.append(fit.reach)
        k1_err["board"].append(fit.lens.k1 - k1)
        w_mm, h_mm = f.truth.table_width_mm, f.truth.table_height_mm
        grid = np.array(
            [(x, y) for x in np.arange(0.0, w_mm + 0.01, 25.0) for y in np.arange(0.0, h_mm + 0.01, 25.0)]
        )
        px = f.truth.table_to_pixel(grid)
        inside = (px[:, 0] >= 0) & (px[:, 0] < WIDTH) & (px[:, 1] >= 0) & (px[:, 1] < HEIGHT)
        for kind, lens in (("markers", True), ("board", fit.lens), ("pinhole", False)):
            try:
                cal = calibrate(f.image, w_mm, h_mm, MARKER_MM, lens=lens)
            except MarkersMissingError:
                rms[kind].append(float("nan"))
                continue
            err = np.linalg.norm(cal.geometry.pixel_to_table(px[inside]) - grid[inside], axis=1)
            rms[kind].append(float(np.sqrt(np.mean(err**2))))
            if kind == "markers":
                d = cal.geometry.distortion
                k1_err["markers"].append((d.k1 if d is not None else 0.0) - k1)
    for kind, e in k1_err.items():
        a = np.abs(e)
        print(f"k1 error, {kind:8s}: median {np.median(a):.4f}, mean {a.mean():.4f}, worst {a.max():.4f}")
    for kind, r in rms.items():
        v = np.array(r)
        print(
            f"table RMS mm, {kind:8s}: median {np.nanmedian(v):.2f}, mean {np.nanmean(v):.2f}, "
            f"worst {np.nanmax(v):.2f}; frames ≤ 2 mm {int((v <= 2).sum())}/{len(v)}"
        )
    print(
        f"board fit: corner residual RMS px median {np.median(fit_before):.2f} (pinhole) → "
        f"{np.median(fit_after):.2f} (lens); reach median {np.median(reach):.2f}; "
        f"fit (detection included) {np.median(fit_s):.2f} s per lens of {photos} photos (median)"
    )


if __name__ == "__main__":
    typer.run(main)
