"""Gomoku games filmed as a camera over the board sees them (``tractorcam synth game --game gomoku``):
a board of one of several looks (wood, plastic, paper; stones glossy, matte or shell), the corner
markers round it, the camera tilted, the light varied, and each stone brought in by the player's
hand, laid, and the hand drawn back. The truth is the game's log (:func:`gomoku.sim.simulate_game`)
with the grid's place on the table.

**Looks.** :data:`LOOKS` names each board and stone style; :data:`DEV_LOOKS` are the ones the
reader's thresholds were set on, :data:`HELDOUT_LOOKS` the others, which the benchmark reads
(``benchmarks/gomoku.py``). Films draw held-out looks unless told otherwise.

**Timing.** A frame at time t shows every stone laid by t; the hand holds the stone's point from
0.5 s before it is laid and draws back over the next 0.4 s (the stone shows once the fingers
lift), so a reader that times a move by the first frame showing the stone is late by at most
about a frame.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import cv2
import numpy as np

from gomoku.board import SIZE, parse_point
from gomoku.sim import simulate_game
from models.synth.deal import video_look
from models.synth.hands import Arm, random_arm
from models.synth.layout import Table
from models.synth.markers import draw_table_markers
from models.synth.scene import Renderer, camera_homography
from models.synth.textures import smooth_noise


@dataclass(frozen=True)
class GomokuLook:
    """A board and its stones: colours BGR 0–255, the lines' width in mm, the stones' gloss (0–1)
    and whether the white stones have a shell's darker rim."""

    board: tuple[int, int, int]
    grain: float  # wood grain strength (0: plastic or paper)
    line: tuple[int, int, int]
    line_mm: float
    black: tuple[int, int, int]
    white: tuple[int, int, int]
    gloss: float
    shell: bool


LOOKS: Final[dict[str, GomokuLook]] = {
    "kaya": GomokuLook((110, 185, 225), 0.10, (30, 30, 35), 0.8, (28, 28, 30), (228, 232, 232), 0.6, False),
    "dark-wood": GomokuLook(
        (60, 105, 150), 0.14, (20, 20, 25), 1.0, (22, 22, 24), (222, 228, 230), 0.4, True
    ),
    "green-plastic": GomokuLook(
        (95, 150, 95), 0.0, (25, 40, 25), 0.9, (30, 30, 30), (236, 238, 236), 0.2, False
    ),
    "paper": GomokuLook((215, 225, 228), 0.0, (70, 70, 70), 0.6, (35, 35, 38), (246, 246, 244), 0.0, False),
    "bamboo": GomokuLook((120, 190, 210), 0.07, (40, 40, 45), 0.7, (26, 26, 28), (232, 236, 236), 0.8, True),
    "slate-shell": GomokuLook(
        (95, 160, 205), 0.12, (25, 25, 30), 0.9, (45, 45, 50), (215, 222, 225), 0.1, True
    ),
}
#: The looks the reader's thresholds were set on; the benchmark reads the others.
DEV_LOOKS: Final = ("kaya", "green-plastic")
HELDOUT_LOOKS: Final = tuple(name for name in LOOKS if name not in DEV_LOOKS)

#: Seconds: the hand holds the point before the stone is laid, then draws back over this long.
HOLD_S: Final = 0.5
BACK_S: Final = 0.4
#: The corner markers' side and the table's margin round the board (mm).
MARKER_MM: Final = 40.0
MARGIN_MM: Final = 70.0


@dataclass(frozen=True)
class BoardPlace:
    """Where the grid lies on the table (mm): the a1 intersection and the pitch between lines."""

    a1: tuple[float, float]
    pitch: float

    def point_mm(self, name: str) -> tuple[float, float]:
        p = parse_point(name)
        return (self.a1[0] + p.col * self.pitch, self.a1[1] - p.row * self.pitch)


