"""The lens from photos of a printed ChArUco board: photos rendered through a known lens, the sheet,
``lens.json``, the commands, and ``calibrate --lens``.

The photos here are plain (:func:`models.synth.board_frames.board_photo` without a look: the board's
page warped into the frame through a known homography, then through the lens by ``cv2.remap``), so
the lens is the only thing between the truth and the fit.

Tolerance on ``k1``: 0.005. A ``k1`` off by that moves a corner 70 % of the way to the frame's
corner by 0.005 × 0.7³ × ``norm`` = 1.4 px at 1280 × 960 (before the homography takes up part of
it), many times the 0.06–0.2 px the corners are found to, so three photos of 24 corners pin it
tighter: on these photos the fit is off by 0.0015 at most, and on the renderer's (light, blur, noise,
JPEG; five photos) by 0.0014 at most over 50 lenses (``benchmarks/lens.py``). The markers' own fit
is off by up to 0.03 on those frames; 0.005 still tells a right lens from that.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from calibration.lens import (
    BoardNotFoundError,
    board_sheet,
    detect_board,
    fit_lens_from_boards,
    lens_for,
    load_lens,
    save_lens,
)
from calibration.markers import detect_markers, sheet
from calibration.table import LensDistortion, TableGeometry
from models.synth.board_frames import board_photo, board_views
from tractorcam_cli.main import app

runner = CliRunner()
W, H = 1280, 960
K1_TOLERANCE = 0.005


def photos(k1: float, n: int = 3, seed: int = 0, size: tuple[int, int] = (W, H)) -> list[np.ndarray]:
    """``n`` plain photos of the board through a lens ``k1``, the board moved round the frame."""
    views = board_views(np.random.default_rng(seed), n, *size)
    return [board_photo(v, *size, k1) for v in views]


@pytest.mark.parametrize("k1", [-0.08, 0.0, 0.08], ids=["barrel", "none", "pincushion"])
def test_the_lens_is_found_from_photos_of_the_board(k1: float) -> None:
    fit = fit_lens_from_boards(photos(k1))
    assert fit.corners == (24, 24, 24)
    assert fit.lens.k1 == pytest.approx(k1, abs=K1_TOLERANCE)
    assert (fit.lens.cx, fit.lens.cy, fit.lens.norm) == (W / 2, H / 2, 800.0)  # as markers.fit_lens
    assert fit.rms_after_px < 0.5
    if k1 == 0.0:
        assert fit.rms_after_px <= fit.rms_before_px + 1e-9
    else:  # a pinhole camera leaves the bend in the corners; the lens takes it out
        assert fit.rms_before_px > 3 * fit.rms_after_px
    assert 0.5 < fit.reach < 1.0


def test_a_photo_without_the_board_is_refused_saying_how_many_corners_it_has() -> None:
    blank = np.full((H, W, 3), 128, np.uint8)
    with pytest.raises(
        BoardNotFoundError, match=r"^found 0 of the board's 24 corners in the photo, need 12$"
    ):
        fit_lens_from_boards([blank])
    one = photos(-0.05, n=1)[0]
    xs = np.sort(detect_board(one)[0][:, 0])
    half = one.copy()
    half[:, : int(xs[-12]) - 5] = 128  # the board covered but for its 12 corners farthest right
    found = len(detect_board(half)[0])
    assert 0 < found < 12
    with pytest.raises(BoardNotFoundError, match=rf"found {found} of the board's 24 corners in any of the 2"):
        fit_lens_from_boards([half, blank])
    fit = fit_lens_from_boards([one, blank])  # a photo without enough is left out
    assert fit.corners == (24, 0)
    with pytest.raises(ValueError, match="not all the same size"):
        fit_lens_from_boards([one, one[:480]])


def test_the_sheet_prints_the_board_at_true_size_apart_from_the_table_markers() -> None:
    page = board_sheet(dpi=300)
    assert page.shape == (2480, 3507)  # A4 landscape at 300 dpi
    px, mm = detect_board(page)
    assert len(px) == 24
    scale = np.linalg.norm(px[1] - px[0]) / np.linalg.norm(mm[1] - mm[0])
    assert scale == pytest.approx(300 / 25.4, rel=0.002)
    assert detect_markers(page) == {}  # the board's markers are not the table's
    assert len(detect_board(sheet())[0]) == 0  # nor the table's the board's


def test_lens_json_round_trips_and_fits_a_frame_of_another_size(tmp_path: Path) -> None:
    lens = LensDistortion(k1=-0.061, k2=0.004, cx=960, cy=720, norm=1200.0)
    save_lens(lens, tmp_path / "lens.json")
    assert load_lens(tmp_path / "lens.json") == lens
    assert set(json.loads((tmp_path / "lens.json").read_text())) == {"k1", "k2", "cx", "cy", "norm"}
    small = lens_for(lens, 640, 480)
    # the same point of the picture moves by the same share of the frame
    p = np.array([[1800.0, 100.0]])
    assert small.undistort(p / 3) * 3 == pytest.approx(lens.undistort(p))
    with pytest.raises(ValueError, match="another shape"):
        lens_for(lens, 1920, 1080)


def test_the_lens_commands_write_the_sheet_and_lens_json(tmp_path: Path) -> None:
    r = runner.invoke(app, ["calibrate", "lens", "sheet", "--out", str(tmp_path / "board.png")])
    assert r.exit_code == 0, r.output
    page = cv2.imread(str(tmp_path / "board.png"), cv2.IMREAD_GRAYSCALE)
    assert page is not None and page.shape == (2480, 3507)
    args = []
    for i, photo in enumerate(photos(0.06, seed=1)):
        cv2.imwrite(str(tmp_path / f"p{i}.png"), photo)
        args += ["--images", str(tmp_path / f"p{i}.png")]
    cv2.imwrite(str(tmp_path / "blank.png"), np.full((H, W, 3), 128, np.uint8))
    out = tmp_path / "lens.json"
    r = runner.invoke(
        app, ["calibrate", "lens", *args, "--images", str(tmp_path / "blank.png"), "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert "from 3 of 4 photos (72 corners)" in r.stdout and "through the lens" in r.stdout
    assert f"left out, fewer than 12 corners: {tmp_path / 'blank.png'} (0 corners)" in r.stderr
    assert load_lens(out).k1 == pytest.approx(0.06, abs=K1_TOLERANCE)


def test_the_lens_command_reads_a_source_and_refuses_with_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "film"
    folder.mkdir()
    for i, photo in enumerate(photos(-0.04, seed=3)):
        cv2.imwrite(str(folder / f"{i:03d}.png"), photo)
    out = tmp_path / "lens.json"
    r = runner.invoke(app, ["calibrate", "lens", "--source", str(folder), "--frames", "2", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "from 2 of 2 photos" in r.stdout
    assert load_lens(out).k1 == pytest.approx(-0.04, abs=K1_TOLERANCE)

    cv2.imwrite(str(tmp_path / "blank.png"), np.full((H, W, 3), 128, np.uint8))
    r = runner.invoke(
        app, ["calibrate", "lens", "--images", str(tmp_path / "blank.png"), "--out", str(tmp_path / "x.json")]
    )
    assert r.exit_code == 2 and not (tmp_path / "x.json").exists()
    assert r.stderr.strip() == "error: found 0 of the board's 24 corners in the photo, need 12"
    r = runner.invoke(app, ["calibrate", "lens", "--out", str(out)])
    assert r.exit_code == 2 and "give --images" in r.stderr and r.stderr.count("\n") == 1


def test_calibrate_refuses_a_lens_json_it_cannot_use_with_one_line(tmp_path: Path) -> None:
    from tests.calibration.test_markers import table_frame

    frame, _ = table_frame()  # 1280 × 960
    cv2.imwrite(str(tmp_path / "frame.png"), frame)
    bad = tmp_path / "bad.json"
    bad.write_text('{"k1": "barrel"}')
    wide = tmp_path / "wide.json"
    save_lens(LensDistortion(k1=-0.05, k2=0.0, cx=960, cy=540, norm=1101.0), wide)
    base = ["calibrate", "--image", str(tmp_path / "frame.png"), "--out", str(tmp_path / "t.json")]
    for lens, said in [
        (bad, f"error: --lens {bad} is not a lens.json: "),
        (wide, f"error: --lens {wide}: the lens was measured on 1920x1080 frames, this frame is 1280x960"),
        (tmp_path / "none.json", f"error: cannot read --lens {tmp_path / 'none.json'}: "),
    ]:
        r = runner.invoke(app, [*base, "--lens", str(lens)])
        assert r.exit_code == 2 and r.stderr.startswith(said) and r.stderr.count("\n") == 1, r.stderr
    assert not (tmp_path / "t.json").exists()
    lens = tmp_path / "lens.json"
    save_lens(LensDistortion(k1=0.0, k2=0.0, cx=640, cy=480, norm=800.0), lens)
    r = runner.invoke(app, [*base, "--lens", str(lens)])
    assert r.exit_code == 0, r.output
    assert f"lens k1 +0.000, k2 +0.000 from {lens}" in r.stdout


def _rms_mm(geometry: TableGeometry, truth: TableGeometry) -> float:
    """RMS error (mm) of ``geometry`` at points every 25 mm over the table seen, against the truth."""
    xs = np.arange(0.0, truth.table_width_mm + 0.01, 25.0)
    ys = np.arange(0.0, truth.table_height_mm + 0.01, 25.0)
    grid = np.array([(x, y) for x in xs for y in ys])
    px = truth.table_to_pixel(grid)
    seen = (
        (px[:, 0] >= 0) & (px[:, 0] < truth.image_width) & (px[:, 1] >= 0) & (px[:, 1] < truth.image_height)
    )
    err = geometry.pixel_to_table(px[seen]) - grid[seen]
    return float(np.sqrt(np.mean(np.sum(err**2, axis=1))))


@pytest.mark.slow
def test_calibrate_with_the_boards_lens_beats_the_markers_own_fit(tmp_path: Path) -> None:
    """One of ``benchmarks/calibration.py``'s frames (seed 35: four markers seen, k1 = -0.027) whose
    markers misjudge the lens (the table off by 2.7 mm RMS): the lens from photos of the board through
    the same lens (``calibrate lens``), given to ``calibrate --lens``, puts the table right to under
    1 mm (0.7 mm with the renderer's own lens: the rest is the markers' corners)."""
    from models.synth.setup_frames import marker_frame

    frame = marker_frame(35, width=1920, height=1440)
    truth = frame.truth
    assert truth.distortion is not None
    args = []
    for i, photo in enumerate(photos(truth.distortion.k1, n=4, seed=2, size=(1920, 1440))):
        cv2.imwrite(str(tmp_path / f"p{i}.png"), photo)
        args += ["--images", str(tmp_path / f"p{i}.png")]
    lens = tmp_path / "lens.json"
    r = runner.invoke(app, ["calibrate", "lens", *args, "--out", str(lens)])
    assert r.exit_code == 0, r.output
    cv2.imwrite(str(tmp_path / "frame.png"), frame.image)
    size = f"{truth.table_width_mm:g}x{truth.table_height_mm:g}"
    errors = {}
    for name, extra in (("markers", []), ("board", ["--lens", str(lens)])):
        out = tmp_path / f"{name}.json"
        cmd = ["calibrate", "--image", str(tmp_path / "frame.png"), "--out", str(out), "--table-size", size]
        r = runner.invoke(app, [*cmd, *extra])
        assert r.exit_code == 0, r.output
        errors[name] = _rms_mm(TableGeometry.load(out), truth)
    assert errors["board"] < 1.0 and errors["markers"] > 2.0
