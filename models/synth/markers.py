"""The table's corner markers drawn into rendered scenes and films, as a referee lays them
(``../shared/spec/cli.md``, *Table set-up commands*; :mod:`calibration.markers`): each ArUco marker
in its table corner, its outer corner on the table's corner, on white paper whose margin hangs over
the table's edge.
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.markers import DICTIONARY, marker_corners_mm

#: White paper round a printed marker, mm (the sheet's cutting instructions say 1 cm).
MARGIN_MM = 10.0
#: The paper's grey level before the scene's light (a print is a little darker than 255).
PAPER = 232.0
INK = 28.0


def draw_table_markers(
    canvas: np.ndarray,
    view: np.ndarray,
    table_mm: tuple[float, float],
    marker_mm: float,
    px_per_mm: float,
    covered: dict[int, float] | None = None,
) -> None:
    """Draw the four corner markers onto a float32 BGR ``canvas`` (the table before the scene's light
    and lens) through ``view`` (table mm → image px). ``covered``: for a marker id, the share of its
    square (from its inner side) hidden under a plain grey object (a cup, a score pad), the way a
    marker is partly covered at a real table."""
    width, height = table_mm
    k = max(4.0, 2.0 * px_per_mm)  # patch px per mm: finer than the image
    side = int(round(marker_mm * k))
    dictionary = cv2.aruco.getPredefinedDictionary(DICTIONARY)
    h, w = canvas.shape[:2]
    for i, corners in marker_corners_mm(width, height, marker_mm).items():
        # the paper's margin hangs over the table's edge (as the sheet says to lay it): a black
        # border against a dark floor is no border
        x0, y0 = float(corners[0, 0]) - MARGIN_MM, float(corners[0, 1]) - MARGIN_MM
        x1, y1 = float(corners[2, 0]) + MARGIN_MM, float(corners[2, 1]) + MARGIN_MM
        pw, ph = int(round((x1 - x0) * k)), int(round((y1 - y0) * k))
        patch = np.full((ph, pw), PAPER, np.float32)
        mx, my = int(round((corners[0, 0] - x0) * k)), int(round((corners[0, 1] - y0) * k))
        ink = cv2.aruco.generateImageMarker(dictionary, i, side).astype(np.float32) / 255.0
        patch[my : my + side, mx : mx + side] = INK + (PAPER - INK) * ink
        share = (covered or {}).get(i, 0.0)
        if share > 0:  # a grey object over the marker's inner part
            cut = int(round(side * share))
            if i in (0, 3):  # W corners: the inner side is E
                patch[my : my + side, mx + side - cut : mx + side + int(MARGIN_MM * k)] = 120.0
            else:
                patch[my : my + side, max(0, mx - int(MARGIN_MM * k)) : mx + cut] = 120.0
        # patch px (continuous) → table mm → image px, with OpenCV's pixel-centre convention
        to_mm = np.array([[1 / k, 0, x0], [0, 1 / k, y0], [0, 0, 1.0]])
        shift_in = np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1.0]])
        shift_out = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1.0]])
        m = shift_out @ view @ to_mm @ shift_in
        warped = cv2.warpPerspective(patch, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=0.0)
        mask = cv2.warpPerspective(
            np.ones((ph, pw), np.float32), m, (w, h), flags=cv2.INTER_LINEAR, borderValue=0.0
        )
        a = mask[..., None]
        canvas *= 1 - a
        canvas += warped[..., None] * a