def _board_texture(look: GomokuLook, rng: np.random.Generator, side_mm: float, k: float) -> np.ndarray:
    """The board without its lines, ``side_mm`` square at ``k`` px/mm (float32 BGR)."""
    px = int(round(side_mm * k))
    low = smooth_noise(rng, px, px, 5)
    img = np.empty((px, px, 3), np.float32)
    img[:] = np.array(look.board, np.float32) * np.float32(rng.uniform(0.93, 1.05))
    shade = 1 + 0.04 * low
    if look.grain > 0:
        y = np.arange(px, dtype=np.float32)[:, None] / k
        warp = smooth_noise(rng, px, px, 4) * np.float32(rng.uniform(4, 10))
        rings = np.sin(2 * np.pi * (y + warp) / np.float32(rng.uniform(3.0, 7.0)))
        shade = shade + np.float32(look.grain) * rings * np.float32(0.5)
    return np.asarray(img * shade[..., None], np.float32)


def _draw_lines(
    img: np.ndarray, look: GomokuLook, place: BoardPlace, origin: tuple[float, float], k: float
) -> None:
    """The grid's 15 lines each way and its five star points, at ``k`` px/mm from ``origin`` (mm)."""
    ox, oy = origin
    span = (SIZE - 1) * place.pitch
    x0, y1 = place.a1
    thick = max(1, int(round(look.line_mm * k)))
    colour = tuple(float(c) for c in look.line)
    s = 16  # cv2's fixed-point shift: sub-pixel lines
    for i in range(SIZE):
        x = (x0 + i * place.pitch - ox) * k
        y = (y1 - i * place.pitch - oy) * k
        a = (int(round(x * s)), int(round((y1 - span - oy) * k * s)))
        b = (int(round(x * s)), int(round((y1 - oy) * k * s)))
        cv2.line(img, a, b, colour, thick, cv2.LINE_AA, 4)
        a = (int(round((x0 - ox) * k * s)), int(round(y * s)))
        b = (int(round((x0 + span - ox) * k * s)), int(round(y * s)))
        cv2.line(img, a, b, colour, thick, cv2.LINE_AA, 4)
    for name in ("d4", "d12", "h8", "l4", "l12"):
        cx, cy = place.point_mm(name)
        centre = (int(round((cx - ox) * k * s)), int(round((cy - oy) * k * s)))
        cv2.circle(img, centre, int(round(look.line_mm * 2.5 * k * s)), colour, -1, cv2.LINE_AA, 4)


def _draw_stone(
    img: np.ndarray,
    look: GomokuLook,
    colour: str,
    centre: tuple[float, float],
    r: float,
    light: tuple[float, float],
) -> None:
    """A stone of radius ``r`` px at ``centre`` (px): its shadow, its body shaded, a highlight."""
    cx, cy = centre
    pad = int(r * 1.6) + 3
    x0, y0 = max(0, int(cx) - pad), max(0, int(cy) - pad)
    x1, y1 = min(img.shape[1], int(cx) + pad), min(img.shape[0], int(cy) + pad)
    if x1 <= x0 or y1 <= y0:
        return
    yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    dx, dy = xx - np.float32(cx), yy - np.float32(cy)
    d = np.sqrt(dx * dx + dy * dy) / np.float32(r)
    roi = img[y0:y1, x0:x1]
    sd = np.sqrt((dx - 0.12 * r) ** 2 + (dy - 0.16 * r) ** 2) / np.float32(r)  # the shadow, down-right
    roi *= (1 - 0.35 * np.clip(1.15 - sd, 0, 0.25) / 0.25)[..., None]
    body = np.array(look.black if colour == "B" else look.white, np.float32)
    # light from one side: brighter towards it, darker away; a shell's rim darker still
    side = (dx * light[0] + dy * light[1]) / np.float32(r)
    shade = 1 - 0.10 * side - 0.12 * d**2
    if colour == "W" and look.shell:
        shade -= 0.08 * np.clip(d - 0.75, 0, 1) / 0.25
    col = body[None, None, :] * shade[..., None]
    hx, hy = cx + light[0] * 0.35 * r, cy + light[1] * 0.35 * r
    h = np.exp(-((xx - hx) ** 2 + (yy - hy) ** 2) / np.float32((0.18 * r) ** 2 + 1e-6))
    col += (np.float32(255 * look.gloss * (0.35 if colour == "W" else 0.5)) * h)[..., None]
    alpha = np.clip((1.0 - d) * r, 0, 1)[..., None]  # anti-aliased edge
    roi[:] = roi * (1 - alpha) + np.clip(col, 0, 255) * alpha


