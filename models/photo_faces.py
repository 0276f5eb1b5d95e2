"""A deck's faces cut from labelled photos of it in play (``tractorcam enroll --labels``).

Labelled photos name their cards, not where they lie, and the indices they show are few: a few
hundred crops at the scales and angles those photos happen to have. A card lying whole and apart
on the surface, though, is a quadrilateral that stands out from it; rectified, it is the deck's
own face, as an enrollment sheet gives it (:mod:`calibration.enroll`). The faces cut here feed
the same crop bank the enrolled decks learn from (:class:`models.gpu.FaceBank`: every angle, a
neighbour covering part of the card, any table), so the classifier sees this deck's indices in
far more ways than the photos show them.

Each card is found by its outline (:func:`card_quads`: Otsu's threshold in both polarities, a
convex four-sided outline clear of the photo's border), rectified both ways a card can stand
(the photos may be stretched, so the outline's proportions do not tell which side is long), and
named by the reader: of the photo's cards, the one its boxes on the rectified face make most
probable; the standing is the one whose boxes lie in the top-left and bottom-right corners.

>>> quad = np.array([[10, 10], [50, 12], [48, 70], [9, 66]], np.float32)
>>> order_quad(np.roll(quad, 2, axis=0)).tolist() == quad.tolist()
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from engine.cards import CARD_NAMES

#: The rectified face (w, h) in pixels: the crop bank's face size (:data:`models.gpu.BANK_FACE`).
FACE_SIZE = (160, 240)
#: A card's outline covers at least this share of the photo (smaller ones are too coarse to cut).
MIN_AREA = 0.02
#: The outline's area over its convex hull's, at least (a card partly covered is not convex).
MIN_SOLIDITY = 0.9
#: The long side over the short one in the photo, at most (stretched photos squeeze a card).
MAX_ASPECT = 2.2
#: The outline strays from its four straight sides by at most this share of the card's size (the
#: rounded corners stray less; two overlapping cards, whose outline has notches, more).
MAX_STRAY = 0.035
#: A vertex this close to the photo's border (pixels) means the card may run off it.
BORDER = 4
#: The reader's probability for a photo's card on a rectified face that names the face.
NAME_FLOOR = 0.5


class PhotoFacesError(ValueError):
    """Labelled photos no face can be cut from (one line)."""


@dataclass(frozen=True)
class PhotoFace:
    """One card's face rectified from a photo, BGR at :data:`FACE_SIZE`, standing upright (its
    index top-left), with the card it was named and the photo it came from."""

    card: str
    face: npt.NDArray[np.uint8]
    photo: int
    probability: float


def order_quad(quad: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The four corners clockwise on screen, starting from the one nearest the top-left."""
    c = quad.mean(0)
    angle = np.arctan2(quad[:, 1] - c[1], quad[:, 0] - c[0])
    q = quad[np.argsort(angle)]
    start = int(np.argmin(q.sum(1)))
    return np.roll(q, -start, axis=0).astype(np.float32)


