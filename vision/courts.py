"""Court cards named from the whole face, for an enrolled deck (the reader's ``courts`` step).

Some decks print only a suit sign in the corners of their jacks, queens and kings (guyenne-classic):
the corner names the suit and that the card is a court card, never which. An enrolled deck
(``tractorcam enroll``) brings its 54 faces (``DIR/faces/CARD.png``), so the reader can look at the
card itself. For an index whose probabilities lie on the court cards without naming one of them
surely, the card is cut from the image in the index's frame (its reading direction, the orientation
head's ``up``; the card body lies right of and below an index as it reads) and the art of the 12
court faces, upright and turned half round, is matched against it (normalised cross-correlation,
grey). The face that matches clearly better than every other takes the courts' probability, or its
correlation where that is higher; otherwise nothing changes, so a court card half under another
card stays as unsure as the corner left it. Matching all 12 faces, not only the suit the corner
favours, lets the art settle a suit the small corner pip left in doubt (clubs and spades).

>>> CourtFaces.court_trios()[0]
('JS', 'QS', 'KS')
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from vision.detections import Detections
from vision.labels import SUITS, class_id

#: The card is matched at this height (pixels), its art only: the middle, away from the corners.
MATCH_H = 96
#: The part of a face matched (x1, y1, x2, y2 as shares of the face): the court art.
ART = (0.2, 0.16, 0.8, 0.84)
#: A court card is looked at when the 12 court cards hold at least this much of the index's
#: probability and none of them alone reaches ``SURE``.
COURT_MASS = 0.3
SURE = 0.9
#: The best face must correlate at least this well, and by this much more than the second.
MIN_SCORE = 0.6
MARGIN = 0.1
#: A card's height over its diagonal index-to-index distance (63 × 88 mm cards, indices about 6 and
#: 12 mm in from the edges): the card's size when the table does not give it.
HEIGHT_PER_PAIR = 88.0 / 82.0


#: The class ids of the 12 court cards, suit by suit (jack, queen, king).
COURT_IDS = np.array([class_id(f"{rank}{suit}") for suit in SUITS for rank in "JQK"])


class CourtFacesError(ValueError):
    """An enrolled deck's faces folder that lacks court faces (one line)."""


@dataclass(frozen=True)
class CourtFaces:
    """The grey court faces of an enrolled deck, upright, as ``{card: (H, W) uint8}`` of one size."""

    faces: dict[str, npt.NDArray[np.uint8]]

    @staticmethod
    def court_trios() -> list[tuple[str, str, str]]:
        """Each suit's jack, queen and king, in the labels' suit order."""
        return [(f"J{s}", f"Q{s}", f"K{s}") for s in SUITS]

    @classmethod
    def from_folder(cls, faces_dir: Path) -> CourtFaces:
        """The 12 court faces of ``faces_dir`` (``CARD.png`` as ``tractorcam enroll`` writes them)."""
        faces: dict[str, npt.NDArray[np.uint8]] = {}
        for trio in cls.court_trios():
            for card in trio:
                image = cv2.imread(str(Path(faces_dir) / f"{card}.png"), cv2.IMREAD_COLOR)
                if image is None:
                    raise CourtFacesError(f"{faces_dir}: no readable {card}.png (tractorcam enroll)")
                faces[card] = np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), np.uint8)
        return cls(faces)

    def aspect(self) -> float:
        """Width over height of the faces."""
        h, w = next(iter(self.faces.values())).shape
        return float(w / h)

    @cached_property
    def art(self) -> dict[str, npt.NDArray[np.uint8]]:
        """Each face's art at the matching height :data:`MATCH_H` (made once)."""
        return self.templates(MATCH_H)

    def templates(self, card_h: float) -> dict[str, npt.NDArray[np.uint8]]:
        """Each face's art (:data:`ART`) at a card height of ``card_h`` pixels."""
        out = {}
        for card, face in self.faces.items():
            h = max(8, int(round(card_h)))
            w = max(6, int(round(card_h * self.aspect())))
            small = np.asarray(cv2.resize(face, (w, h), interpolation=cv2.INTER_AREA), np.uint8)
            x1, y1, x2, y2 = ART
            out[card] = small[int(y1 * h) : int(y2 * h), int(x1 * w) : int(x2 * w)]
        return out


def turns(up: npt.NDArray[np.float32]) -> list[npt.NDArray[np.float64]]:
    """The reading directions a court index is looked at in: ``up`` and its quarter turns (a lone
    suit sign leaves the orientation head unsure by quarter turns), or sixteen directions when
    ``up`` is unknown.

    >>> [(t.round(2) + 0.0).tolist() for t in turns(np.array([0.0, -1.0]))]
    [[0.0, -1.0], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]
    """
    if np.isfinite(up).all() and float(np.hypot(*up)) > 1e-6:
        a0, steps = float(np.arctan2(up[1], up[0])), 4
    else:
        a0, steps = -np.pi / 2, 16
    return [
        np.array([np.cos(a0 + k * 2 * np.pi / steps), np.sin(a0 + k * 2 * np.pi / steps)])
        for k in range(steps)
    ]