@dataclass
class GomokuFilm:
    """A planned film: the game, its board, the table, and per time the stones down and the arm."""

    log: dict[str, Any]
    look: str
    place: BoardPlace
    table: Table
    laid: list[float]  # each move's time (s from the clock's start)
    arms: list[Arm]  # each move's arm, at its tip (the stone's point)
    end: float


def plan_game(log: dict[str, Any], rng: np.random.Generator, look: str) -> GomokuFilm:
    """The film of ``log``: a board of ``look``, its place on the table, when each stone is laid and
    the arm that lays it (black's from the south edge, white's from the north)."""
    pitch = float(rng.uniform(24.0, 30.0))
    board_mm = (SIZE - 1) * pitch + 2 * 0.9 * pitch
    side = board_mm + 2 * MARGIN_MM
    table = Table(side, side)
    a1 = (
        MARGIN_MM + 0.9 * pitch + float(rng.normal(0, 2)),
        side - MARGIN_MM - 0.9 * pitch + float(rng.normal(0, 2)),
    )
    place = BoardPlace(a1, pitch)
    laid, arms, t = [], [], 0.0
    for colour, point, seconds in log["moves"]:
        t += float(seconds)
        laid.append(t)
        target = np.array(place.point_mm(point))
        arms.append(random_arm(rng, table, "S" if colour == "B" else "N", target))
    return GomokuFilm(log, look, place, table, laid, arms, t + 3.0)


def _arm_at(arm: Arm, back_mm: float) -> Arm:
    """The arm with its tip drawn back ``back_mm`` towards its start."""
    s, t = np.array(arm.start), np.array(arm.tip)
    u = (t - s) / max(float(np.linalg.norm(t - s)), 1e-6)
    tip = t - u * back_mm
    return Arm(
        arm.seat,
        arm.start,
        (float(tip[0]), float(tip[1])),
        arm.skin,
        arm.sleeve,
        arm.width,
        arm.height_mm,
        arm.spread,
    )


def state_at(film: GomokuFilm, t: float) -> tuple[int, Arm | None]:
    """At time ``t``: how many stones are down, and the arm over the board (None: none)."""
    laid = sum(1 for x in film.laid if x <= t)
    for k, x in enumerate(film.laid):
        if x - HOLD_S - 0.4 <= t < x - HOLD_S:  # reaching in
            return laid, _arm_at(film.arms[k], 120.0 * (x - HOLD_S - t) / 0.4)
        if x - HOLD_S <= t < x:
            return laid, film.arms[k]
        if x <= t < x + BACK_S:  # drawing back: the fingers lift off the stone first
            return laid, _arm_at(film.arms[k], 60.0 + 300.0 * (t - x) / BACK_S)
    return laid, None


