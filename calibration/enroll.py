"""Enrolling the event's deck from photos (``tractorcam enroll``; ``../shared/spec/cli.md``).

The referee lays the 54 cards face up on the calibrated table (its four corner markers,
:mod:`calibration.markers`) in three photos of 18, each card in its cell of a 6 × 3 grid centred on
the table (``tractorcam enroll sheet`` prints where each card goes). A card's place names it, so the
two jokers are told apart by where they lie. Each photo is calibrated from its markers, each cell
rectified to the table's millimetres, the card found in it (the largest region unlike the cloth at
the cell's edge, of a card's size) and its face cut upright to a fixed size. A cell without a
card-sized region is reported by the card that belongs there, so a missed or misplaced card is
named, not guessed.

>>> [cards_of_photo(k)[:2] for k in range(PHOTOS)]
[('2S', '3S'), ('7H', '8H'), ('QD', 'KD')]
>>> cell_mm(900.0, 900.0, 0)
(60.0, 165.0, 190.0, 355.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import cv2
import numpy as np
import numpy.typing as npt

from calibration.markers import MarkersMissingError, calibrate
from calibration.table import TableGeometry
from engine.cards import CARD_NAMES

#: Photos, and the grid of cards in each (columns × rows).
PHOTOS = 3
COLUMNS, ROWS = 6, 3
#: A grid cell on the table, mm: room for a 63 × 88 mm card laid roughly in its middle.
CELL_W, CELL_H = 130.0, 190.0
#: Pixels per mm of the rectified cells and of the faces cut from them.
PX_MM = 6.0
#: The card is looked for at 1/SHRINK of the cells' scale.
SHRINK = 3
#: What is cut off round the card's edge, mm.
TRIM_MM = 1.5
#: Colours a cloth is modelled with (k-means over a cell's rim: a plain cloth, a check, a print).
CLOTH_COLOURS = 3
#: The card sizes enrollment accepts, mm (poker 63 × 88, bridge 57 × 88, with the camera's error).
CARD_MM_RANGE = ((50.0, 72.0), (78.0, 98.0))


class EnrollError(ValueError):
    """Photos that do not give the whole deck; the message names what is missing (one line)."""


def cards_of_photo(k: int) -> tuple[str, ...]:
    """The 18 cards of photo ``k`` (0-based), in reading order (rows from N, columns from W): the
    engine's card order, spades to clubs from 2 to A, then the small and the big joker."""
    n = COLUMNS * ROWS
    return tuple(CARD_NAMES[k * n : (k + 1) * n])


def cell_mm(width_mm: float, height_mm: float, i: int) -> tuple[float, float, float, float]:
    """Cell ``i`` (reading order) of the grid centred on a table: x1, y1, x2, y2 in table mm."""
    x0 = (width_mm - COLUMNS * CELL_W) / 2
    y0 = (height_mm - ROWS * CELL_H) / 2
    r, c = divmod(i, COLUMNS)
    return (x0 + c * CELL_W, y0 + r * CELL_H, x0 + (c + 1) * CELL_W, y0 + (r + 1) * CELL_H)


def rectify(
    image: npt.NDArray[np.uint8], geometry: TableGeometry, box: Sequence[float]
) -> npt.NDArray[np.uint8]:
    """The table area ``box`` (x1, y1, x2, y2 mm) of ``image`` seen from straight above at
    :data:`PX_MM`, through the calibration (lens included)."""
    x1, y1, x2, y2 = box
    w, h = int(round((x2 - x1) * PX_MM)), int(round((y2 - y1) * PX_MM))
    # the map is smooth: through the calibration every STEP px, interpolated in between
    step = 8
    gx, gy = np.arange(0, w + step, step), np.arange(0, h + step, step)
    mm = np.stack(np.meshgrid(x1 + (gx + 0.5) / PX_MM, y1 + (gy + 0.5) / PX_MM), axis=-1).reshape(-1, 2)
    coarse = (geometry.table_to_pixel(mm) - 0.5).reshape(len(gy), len(gx), 2).astype(np.float32)
    fx = np.repeat((np.arange(w, dtype=np.float32) / step)[None, :], h, axis=0)
    fy = np.repeat((np.arange(h, dtype=np.float32) / step)[:, None], w, axis=1)
    map_x = cv2.remap(coarse[..., 0], fx, fy, cv2.INTER_LINEAR)
    map_y = cv2.remap(coarse[..., 1], fx, fy, cv2.INTER_LINEAR)
    return cast(
        "npt.NDArray[np.uint8]", cv2.remap(image, map_x, map_y, cv2.INTER_LINEAR, borderValue=(0, 0, 0))
    )