def card_frame(
    grey: npt.NDArray[np.uint8],
    centre: npt.NDArray[np.float64],
    up: npt.NDArray[np.float64],
    card_h: float,
    aspect: float,
    out_h: float | None = None,
) -> npt.NDArray[np.uint8]:
    """The region where a card lies whose index is centred at ``centre`` and reads towards ``up``,
    turned upright, at a card height of ``out_h`` pixels (None: the image's scale): from 0.3 of the
    card's size before the index to a whole card after it, so the card lies in it wherever its index
    sits in its corner."""
    u = np.asarray(up, np.float64)
    u = u / max(1e-9, float(np.hypot(*u)))
    down = -u
    right = np.array([-u[1], u[0]])  # the index's right as it reads (image y points down)
    f = 1.0 if out_h is None else out_h / card_h
    card_w = card_h * aspect
    w, h = int(round(1.3 * card_w * f)), int(round(1.3 * card_h * f))
    origin = np.asarray(centre, np.float64) - 0.3 * card_w * right - 0.3 * card_h * down
    # out (x, y) -> image origin + (x right + y down) / f
    m = np.array([[right[0] / f, down[0] / f, origin[0]], [right[1] / f, down[1] / f, origin[1]]])
    frame = cv2.warpAffine(
        grey, m, (w, h), flags=cv2.WARP_INVERSE_MAP | cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return np.asarray(frame, np.uint8)


def match_courts(
    frame: npt.NDArray[np.uint8], templates: dict[str, npt.NDArray[np.uint8]]
) -> tuple[str, float, float]:
    """The court face whose art matches ``frame`` best, its score and the best other face's. Each
    face is matched upright and turned half round: seen from its bottom-right index, a card whose
    art is not symmetric (a full-length figure) lies upside down in the frame."""
    names = list(templates)
    scores = []
    for card in names:
        t = templates[card]
        if t.shape[0] > frame.shape[0] or t.shape[1] > frame.shape[1] or float(t.std()) < 1.0:
            scores.append(-1.0)
            continue
        scores.append(
            max(float(cv2.matchTemplate(frame, u, cv2.TM_CCOEFF_NORMED).max()) for u in (t, t[::-1, ::-1]))
        )
    order = np.argsort(scores)[::-1]
    return names[int(order[0])], scores[int(order[0])], scores[int(order[1])]


def name_courts(
    image: npt.NDArray[np.uint8],
    boxes: Detections,
    p: npt.NDArray[np.float32],
    faces: CourtFaces,
    card_h: float | None,
    pair_ratio: float,
) -> npt.NDArray[np.float32]:
    """The courts step: ``p`` with each unsure court index named from the card's face where one
    court face matches clearly (module docstring), in the index's reading direction and its quarter
    turns (:func:`turns`; sixteen directions where it is unknown). ``card_h``: a card's height in
    pixels when the table gives it, else estimated from the index box (``pair_ratio``:
    index-to-index distance over an index box's long side). Matching is done at a card height of
    :data:`MATCH_H` pixels."""
    if len(boxes) == 0:
        return p
    out = p.copy()
    ids = COURT_IDS
    greys: dict[int, npt.NDArray[np.uint8]] = {}  # the image smoothed for each card height's shrink
    for i in range(len(boxes)):
        up = boxes.up[i] if boxes.up is not None else np.full(2, np.nan, np.float32)
        mass = float(p[i, ids].sum())
        if mass < COURT_MASS or float(p[i, ids].max()) >= SURE:
            continue
        x1, y1, x2, y2 = boxes.xyxy[i]
        height = round(card_h or HEIGHT_PER_PAIR * pair_ratio * max(x2 - x1, y2 - y1))
        if height not in greys:
            grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
            if height > MATCH_H:  # smoothed before it is shrunk, so the frame does not alias
                grey = cv2.GaussianBlur(grey, (0, 0), 0.4 * height / MATCH_H)
            greys[height] = np.asarray(grey, np.uint8)
        centre = np.array([(x1 + x2) / 2, (y1 + y2) / 2], np.float64)
        best, score, second = max(
            (
                match_courts(card_frame(greys[height], centre, u, height, faces.aspect(), MATCH_H), faces.art)
                for u in turns(up)
            ),
            key=lambda m: m[1] - m[2],
        )
        if score < MIN_SCORE or score - second < MARGIN:
            continue
        named = max(mass, score)
        rest = 1.0 - mass
        out[i] = p[i] * ((1.0 - named) / rest if rest > 1e-6 else 0.0)
        out[i, ids] = 0.0
        out[i, class_id(best)] = named
    return out
