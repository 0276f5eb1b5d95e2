"""Rendered frames for checking table set-up (:mod:`calibration.markers`): a table with its corner
markers laid as the sheet says, a deal's cards on it, seen by a camera turned a little away from
straight down through a lens with radial distortion, with the renderer's light, blur, noise and
JPEG; the truth is the renderer's own geometry (``table.json`` as it should come out).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calibration.table import TableGeometry
from models.synth.deal import table_geometry
from models.synth.faces import available_designs
from models.synth.layout import Placement, Table, random_layout
from models.synth.markers import draw_table_markers
from models.synth.scene import Look, Renderer, apply_h, camera_homography, oblique


@dataclass(frozen=True)
class MarkerFrame:
    image: np.ndarray  # BGR uint8
    truth: TableGeometry  # the renderer's geometry: homography, lens, zones
    cards: tuple[tuple[float, float], ...]  # each card's centre, table mm
    covered: int | None  # the marker partly covered, if any
    tilt_deg: float


def looking_at_table(
    view: np.ndarray, table: Table, width: int, height: int, fit_pad_mm: float | None = None
) -> np.ndarray:
    """``view`` (table mm → image px) moved so that the table's middle is the image's; with
    ``fit_pad_mm``, also shrunk about the image's middle until the table, with that much round it
    (the markers' paper), lies 20 px inside the frame."""
    mid = apply_h(view, np.array([[table.width / 2, table.height / 2]]))[0]
    view = np.array([[1, 0, width / 2 - mid[0]], [0, 1, height / 2 - mid[1]], [0, 0, 1.0]]) @ view
    if fit_pad_mm is None:
        return view
    p = fit_pad_mm
    corners = np.array(
        [[-p, -p], [table.width + p, -p], [table.width + p, table.height + p], [-p, table.height + p]]
    )
    half = np.array([width / 2 - 20, height / 2 - 20])
    f = 1 / max(1.0, float((np.abs(apply_h(view, corners) - [width / 2, height / 2]) / half).max()))
    return np.asarray(
        np.array([[f, 0, (1 - f) * width / 2], [0, f, (1 - f) * height / 2], [0, 0, 1.0]]) @ view
    )


def marker_frame(
    seed: int,
    *,
    width: int = 1920,
    height: int = 1440,
    marker_mm: float = 60.0,
    k1: tuple[float, float] = (-0.08, 0.08),
    tilt_deg: tuple[float, float] = (2.0, 10.0),
    covered: bool | None = None,
) -> MarkerFrame:
    """A frame deterministic by ``seed``: table 800–1000 mm a side, lens ``k1`` and camera tilt
    drawn from the ranges given; ``covered``: whether a grey object hides 30–60 % of one marker
    (None: every third seed)."""
    rng = np.random.default_rng(seed)
    table = Table(float(rng.uniform(800, 1000)), float(rng.uniform(800, 1000)))
    look = Look.random(rng)
    look.k1 = float(rng.uniform(*k1))
    view = camera_homography(rng, table, width, height, fill=float(rng.uniform(0.78, 0.88)), tilt=0.0)
    tilt = float(rng.uniform(*tilt_deg))
    view = looking_at_table(
        oblique(view, width, height, tilt, float(rng.uniform(0, 360))), table, width, height, fit_pad_mm=15.0
    )
    renderer = Renderer(rng, width, height, table, view, look)
    hidden = int(rng.integers(4)) if (seed % 3 == 0 if covered is None else covered) else None
    share = {hidden: float(rng.uniform(0.3, 0.6))} if hidden is not None else None
    draw_table_markers(renderer.base, view, (table.width, table.height), marker_mm, renderer.px_per_mm, share)
    designs = available_designs()
    placements = random_layout(rng, table, designs[int(rng.integers(len(designs)))])
    scene = renderer.render(placements, [], rng)
    truth = table_geometry(renderer, 63.0)
    return MarkerFrame(scene.image, truth, tuple((p.x, p.y) for p in placements), hidden, tilt)


def enrollment_photos(
    design: str,
    seed: int,
    *,
    width: int = 1920,
    height: int = 1440,
    table_mm: tuple[float, float] = (900.0, 900.0),
    marker_mm: float = 60.0,
    skip: frozenset[str] = frozenset(),
) -> list[np.ndarray]:
    """The three photos of ``tractorcam enroll sheet`` for a design (without the cards in ``skip``:
    forgotten), as a referee takes them on the cleared table: each
    card in its cell (a few mm off its middle, turned a little, now and then the other way up),
    the table's markers in its corners, a camera a little off straight down through a lens with
    radial distortion, the renderer's light, blur, noise and JPEG."""
    from calibration.enroll import PHOTOS, cards_of_photo, cell_mm

    rng = np.random.default_rng(seed)
    table = Table(*table_mm)
    look = Look.random(rng)
    look.k1 = float(rng.uniform(-0.06, 0.06))
    view = camera_homography(rng, table, width, height, fill=0.85, tilt=0.0)
    view = looking_at_table(
        oblique(view, width, height, float(rng.uniform(2, 8)), float(rng.uniform(0, 360))),
        table,
        width,
        height,
    )
    photos = []
    for k in range(PHOTOS):
        renderer = Renderer(rng, width, height, table, view, look, clutter_items=False)
        draw_table_markers(renderer.base, view, table_mm, marker_mm, renderer.px_per_mm)
        placements = []
        for i, card in enumerate(cards_of_photo(k)):
            x1, y1, x2, y2 = cell_mm(table.width, table.height, i)
            if card in skip:
                continue
            angle = float(rng.normal(0, 4)) + (180.0 if rng.random() < 0.2 else 0.0)
            placements.append(
                Placement(
                    card,
                    True,
                    (x1 + x2) / 2 + float(rng.uniform(-15, 15)),
                    (y1 + y2) / 2 + float(rng.uniform(-20, 20)),
                    angle,
                    design,
                    role="pile",
                )
            )
        photos.append(renderer.render(placements, [], rng).image)
    return photos