@dataclass(frozen=True)
class CutFace:
    card: str
    face: npt.NDArray[np.uint8]  # BGR, upright (portrait), card_mm × PX_MM
    card_mm: tuple[float, float]  # the card's size as measured on the table


def cut_face(cell: npt.NDArray[np.uint8]) -> tuple[npt.NDArray[np.uint8], tuple[float, float]] | None:
    """The card lying in a rectified cell, cut out and turned portrait, with its size in mm; None
    when no region of a card's size stands out from the cloth at the cell's edge."""
    small = cv2.resize(cell, None, fx=1 / SHRINK, fy=1 / SHRINK, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    px_mm = PX_MM / SHRINK  # the card is found at this scale, then cut at full scale
    e = max(2, int(4 * px_mm))  # the cell's outer 4 mm: cloth (a patterned cloth has a few colours)
    rim = np.concatenate(
        [
            lab[:e].reshape(-1, 3),
            lab[-e:].reshape(-1, 3),
            lab[:, :e].reshape(-1, 3),
            lab[:, -e:].reshape(-1, 3),
        ]
    )
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.5)
    _, _, cloth = cv2.kmeans(  # type: ignore[call-overload]  # (OpenCV's stubs want a bestLabels array)
        rim[:: max(1, len(rim) // 4000)], CLOTH_COLOURS, None, criteria, 2, cv2.KMEANS_PP_CENTERS
    )
    distance = np.min(np.linalg.norm(lab[:, :, None, :] - cloth[None, None], axis=3), axis=2)
    rim_distance = np.min(np.linalg.norm(rim[:, None, :] - cloth[None], axis=2), axis=1)
    # unlike the cloth: beyond twice the rim's own spread, within bounds (a card on a cloth of its own
    # colour is not told apart; something lying over the rim must not hide the card)
    threshold = float(np.clip(2.0 * np.percentile(rim_distance, 95), 14.0, 30.0))
    mask = (distance > threshold).astype(np.uint8) * 255
    # close the card's pips and art, fill what is left inside it, then open away anything thinner
    # than 8 mm that touches it (a plank's seam, a check's line, a print's stroke)
    k = int(2 * px_mm) | 1
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    filled = cv2.copyMakeBorder(mask, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)  # a way round everything
    cv2.floodFill(filled, None, (0, 0), 255)
    mask = np.bitwise_or(mask, cv2.bitwise_not(filled[1:-1, 1:-1]))
    k = int(8 * px_mm) | 1
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask)
    if n < 2:
        return None
    biggest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    points = (np.column_stack(np.nonzero(labels == biggest)[::-1]).astype(np.float32) + 0.5) * SHRINK - 0.5
    (cx, cy), (a, b), angle = cv2.minAreaRect(points)
    a, b = a + SHRINK, b + SHRINK  # the outer pixels' whole width
    short, long = sorted((a / PX_MM, b / PX_MM))
    (smin, smax), (lmin, lmax) = CARD_MM_RANGE
    if not (smin <= short <= smax and lmin <= long <= lmax):
        return None
    # the face without its outer TRIM_MM: the edge found holds a little shadow and cloth
    trim = 2 * TRIM_MM * PX_MM
    box = cv2.boxPoints(((cx, cy), (a - trim, b - trim), angle))
    # corners in order TL, TR, BR, BL of a portrait face: start at the corner nearest the top-left
    # of the cell, going clockwise, with the long side vertical
    centre = box.mean(axis=0)
    order = np.argsort(np.arctan2(box[:, 1] - centre[1], box[:, 0] - centre[0]))
    box = box[order]  # clockwise from about -180° (left-up)
    if np.linalg.norm(box[1] - box[0]) > np.linalg.norm(box[2] - box[1]):  # top edge long: landscape
        box = np.roll(box, -1, axis=0)
    fw, fh = int(round((short - 2 * TRIM_MM) * PX_MM)), int(round((long - 2 * TRIM_MM) * PX_MM))
    target = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32)
    m = cv2.getPerspectiveTransform(box.astype(np.float32), target)
    face = cast("npt.NDArray[np.uint8]", cv2.warpPerspective(cell, m, (fw, fh), flags=cv2.INTER_AREA))
    return face, (float(short), float(long))