def card_quads(image: npt.NDArray[np.uint8]) -> list[npt.NDArray[np.float32]]:
    """Outlines (4 × 2 corners, :func:`order_quad`) of cards lying whole and apart on a surface
    that contrasts with them: Otsu's threshold of the blurred grey image in both polarities, each
    region's convex hull simplified to four corners, kept when it is large (:data:`MIN_AREA`),
    solid (:data:`MIN_SOLIDITY`), straight-sided (:data:`MAX_STRAY`), not too long (:data:`MAX_ASPECT`) and clear of the border."""
    grey = cv2.GaussianBlur(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    h, w = grey.shape
    out: list[npt.NDArray[np.float32]] = []
    for mode in (cv2.THRESH_BINARY_INV, cv2.THRESH_BINARY):
        _, mask = cv2.threshold(grey, 0, 255, mode + cv2.THRESH_OTSU)
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        for contour in contours:
            area = cv2.contourArea(contour)
            if area < MIN_AREA * h * w:
                continue
            hull = cv2.convexHull(contour)
            if area / max(1.0, cv2.contourArea(hull)) < MIN_SOLIDITY:
                continue
            poly = cv2.approxPolyDP(hull, 0.03 * cv2.arcLength(hull, True), True)
            if len(poly) != 4:
                continue
            q = poly[:, 0, :].astype(np.float32)
            stray = max(abs(cv2.pointPolygonTest(q, (float(x), float(y)), True)) for x, y in contour[::3, 0])
            if stray > MAX_STRAY * np.sqrt(cv2.contourArea(q)):
                continue
            if (q < BORDER).any() or (q[:, 0] > w - 1 - BORDER).any() or (q[:, 1] > h - 1 - BORDER).any():
                continue
            sides = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
            a, b = sides[0] + sides[2], sides[1] + sides[3]
            if max(a, b) / max(1e-6, min(a, b)) > MAX_ASPECT:
                continue
            out.append(order_quad(q))
    return out


def rectify(image: npt.NDArray[np.uint8], quad: npt.NDArray[np.float32], turn: int) -> npt.NDArray[np.uint8]:
    """The card inside ``quad`` (clockwise) as a face of :data:`FACE_SIZE`, its first corner
    (``turn`` = 0) or second (``turn`` = 1) at the face's top-left."""
    w, h = FACE_SIZE
    dst = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    m = cv2.getPerspectiveTransform(np.roll(quad, -turn, axis=0), dst)
    return np.asarray(cv2.warpPerspective(image, m, (w, h), flags=cv2.INTER_AREA), np.uint8)


def _corner_share(xyxy: npt.NDArray[np.float32], pad: int) -> float:
    """Of boxes on a framed face, the share lying in its top-left or bottom-right third rather
    than its other two corners (which says the face stands upright, not on its side)."""
    w, h = FACE_SIZE
    cx = (xyxy[:, 0] + xyxy[:, 2]) / 2 - pad
    cy = (xyxy[:, 1] + xyxy[:, 3]) / 2 - pad
    left, right, top, bottom = cx < w / 3, cx > 2 * w / 3, cy < h / 3, cy > 2 * h / 3
    upright = int(((left & top) | (right & bottom)).sum())
    aside = int(((right & top) | (left & bottom)).sum())
    return upright / max(1, upright + aside)


def name_face(
    reader: Any, face: npt.NDArray[np.uint8], cards: Sequence[str], pad: int = 40
) -> tuple[str | None, float, float]:
    """Which of ``cards`` the rectified ``face`` is (None when none reaches :data:`NAME_FLOOR`),
    its probability, and the share of the reader's boxes in the upright corners (:func:`_corner_share`);
    ``reader`` shows the face in its deck's look."""
    from vision.classifier import proposals
    from vision.labels import class_id
    from vision.look import apply_look

    assert reader.classifier is not None
    framed = cv2.copyMakeBorder(face, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
    shown = apply_look(framed, reader.config.look)
    boxes = proposals(reader.localise(shown), reader.config.detector.det_conf)
    if len(boxes) == 0:
        return None, 0.0, 0.0
    boxes, p = reader.classifier.read(shown, boxes)
    best, prob = None, 0.0
    for card in set(cards):
        q = float(p[:, class_id(card)].max())
        if q > prob:
            best, prob = card, q
    return (best if prob >= NAME_FLOOR else None), prob, _corner_share(boxes.xyxy, pad)


def cut_faces(
    reader: Any,
    photos: Sequence[tuple[npt.NDArray[np.uint8], Sequence[str]]],
    log: Callable[[str], None] = print,
) -> list[PhotoFace]:
    """Every card lying whole and apart in ``photos`` (:func:`card_quads`), rectified upright and
    named among its photo's cards by ``reader`` (:func:`name_face`; a photo's card is named at most
    as often as it is listed). Raw colours (the reader's look is applied only to read them)."""
    out: list[PhotoFace] = []
    outlines = 0
    for k, (image, cards) in enumerate(photos):
        left = Counter(cards)
        found = []
        for quad in card_quads(image):
            outlines += 1
            best: tuple[float, float, str | None, npt.NDArray[np.uint8]] | None = None
            for turn in (0, 1):
                face = rectify(image, quad, turn)
                card, prob, upright = name_face(reader, face, [c for c in left if left[c] > 0])
                if best is None or (upright, prob) > (best[0], best[1]):
                    best = (upright, prob, card, face)
            assert best is not None
            upright, prob, card, face = best
            if card is not None and upright > 0.5:
                found.append((prob, card, face))
        for prob, card, face in sorted(found, key=lambda f: -f[0]):
            if left[card] > 0:
                left[card] -= 1
                out.append(PhotoFace(card, face, k, prob))
    log(
        f"  faces: {outlines} outlines in {len(photos)} photos, {len(out)} named "
        f"({len({f.card for f in out})} cards)"
    )
    return out


def index_box(reader: Any, faces: Sequence[PhotoFace], pad: int = 40) -> tuple[float, float, float, float]:
    """The deck's top-left index box (face pixels) as the reader's localiser boxes it on the cut
    faces: the median of its boxes in a face's top-left or (turned) bottom-right third."""
    from vision.classifier import proposals
    from vision.look import apply_look

    w, h = FACE_SIZE
    boxes = []
    for cut in faces:
        framed = cv2.copyMakeBorder(cut.face, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
        found = proposals(
            reader.localise(apply_look(framed, reader.config.look)), reader.config.detector.det_conf
        )
        for x1, y1, x2, y2 in found.xyxy - pad:
            cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
            if cx < w / 3 and cy < h / 3:
                boxes.append((x1, y1, x2, y2))
            elif cx > 2 * w / 3 and cy > 2 * h / 3:
                boxes.append((w - x2, h - y2, w - x1, h - y1))
    if not boxes:
        raise PhotoFacesError("the reader boxes no corner index on the faces cut from the photos")
    x1, y1, x2, y2 = np.median(np.array(boxes, np.float64), axis=0)
    return max(0.0, float(x1)), max(0.0, float(y1)), min(w / 2, float(x2)), min(h / 2, float(y2))


def face_bank(
    faces: Sequence[PhotoFace], box: tuple[float, float, float, float], look: str, device: Any = "cpu"
) -> Any:
    """The cut faces, shown in ``look``, as a :class:`models.gpu.FaceBank` (a card cut ``k`` times
    fills ``k`` decks' places; the places no face was cut for are left out), every face's index at
    ``box``."""
    from models.gpu import FaceBank
    from vision.labels import class_id
    from vision.look import apply_look

    if not faces:
        raise PhotoFacesError("no face was cut from the photos")
    w, h = FACE_SIZE
    copies = max(Counter(f.card for f in faces).values())
    arrays = np.zeros((54 * copies, 4, h, w), np.uint8)
    valid = np.zeros(54 * copies, bool)
    seen: Counter[str] = Counter()
    for cut in faces:
        k = 54 * seen[cut.card] + class_id(cut.card)
        seen[cut.card] += 1
        shown = apply_look(cut.face, look)
        arrays[k] = np.dstack([shown, np.full((h, w), 255, np.uint8)]).transpose(2, 0, 1)
        valid[k] = True
    x1, y1, x2, y2 = box
    boxes = np.tile(np.array([x1 / w, y1 / h, x2 / w, y2 / h], np.float32), (len(valid), 1))
    return FaceBank(arrays, boxes, valid, device)


def save_faces(folder: Path, faces: Sequence[PhotoFace]) -> None:
    """Write the cut faces as ``folder/photo-faces/CARD-K.png`` and their contact sheet as
    ``folder/photo-faces.png`` (for a person to check the names)."""
    out = folder / "photo-faces"
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.png"):
        old.unlink()
    seen: Counter[str] = Counter()
    for cut in faces:
        cv2.imwrite(str(out / f"{cut.card}-{seen[cut.card]}.png"), cut.face)
        seen[cut.card] += 1
    from calibration.enroll import contact_sheet

    order = {card: k for k, card in enumerate(CARD_NAMES)}
    cv2.imwrite(str(folder / "photo-faces.png"), contact_sheet(sorted(faces, key=lambda f: order[f.card])))


def load_faces(folder: Path) -> list[PhotoFace]:
    """The faces :func:`save_faces` wrote (none when there are none)."""
    out = []
    for path in sorted((folder / "photo-faces").glob("*-*.png")):
        face = cv2.imread(str(path))
        if face is not None and face.shape[:2] == (FACE_SIZE[1], FACE_SIZE[0]):
            out.append(PhotoFace(path.stem.rsplit("-", 1)[0], face, -1, 1.0))
    return out


def composed_tiles(
    faces: Sequence[PhotoFace],
    box: tuple[float, float, float, float],
    n: int,
    tile: int,
    seed: int = 0,
    index_px: tuple[float, float] = (7.0, 48.0),
) -> list[tuple[npt.NDArray[np.uint8], list[tuple[float, float, float, float]]]]:
    """``n`` localiser tiles (raw colours) composed from the cut faces (:func:`models.facetiles.compose_tile`:
    single cards, fans, rows and piles on table textures and bare surfaces, the index ``index_px``
    tall), each with its index boxes as YOLO shares of the tile."""
    from models.facetiles import FaceTileSettings, compose_tile
    from models.synth.faces import FaceSet

    w, h = FACE_SIZE
    copies: dict[int, dict[str, npt.NDArray[np.uint8]]] = {}
    seen: Counter[str] = Counter()
    for cut in faces:
        copies.setdefault(seen[cut.card], {})[cut.card] = np.dstack(
            [cut.face, np.full((h, w), 255, np.uint8)]
        )
        seen[cut.card] += 1
    back = np.dstack([np.full((h, w, 3), 20, np.uint8), np.full((h, w), 255, np.uint8)])
    sets = [FaceSet("photo", d, back, box) for d in copies.values()]
    settings = FaceTileSettings(tile=tile, index_px=index_px, bare_share=0.5, face_down_share=0.15)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        image, labels = compose_tile(rng, sets, settings)
        out.append(
            (
                image,
                [
                    ((x1 + x2) / 2 / tile, (y1 + y2) / 2 / tile, (x2 - x1) / tile, (y2 - y1) / tile)
                    for _, (x1, y1, x2, y2) in labels
                ],
            )
        )
    return out