def render_game(
    seed: int,
    out: Path,
    *,
    fps: int = 5,
    width: int = 1280,
    height: int = 960,
    look: str | None = None,
    tilt: float | None = None,
) -> dict[str, Any]:
    """Simulate a game (:func:`gomoku.sim.simulate_game`), film it and write ``video.mp4``,
    ``truth.json`` (the log, the long-think presses, the grid's place and the look) and
    ``table.json`` (the calibration the markers give) to ``out``; returns a summary."""
    from calibration.markers import calibrate

    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    log = simulate_game(seed)
    look = look or HELDOUT_LOOKS[int(rng.integers(len(HELDOUT_LOOKS)))]
    if look not in LOOKS:
        raise ValueError(f"look {look!r} is not one of {', '.join(LOOKS)}")
    style = LOOKS[look]
    film = plan_game(log, rng, look)
    table, place = film.table, film.place
    camera_look = video_look(rng, brightness=0.75)
    tilt = float(rng.uniform(0.03, 0.09)) if tilt is None else tilt
    # the table (markers at its corners) well inside the frame, however the camera tilts and turns
    view = camera_homography(rng, table, width, height, fill=float(rng.uniform(0.78, 0.88)), tilt=tilt)
    renderer = Renderer(rng, width, height, table, view, camera_look, clutter_items=False)
    draw_table_markers(
        renderer.base, renderer.view, (table.width, table.height), MARKER_MM, renderer.px_per_mm
    )
    # the board, drawn at twice the image's resolution in table mm, then seen through the camera
    k = 2.0 * renderer.px_per_mm
    edge = 0.9 * place.pitch
    bx0, by0 = place.a1[0] - edge, place.a1[1] - (SIZE - 1) * place.pitch - edge
    side = (SIZE - 1) * place.pitch + 2 * edge
    board = _board_texture(style, rng, side, k)
    _draw_lines(board, style, place, (bx0, by0), k)
    to_image = view @ np.array([[1 / k, 0, bx0], [0, 1 / k, by0], [0, 0, 1]])
    light = (float(rng.normal(-0.5, 0.2)), float(rng.normal(-0.5, 0.2)))
    radius = 0.47 * place.pitch * k

    def base_with(stones: int) -> np.ndarray:
        img = board.copy()
        for colour, point, _ in log["moves"][:stones]:
            x, y = place.point_mm(point)
            _draw_stone(img, style, colour, ((x - bx0) * k, (y - by0) * k), radius, light)
        warped = cv2.warpPerspective(img, to_image, (width, height), flags=cv2.INTER_AREA)
        mask = cv2.warpPerspective(
            np.ones(img.shape[:2], np.float32), to_image, (width, height), flags=cv2.INTER_LINEAR
        )
        return np.asarray(renderer_base * (1 - mask[..., None]) + warped * mask[..., None], np.float32)

    renderer_base = renderer.base.copy()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    video = out / "video.mp4"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter.fourcc(*"mp4v"), fps, (width, height))
    if not writer.isOpened():
        raise RuntimeError(f"cannot write {video}")
    frames = int(np.ceil(film.end * fps))
    last_key: tuple[int, Any] | None = None
    image: np.ndarray | None = None
    stones_cached = -1
    try:
        for i in range(frames):
            laid, arm = state_at(film, i / fps)
            key = (laid, None if arm is None else (round(arm.tip[0], 1), round(arm.tip[1], 1)))
            if key != last_key or image is None:
                if laid != stones_cached:
                    renderer.base = base_with(laid)
                    stones_cached = laid
                image = renderer.render([], [] if arm is None else [arm], rng, jpeg=False).image
                last_key = key
            writer.write(image)
    finally:
        writer.release()
        renderer.base = renderer_base
    calibration = calibrate(
        image if image is not None else np.zeros((height, width, 3), np.uint8),
        table.width,
        table.height,
        MARKER_MM,
    )
    calibration.geometry.save(out / "table.json")
    truth = {
        **log,
        "look": look,
        "grid": {"a1": list(place.a1), "pitch": place.pitch},
        "table_mm": [table.width, table.height],
        "marker_mm": MARKER_MM,
        "fps": fps,
    }
    (out / "truth.json").write_text(json.dumps(truth, indent=1))
    return {
        "video": str(video),
        "frames": frames,
        "moves": len(log["moves"]),
        "look": look,
        "seconds": round(time.perf_counter() - start, 1),
    }