def enroll_photos(
    images: Sequence[npt.NDArray[np.uint8]],
    width_mm: float = 900.0,
    height_mm: float = 900.0,
    marker_mm: float = 60.0,
) -> list[CutFace]:
    """The 54 faces from the three photos (in the sheet's order); raises :class:`EnrollError`
    naming a photo whose markers are not found, or every card whose cell holds no card."""
    if len(images) != PHOTOS:
        raise EnrollError(f"give the {PHOTOS} photos of the sheet, in its order (got {len(images)})")
    faces: list[CutFace] = []
    missing: list[str] = []
    for k, image in enumerate(images):
        try:
            geometry = calibrate(image, width_mm, height_mm, marker_mm).geometry
        except MarkersMissingError as exc:
            raise EnrollError(f"photo {k + 1}: {exc}") from None
        for i, card in enumerate(cards_of_photo(k)):
            cut = cut_face(rectify(image, geometry, cell_mm(width_mm, height_mm, i)))
            if cut is None:
                missing.append(f"{card} (photo {k + 1}, row {i // COLUMNS + 1}, column {i % COLUMNS + 1})")
            else:
                faces.append(CutFace(card, *cut))
    if missing:
        raise EnrollError(
            f"no card found where {len(missing)} belong: {', '.join(missing[:8])}"
            + (" ..." if len(missing) > 8 else "")
        )
    return faces


def contact_sheet(faces: Sequence[CutFace], face_h: int = 180) -> npt.NDArray[np.uint8]:
    """The faces in the deck's order, each named, 13 to a row (a suit a row, the jokers last), for a
    person to confirm that each card is where its name says."""
    face_w = int(round(face_h * 63 / 88))
    label_h = 26
    rows = [faces[i : i + 13] for i in range(0, len(faces), 13)]
    sheet = np.full((len(rows) * (face_h + label_h + 8) + 8, 13 * (face_w + 8) + 8, 3), 255, np.uint8)
    for r, row in enumerate(rows):
        for c, f in enumerate(row):
            x = 8 + c * (face_w + 8)
            y = 8 + r * (face_h + label_h + 8)
            sheet[y : y + face_h, x : x + face_w] = cv2.resize(
                f.face, (face_w, face_h), interpolation=cv2.INTER_AREA
            )
            cv2.putText(
                sheet,
                f.card,
                (x + 4, y + face_h + 20),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.6,
                (0, 0, 0),
                1,
                cv2.LINE_AA,
            )
    return sheet


def layout_sheet(
    width_mm: float = 900.0, height_mm: float = 900.0, px_mm: float = 1.0
) -> list[npt.NDArray[np.uint8]]:
    """One picture per photo: the table seen from above with the corner markers' places and each
    card's name in its cell, as the referee lays them."""
    pages = []
    for k in range(PHOTOS):
        page = np.full((int(height_mm * px_mm), int(width_mm * px_mm), 3), 235, np.uint8)
        for corner in ((0, 0), (width_mm - 60, 0), (width_mm - 60, height_mm - 60), (0, height_mm - 60)):
            x, y = (int(v * px_mm) for v in corner)
            cv2.rectangle(page, (x, y), (x + int(60 * px_mm), y + int(60 * px_mm)), (0, 0, 0), -1)
        for i, card in enumerate(cards_of_photo(k)):
            x1, y1, x2, y2 = (int(v * px_mm) for v in cell_mm(width_mm, height_mm, i))
            cv2.rectangle(page, (x1, y1), (x2, y2), (120, 120, 120), 2)
            cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
            cw, ch = int(63 * px_mm / 2), int(88 * px_mm / 2)
            cv2.rectangle(page, (cx - cw, cy - ch), (cx + cw, cy + ch), (255, 255, 255), -1)
            cv2.putText(
                page,
                card,
                (cx - cw + 6, cy + 8),
                cv2.FONT_HERSHEY_SIMPLEX,
                1.1 * px_mm,
                (0, 0, 160),
                2,
                cv2.LINE_AA,
            )
        cv2.putText(
            page,
            f"photo {k + 1} of {PHOTOS}: N at the top",
            (int(80 * px_mm), int(40 * px_mm)),
            cv2.FONT_HERSHEY_SIMPLEX,
            1.0 * px_mm,
            (0, 0, 0),
            2,
            cv2.LINE_AA,
        )
        pages.append(page)
    return pages
