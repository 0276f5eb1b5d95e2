"""``tractorcam calibrate``: a table's geometry from printed corner markers (:mod:`calibration.markers`).

``tractorcam calibrate sheet --out FILE [--marker-mm M]`` writes the markers to print;
``tractorcam calibrate --image FRAME --out table.json [--table-size WxH] [--marker-mm M]
[--overlay PNG]`` finds them in a camera frame and writes ``table.json``
(``../shared/spec/cli.md``, *Table set-up commands*).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    import numpy as np

calibrate_app = typer.Typer(
    help="The table's geometry from printed corner markers (calibrate sheet; calibrate --image).",
    invoke_without_command=True,
)


def register(app: typer.Typer) -> None:
    """Add ``calibrate`` to ``app``."""
    app.add_typer(calibrate_app, name="calibrate")


def fail(message: str) -> typer.Exit:
    """Print ``error: MESSAGE`` on standard error; the exit to raise (2)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def table_size_mm(text: str) -> tuple[float, float]:
    """``--table-size``'s W and H in mm; exit 2 with one line when it is not WxH."""
    from calibration.markers import parse_table_size

    try:
        return parse_table_size(text, "--table-size")
    except ValueError as exc:
        raise fail(str(exc)) from None


@calibrate_app.callback()
def calibrate(
    ctx: typer.Context,
    image: Annotated[Path | None, typer.Option("--image", help="a camera frame showing the markers")] = None,
    source: Annotated[
        str | None,
        typer.Option("--source", help="or a camera / film (as for run): the sharpest of its first frames"),
    ] = None,
    frames: Annotated[
        int, typer.Option("--frames", help="with --source: how many frames to choose from")
    ] = 10,
    out: Annotated[Path | None, typer.Option("--out", help="where to write table.json")] = None,
    table_size: Annotated[str, typer.Option("--table-size", help="table W x H in mm")] = "900x900",
    marker_mm: Annotated[float, typer.Option("--marker-mm", help="the printed markers' side, mm")] = 60.0,
    overlay_png: Annotated[
        Path | None,
        typer.Option("--overlay", help="write the frame with markers, zones and a 100 mm grid drawn in"),
    ] = None,
) -> None:
    """Find the corner markers in a frame and write the table's calibration."""
    if ctx.invoked_subcommand is not None:
        return
    import cv2
    import numpy as np

    from calibration.markers import MarkersMissingError, detect_markers, overlay
    from calibration.markers import calibrate as run_calibration

    if (image is None) == (source is None) or out is None:
        raise fail(
            "give --image FRAME or --source SRC, and --out table.json (or: tractorcam calibrate sheet --out FILE)"
        )
    width, height = table_size_mm(table_size)
    if not 10 <= marker_mm <= 300:
        raise fail(f"--marker-mm {marker_mm:g}: between 10 and 300")
    if image is not None:
        frame = cv2.imread(str(image))
        if frame is None:
            raise fail(f"cannot read image {image}")
    else:
        frame = _sharpest(source or "", frames)
    try:
        cal = run_calibration(np.asarray(frame, np.uint8), width, height, marker_mm)
    except MarkersMissingError as exc:
        raise fail(str(exc)) from None
    cal.geometry.save(out)
    if overlay_png is not None:
        picture = np.asarray(frame, np.uint8)
        cv2.imwrite(str(overlay_png), overlay(picture, cal, detect_markers(picture)))
    typer.echo(
        f"{out}: markers {', '.join(str(i) for i in cal.markers)} found; reprojection error "
        f"{cal.reprojection_px:.2f} px; a card is {cal.card_px[0]:.0f} × {cal.card_px[1]:.0f} px at the centre"
    )


def _sharpest(source: str, n: int) -> np.ndarray:
    """The sharpest of the first ``n`` frames of ``source`` (:func:`calibration.markers.sharpest`)."""
    from vision.capture import CameraUnavailableError, SourceNotFoundError, sharpest_frame

    try:
        best = sharpest_frame(source, n)
    except (SourceNotFoundError, CameraUnavailableError) as exc:
        raise fail(str(exc)) from None
    if best is None:
        raise fail(f"{source} gave no frame")
    return best


@calibrate_app.command("sheet")
def sheet_cmd(
    out: Annotated[Path, typer.Option("--out", help="the page to print (PNG, 300 dpi, A4)")],
    marker_mm: Annotated[float, typer.Option("--marker-mm", help="the markers' side, mm")] = 60.0,
) -> None:
    """Write the four corner markers at true size to print, with where each goes."""
    import cv2

    from calibration.markers import sheet

    if not 10 <= marker_mm <= 80:
        raise fail(f"--marker-mm {marker_mm:g}: between 10 and 80 to fit two across an A4 page")
    if not cv2.imwrite(str(out), sheet(marker_mm)):
        raise fail(f"cannot write {out} (give a .png name)")
    typer.echo(f"{out}: print on A4 at 100 % (300 dpi); the 100 mm ruler checks the scale")
