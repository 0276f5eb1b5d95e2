"""``tractorcam calibrate``: a table's geometry from printed corner markers (:mod:`calibration.markers`).

``tractorcam calibrate sheet --out FILE [--marker-mm M]`` writes the markers to print;
``tractorcam calibrate --image FRAME --out table.json [--table-size WxH] [--marker-mm M]
[--overlay PNG] [--lens lens.json]`` finds them in a camera frame and writes ``table.json``
(``../shared/spec/cli.md``, *Table set-up commands*). ``tractorcam calibrate lens sheet --out FILE``
writes a ChArUco board to print; ``tractorcam calibrate lens --images P1 --images P2 ... --out
lens.json`` (or ``--source SRC [--frames N]``) fits the lens's distortion from photos of it
(:mod:`calibration.lens`), which ``calibrate --lens`` then uses instead of fitting ``k1`` from the
markers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    import numpy as np

    from calibration.table import LensDistortion

calibrate_app = typer.Typer(
    help="The table's geometry from printed corner markers (calibrate sheet; calibrate --image); "
    "the lens from a ChArUco board (calibrate lens).",
    invoke_without_command=True,
)


lens_app = typer.Typer(
    help="The lens's distortion from photos of a printed ChArUco board (calibrate lens sheet; "
    "calibrate lens --images).",
    invoke_without_command=True,
)
calibrate_app.add_typer(lens_app, name="lens")


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
    lens_json: Annotated[
        Path | None,
        typer.Option(
            "--lens", help="the lens from `calibrate lens` (lens.json), instead of k1 from the markers"
        ),
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
    lens = _read_lens(lens_json) if lens_json is not None else None
    if image is not None:
        frame = cv2.imread(str(image))
        if frame is None:
            raise fail(f"cannot read image {image}")
    else:
        frame = _sharpest(source or "", frames)
    try:
        cal = run_calibration(
            np.asarray(frame, np.uint8), width, height, marker_mm, lens=True if lens is None else lens
        )
    except MarkersMissingError as exc:
        raise fail(str(exc)) from None
    except ValueError as exc:  # a lens measured on frames of another shape
        if lens_json is None:
            raise
        raise fail(f"--lens {lens_json}: {exc}") from None
    cal.geometry.save(out)
    if overlay_png is not None:
        picture = np.asarray(frame, np.uint8)
        cv2.imwrite(str(overlay_png), overlay(picture, cal, detect_markers(picture)))
    typer.echo(
        f"{out}: markers {', '.join(str(i) for i in cal.markers)} found; reprojection error "
        f"{cal.reprojection_px:.2f} px; a card is {cal.card_px[0]:.0f} × {cal.card_px[1]:.0f} px at the centre; "
        + _lens_said(cal.geometry.distortion, lens_json)
    )


def _lens_said(distortion: LensDistortion | None, lens_json: Path | None) -> str:
    """What the calibration's lens is and where it came from, for the command's line."""
    if lens_json is not None:
        assert distortion is not None
        return f"lens k1 {distortion.k1:+.3f}, k2 {distortion.k2:+.3f} from {lens_json}"
    if distortion is None:
        return "no lens distortion found (a pinhole camera)"
    return f"lens k1 {distortion.k1:+.3f} fitted from the markers"


def _read_lens(path: Path) -> LensDistortion:
    """``lens.json`` (:func:`calibration.lens.load_lens`); exit 2 with one line when it is not one."""
    from calibration.lens import load_lens

    try:
        return load_lens(path)
    except OSError as exc:
        raise fail(f"cannot read --lens {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise fail(f"--lens {path} is not a lens.json: {str(exc).splitlines()[0]}") from None


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


@lens_app.callback()
def lens_cmd(
    ctx: typer.Context,
    images: Annotated[
        list[Path] | None,
        typer.Option("--images", help="a photo of the board (give it once per photo; 5-10 photos)"),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option("--source", help="or a film / folder (as for run): its first --frames frames"),
    ] = None,
    frames: Annotated[int, typer.Option("--frames", help="with --source: how many frames to use")] = 10,
    out: Annotated[Path | None, typer.Option("--out", help="where to write lens.json")] = None,
) -> None:
    """Fit the lens's distortion from photos of the board and write ``lens.json``."""
    if ctx.invoked_subcommand is not None:
        return
    import cv2
    import numpy as np

    from calibration.lens import MIN_CORNERS, fit_lens_from_boards, save_lens

    if (not images) == (source is None) or out is None:
        raise fail(
            "give --images P1 --images P2 ... or --source SRC, and --out lens.json "
            "(or: tractorcam calibrate lens sheet --out FILE)"
        )
    names: list[str] = []
    pictures: list[np.ndarray] = []
    if images:
        for path in images:
            picture = cv2.imread(str(path))
            if picture is None:
                raise fail(f"cannot read image {path}")
            pictures.append(np.asarray(picture, np.uint8))
            names.append(str(path))
    else:
        pictures = _first_frames(source or "", frames)
        names = [f"frame {i}" for i in range(len(pictures))]
    try:
        fit = fit_lens_from_boards(pictures)
    except ValueError as exc:  # BoardNotFoundError, or photos of different sizes
        raise fail(str(exc)) from None
    save_lens(fit.lens, out)
    used = sum(c >= MIN_CORNERS for c in fit.corners)
    typer.echo(
        f"{out}: lens k1 {fit.lens.k1:+.4f}, k2 {fit.lens.k2:+.4f} from {used} of {len(pictures)} photos "
        f"({sum(c for c in fit.corners if c >= MIN_CORNERS)} corners); corner residual "
        f"{fit.rms_before_px:.2f} px as a pinhole camera, {fit.rms_after_px:.2f} px through the lens"
    )
    left_out = [f"{n} ({c} corners)" for n, c in zip(names, fit.corners, strict=True) if c < MIN_CORNERS]
    if left_out:
        typer.echo(f"left out, fewer than {MIN_CORNERS} corners: {', '.join(left_out)}", err=True)
    if fit.reach < 0.6:
        typer.echo(
            f"the corners reach {fit.reach:.0%} of the way to the frame's corners: the lens is "
            "extrapolated beyond; add photos with the board near the frame's edges and corners",
            err=True,
        )


def _first_frames(source: str, n: int) -> list[np.ndarray]:
    """The first ``n`` frames of ``source`` (:func:`vision.capture.open_source`)."""
    from vision.capture import CameraUnavailableError, SourceNotFoundError, open_source

    try:
        src = open_source(source)
    except (SourceNotFoundError, CameraUnavailableError) as exc:
        raise fail(str(exc)) from None
    try:
        pictures = []
        for frame in src:
            pictures.append(frame.image)
            if len(pictures) >= max(1, n):
                break
    finally:
        src.close()
    if not pictures:
        raise fail(f"{source} gave no frame")
    return pictures


@lens_app.command("sheet")
def lens_sheet_cmd(
    out: Annotated[Path, typer.Option("--out", help="the page to print (PNG, 300 dpi, A4 landscape)")],
) -> None:
    """Write the ChArUco board at true size to print."""
    import cv2

    from calibration.lens import board_sheet

    if not cv2.imwrite(str(out), board_sheet()):
        raise fail(f"cannot write {out} (give a .png name)")
    typer.echo(f"{out}: print on A4 landscape at 100 % (300 dpi) and keep it flat")
