"""The faces step's matching: an enrolled deck's art cards found by their whole face (SIFT keypoints
located by a RANSAC similarity, :meth:`FaceMatcher.match`); looking for them under other cards by
their visible strip is :mod:`vision.faces.under`'s (:class:`UnderSearch`, which the matcher owns and
hands the cards it found)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from copy import copy as shallow_copy
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from engine.cards import JOKER_NAMES, may_be_same, parse_any
from vision.faces.found import ART_CARDS, FaceMatch
from vision.faces.under import UnderSearch
from vision.instances import CardInstance
from vision.labels import CARD_CLASSES
from vision.settings import SHIPPED

__all__ = [
    "ART_CARDS",
    "PROBE_CLOTH",
    "PROBE_TURNS",
    "FaceMatch",
    "FaceMatchConfig",
    "FaceMatcher",
    "FaceMatcherError",
    "corner_named",
]


class FaceMatcherError(ValueError):
    """An enrolled deck's faces folder that lacks an art face (one line)."""


@dataclass(frozen=True)
class FaceMatchConfig:
    """Settings of :class:`FaceMatcher`.

    ``template_h``: the height (pixels) the faces are described at (SIFT finds them at other sizes);
    ``image_scale``: the image read is described at this share of its size (SIFT doubles an image
    first, so half the zone reader's 2 px/mm loses little and costs a quarter);
    ``ratio``: Lowe's ratio test (the best face keypoint's distance under this share of the second
    best's); ``ransac_px``: how far (pixels of the image read) a match may lie from where the
    similarity puts it; ``min_matches``: matches that must agree on a location; ``size_tolerance``:
    how far (a share) each side of the face's outline may differ from the card's size in pixels
    (when given) and, always, from the face's proportions; ``same_card``: two locations whose
    middles lie within this share of the card's width are one card (the better kept);
    ``neighbours``: face keypoints looked at per
    image keypoint; ``max_tries``: locations tried per face (one refused as no card is set aside
    and the next tried); ``colour_margin``: twins are told apart when the nearest in colour is at
    most this share of the next's distance; ``twin_chroma``: how far apart (Lab a + b) twins'
    colours must be at a pixel for it to be one that tells them apart; ``resemblance``: the least
    normalised cross-correlation, over the whole outline, between a face located by its keypoints
    and what lies there (a few matches can agree by chance on repeated signs: a joker whose art is
    made of suit signs, located on a three of spades, correlates about 0.06 with it, while a card
    half under another still correlates 0.4).

    A **covered copy** (:meth:`UnderSearch.covered_copies`) is looked for under each card found, at
    ``covered_h`` pixels a face: the copy's visible strip must correlate with the face at least
    ``covered_ncc`` (normalised cross-correlation), ``covered_margin`` above every other face of the
    deck at that place; between ``covered_visible`` (shares of the face) of it showing, its middle
    at least ``covered_shift`` of a card's width from the top card's, turned by one of
    ``covered_turns`` (degrees) from it. Faces that come within ``covered_margin`` at that size
    (another court of the same art, whose index alone differs) are judged again at ``covered_fine``
    times the size, where what tells them apart shows: the copy stands when the face beats each of
    them there by ``covered_margin``.

    An **art card under another card** is looked for round each card found and each card its
    corners named (:meth:`UnderSearch.locate`: its face slid round where its corners lie, turned in
    steps of ``locate_turn`` degrees, ``locate_reach`` pixels of the face's size either way;
    located where it correlates at least ``locate_ncc``). Every face of the deck is tried there,
    either way up, where ``under_core`` of the face shows 2 pixels or more from anything hidden (a
    strip, not a sliver along the card's edge); the ``under_candidates`` that fit best lying square
    to the card over them, within ``covered_margin`` of ``covered_ncc``, are turned as a copy is.
    The best must be an art card the decks hold another of and the deck's corners do not name
    (:func:`corner_named`; or the twin of the card over it), stand as a copy does, and show the
    contrast and brightness its face has in the light of the card over it (``under_contrast``,
    ``under_offset``: :meth:`UnderSearch._same_light`), and its outline must show where it is not
    hidden, a step in brightness at least ``under_edge`` of the step round the card over it
    (:meth:`UnderSearch._outlined`); a covered copy must show both too.

    >>> FaceMatchConfig(min_matches=3)
    Traceback (most recent call last):
    ...
    vision.faces.matcher.FaceMatcherError: min_matches must be at least 4, got 3
    """

    template_h: int = SHIPPED.faces.template_h
    ratio: float = SHIPPED.faces.ratio
    ransac_px: float = SHIPPED.faces.ransac_px
    min_matches: int = SHIPPED.faces.min_matches
    size_tolerance: float = SHIPPED.faces.size_tolerance
    same_card: float = SHIPPED.faces.same_card
    neighbours: int = SHIPPED.faces.neighbours
    image_scale: float = SHIPPED.faces.image_scale
    max_tries: int = SHIPPED.faces.max_tries
    colour_margin: float = SHIPPED.faces.colour_margin
    twin_chroma: float = SHIPPED.faces.twin_chroma
    resemblance: float = SHIPPED.faces.resemblance
    covered_h: int = SHIPPED.faces.covered_h
    covered_ncc: float = SHIPPED.faces.covered_ncc
    covered_margin: float = SHIPPED.faces.covered_margin
    covered_visible: tuple[float, float] = SHIPPED.faces.covered_visible
    covered_shift: float = SHIPPED.faces.covered_shift
    covered_turns: tuple[float, ...] = SHIPPED.faces.covered_turns
    covered_fine: int = SHIPPED.faces.covered_fine
    locate_turn: float = SHIPPED.faces.locate_turn
    locate_reach: int = SHIPPED.faces.locate_reach
    locate_ncc: float = SHIPPED.faces.locate_ncc
    under_candidates: int = SHIPPED.faces.under_candidates
    under_core: float = SHIPPED.faces.under_core
    under_contrast: tuple[float, float] = SHIPPED.faces.under_contrast
    under_offset: float = SHIPPED.faces.under_offset
    under_edge: float = SHIPPED.faces.under_edge

    def __post_init__(self) -> None:
        if self.min_matches < 4:
            raise FaceMatcherError(f"min_matches must be at least 4, got {self.min_matches}")
        if not 0 < self.ratio <= 1:
            raise FaceMatcherError(f"ratio must lie in (0, 1], got {self.ratio}")


#: How :func:`corner_named` lays the art faces: turned by these degrees, each a reading.
PROBE_TURNS: tuple[float, ...] = (0.0, 180.0, 15.0, -15.0)
#: The plain cloth :func:`corner_named` lays them on (BGR).
PROBE_CLOTH: tuple[int, int, int] = (60, 95, 45)


def corner_named(
    faces: Mapping[str, npt.NDArray[np.uint8]],
    read: Callable[[npt.NDArray[np.uint8]], Sequence[CardInstance]],
    card_size_px: tuple[float, float],
    turns: Sequence[float] = PROBE_TURNS,
) -> frozenset[str]:
    """The art cards (:data:`ART_CARDS`) of ``faces`` (BGR) that a reading by the corners alone names
    (``read``: the reader without its faces step): the faces are laid apart on a plain cloth
    (:data:`PROBE_CLOTH`), each ``card_size_px`` (width, height), turned by each of ``turns`` in
    turn; a card is named when every reading names, over its face, that card and nothing it cannot
    be (a court card that prints only a suit sign in its corner is not; an index read only as a
    rank, a suit or ``??`` beside it is no other card).

    >>> named = corner_named({"KS": np.zeros((88, 63, 3), np.uint8)}, lambda image: [], (63.0, 88.0))
    >>> named
    frozenset()
    """
    w, h = card_size_px
    cards = [c for c in ART_CARDS if c in faces]
    if not cards:
        return frozenset()
    cell = int(math.ceil(1.3 * math.hypot(w, h)))  # a turned card and a gap round it
    cols = min(5, len(cards))
    rows = -(-len(cards) // cols)
    size = (int(round(w)), int(round(h)))
    small = {c: cv2.resize(faces[c][..., :3], size, interpolation=cv2.INTER_AREA) for c in cards}
    named = set(cards)
    for turn in turns:
        canvas = np.empty((rows * cell, cols * cell, 3), np.uint8)
        canvas[:] = PROBE_CLOTH
        for i, card in enumerate(cards):
            row, col = divmod(i, cols)
            m = cv2.getRotationMatrix2D((size[0] / 2, size[1] / 2), turn, 1.0)
            m[:, 2] += np.array([(col + 0.5) * cell - size[0] / 2, (row + 0.5) * cell - size[1] / 2])
            cv2.warpAffine(
                small[card],
                m,
                (canvas.shape[1], canvas.shape[0]),
                dst=canvas,
                flags=cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_TRANSPARENT,
            )
        got = list(read(canvas))
        for i, card in enumerate(cards):
            row, col = divmod(i, cols)
            here = [
                k.card
                for k in got
                if col * cell <= (k.box[0] + k.box[2]) / 2 < (col + 1) * cell
                and row * cell <= (k.box[1] + k.box[3]) / 2 < (row + 1) * cell
            ]
            if parse_any(card) not in here or not all(may_be_same(name, parse_any(card)) for name in here):
                named.discard(card)
    return frozenset(named)


class FaceMatcher:
    """Finds an enrolled deck's art cards (:data:`ART_CARDS`) in an image by their whole face.

    An image keypoint is matched when its nearest face keypoint is clearly nearer than the nearest
    one that would tell another story (Lowe's ratio test), and every face keypoint that tells the
    same story as the nearest, about as near, is a match too: the same face's keypoint half a turn
    round (most court cards are printed twice, head to foot), or a keypoint of a face whose art
    differs only in colour (a deck's two jokers, often: *twin* faces, found when the faces are
    described). Each face's matches are located by RANSAC. A card found as a face with twins is
    the twin clearly nearest in colour to the image cut in the face's frame (else a joker of unknown
    size, ``?J``, or, for other twins, nothing: the corners' reading stands)."""

    def __init__(
        self,
        faces: dict[str, npt.NDArray[np.uint8]],
        config: FaceMatchConfig | None = None,
        deck: dict[str, npt.NDArray[np.uint8]] | None = None,
    ) -> None:
        """``faces``: the art faces to find; ``deck``: every face of the deck (the art faces among
        them), which a covered copy must resemble less than its own face (None: no covered copies
        are looked for)."""
        self.config = config or FaceMatchConfig()
        self.art = dict(faces)  # as given, for :func:`corner_named`
        self.sift = cv2.SIFT_create()  # type: ignore[attr-defined]
        self.cards: list[str] = []
        self.colour: list[npt.NDArray[np.uint8]] = []  # each face as described, BGR
        points, descriptors, owners = [], [], []
        for card, face in faces.items():
            bgr = face if face.ndim == 3 else cv2.cvtColor(face, cv2.COLOR_GRAY2BGR)
            h = self.config.template_h
            w = max(8, int(round(bgr.shape[1] * h / bgr.shape[0])))
            small = np.asarray(cv2.resize(bgr, (w, h), interpolation=cv2.INTER_AREA), np.uint8)
            keypoints, desc = self.sift.detectAndCompute(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), None)
            if desc is None or len(keypoints) < self.config.min_matches:
                continue  # a face too plain to be found by its art (its corners still read it)
            points.append(np.array([k.pt for k in keypoints], np.float32))
            descriptors.append(desc)
            owners.append(np.full(len(keypoints), len(self.cards), np.int64))
            self.cards.append(card)
            self.colour.append(small)
        self.points = np.concatenate(points) if points else np.zeros((0, 2), np.float32)
        self.descriptors = np.concatenate(descriptors) if descriptors else np.zeros((0, 128), np.float32)
        self.owners = np.concatenate(owners) if owners else np.zeros(0, np.int64)
        self.matcher = cv2.BFMatcher(cv2.NORM_L2)
        self.twins = self._twin_faces()
        self.chroma = [_chroma(face) for face in self.colour]  # for telling twins apart
        self.blurred_grey = [  # for :meth:`resembles`
            cv2.GaussianBlur(cv2.cvtColor(face, cv2.COLOR_BGR2GRAY).astype(np.float32), (0, 0), 1.0)
            for face in self.colour
        ]
        self.differ = self._where_twins_differ()
        self.deck_grey: dict[str, npt.NDArray[np.float32]] = {}
        self.fine_grey: dict[str, npt.NDArray[np.float32]] = {}  # the same at ``covered_fine`` times
        if deck is not None and self.cards:
            fh, fw = self.colour[0].shape[:2]
            for out, h in (
                (self.deck_grey, self.config.covered_h),
                (self.fine_grey, self.config.covered_h * self.config.covered_fine),
            ):
                size = (max(8, int(round(fw * h / fh))), h)
                for card, face in deck.items():
                    grey = face if face.ndim == 2 else cv2.cvtColor(face, cv2.COLOR_BGR2GRAY)
                    small = cv2.resize(grey, size, interpolation=cv2.INTER_AREA).astype(np.float32)
                    out[card] = np.asarray(cv2.GaussianBlur(small, (0, 0), 1.0), np.float32)
        #: looking under other cards (:mod:`vision.faces.under`), with the deck's faces in grey
        self.under = UnderSearch(self.config, self.deck_grey, self.fine_grey, self.cards, self.twins)

    @classmethod
    def from_folder(cls, faces_dir: Path, config: FaceMatchConfig | None = None) -> FaceMatcher:
        """The art faces of ``faces_dir`` (``CARD.png`` as ``tractorcam enroll`` writes them)."""
        faces: dict[str, npt.NDArray[np.uint8]] = {}
        for card in ART_CARDS:
            image = cv2.imread(str(Path(faces_dir) / f"{card}.png"), cv2.IMREAD_COLOR)
            if image is None:
                raise FaceMatcherError(f"{faces_dir}: no readable {card}.png (tractorcam enroll)")
            faces[card] = np.asarray(image, np.uint8)
        deck = dict(faces)
        for card in CARD_CLASSES:
            if card not in deck:
                image = cv2.imread(str(Path(faces_dir) / f"{card}.png"), cv2.IMREAD_COLOR)
                if image is None:
                    return cls(faces, config)  # an incomplete deck: no covered copies looked for
                deck[card] = np.asarray(image, np.uint8)
        return cls(faces, config, deck)

    def _twin_faces(self) -> npt.NDArray[np.bool_]:
        """Which faces tell the same story in grey (F × F, each face its own twin): a face is
        another's twin when a quarter or more of its keypoints have their nearest other-face
        keypoint there, passing the ratio test."""
        n = len(self.cards)
        twins = np.eye(n, dtype=bool)
        for face in range(n):
            mine = self.owners == face
            others = np.flatnonzero(~mine)
            if len(others) < 2:
                continue
            pairs = self.matcher.knnMatch(self.descriptors[mine], self.descriptors[others], k=2)
            hits = [
                int(self.owners[others[a.trainIdx]])
                for a, b in (p for p in pairs if len(p) == 2)
                if a.distance < self.config.ratio * b.distance
            ]
            counts = np.bincount(np.array(hits, np.int64), minlength=n) if hits else np.zeros(n, np.int64)
            twins[face] |= counts >= 0.25 * int(mine.sum())
        return twins | twins.T

    def match(
        self,
        image: npt.NDArray[np.uint8],
        card_size_px: tuple[float, float] | None = None,
        decks: int | None = None,
        read: Sequence[CardInstance] = (),
    ) -> list[FaceMatch]:
        """The art cards in ``image`` (BGR), best first, one per card (``card_size_px``: a card's
        width and height in pixels, when the table gives it), with the cards found partly under
        them and under the cards of ``read`` (the corners' readings) the corners named, where the
        game's ``decks`` hold another of that card (None: not known; :meth:`covered_copies`); and,
        last, the cards of ``read`` located to look under them (:attr:`FaceMatch.located`): the
        keypoints' cards handed to :meth:`UnderSearch.search`."""
        if not self.cards:
            return []
        bgr = np.asarray(image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR), np.uint8)
        grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
        full = np.asarray(grey, np.float32)  # for :meth:`resembles`, at the image's own size
        if self.config.image_scale != 1.0:
            grey = cv2.resize(
                grey,
                None,
                fx=self.config.image_scale,
                fy=self.config.image_scale,
                interpolation=cv2.INTER_AREA,
            )
        keypoints, desc = self.sift.detectAndCompute(grey, None)
        if desc is None or len(keypoints) < self.config.min_matches:
            return []
        where = np.array([k.pt for k in keypoints], np.float32) / self.config.image_scale
        face_of, train, query = self._matches(desc)
        found: list[tuple[int, FaceMatch, npt.NDArray[np.float64]]] = []
        for face in np.unique(face_of):
            mine = face_of == face
            src, dst = self.points[train[mine]], where[query[mine]]
            left = np.ones(len(src), bool)
            for _ in range(self.config.max_tries):
                if left.sum() < self.config.min_matches:
                    break
                m, inliers = cv2.estimateAffinePartial2D(
                    src[left], dst[left], method=cv2.RANSAC, ransacReprojThreshold=self.config.ransac_px
                )
                if m is None:
                    break
                agree = inliers.ravel().astype(bool)
                if int(agree.sum()) < self.config.min_matches:
                    break
                left[np.flatnonzero(left)[agree]] = False  # explained: the search goes on without them
                h = np.vstack([np.asarray(m, np.float64), [0.0, 0.0, 1.0]])
                fh, w = self.colour[face].shape[:2]
                corners = np.array([[0, 0, 1], [w, 0, 1], [w, fh, 1], [0, fh, 1]], np.float64)
                quad = corners @ h[:2].T
                if self._card_like(int(face), quad, card_size_px) and self.resembles(int(face), h, full):
                    found.append((int(face), FaceMatch(self.cards[face], int(agree.sum()), quad), h))
        cards = self._one_each(found, bgr)
        return self.under.search(cards, bgr, full, card_size_px, decks, read)

    @property
    def corner_named(self) -> frozenset[str]:
        """The art cards the deck's corners name (:func:`corner_named`; :attr:`UnderSearch.corner_named`)."""
        return self.under.corner_named

    def with_corner_named(self, named: frozenset[str]) -> FaceMatcher:
        """The same matcher, knowing which art cards the deck's corners name (:attr:`corner_named`)."""
        out = shallow_copy(self)
        out.under = self.under.with_corner_named(named)
        return out

    def _matches(
        self, desc: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The matches of the image's keypoints (class docstring): each as (face, face keypoint,
        image keypoint), in three arrays."""
        k = min(self.config.neighbours, len(self.descriptors))
        pairs = self.matcher.knnMatch(desc, self.descriptors, k=k)
        rows = [p for p in pairs if len(p) == k]
        if not rows:
            empty = np.zeros(0, np.int64)
            return empty, empty, empty
        dist = np.array([[m.distance for m in p] for p in rows], np.float64)
        train = np.array([[m.trainIdx for m in p] for p in rows], np.int64)
        query = np.array([p[0].queryIdx for p in rows], np.int64)
        face = self.owners[train]
        same = self.twins[face[:, :1], face]  # the neighbours that tell the nearest's story
        other = np.where(same, np.inf, dist).min(axis=1)  # the nearest other story (none: inf)
        taken = same & (dist < self.config.ratio * other[:, None])
        taken &= taken[:, :1]  # the nearest itself must pass
        i, j = np.nonzero(taken)
        return face[i, j], train[i, j], query[i]

    def resembles(self, face: int, to_image: npt.NDArray[np.float64], grey: npt.NDArray[np.float32]) -> bool:
        """Whether face ``face``, placed by ``to_image`` (3 × 3, face pixels → image), correlates
        with the ``grey`` image under it at least ``resemblance`` (see :class:`FaceMatchConfig`),
        over the part of the outline inside the image (a card mostly outside it is not judged)."""
        fh, fw = self.colour[face].shape[:2]
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        seen = cv2.warpAffine(grey, to_image[:2], (fw, fh), flags=flags)
        inside = cv2.warpAffine(np.ones_like(grey), to_image[:2], (fw, fh), flags=flags) > 0.99
        if inside.mean() < 0.25:
            return True
        a, b = cv2.GaussianBlur(seen, (0, 0), 1.0)[inside], self.blurred_grey[face][inside]
        ncc = float(((a - a.mean()) * (b - b.mean())).mean() / (a.std() * b.std() + 1e-6))
        return ncc >= self.config.resemblance

    def _card_like(
        self, face: int, quad: npt.NDArray[np.float64], card_size_px: tuple[float, float] | None
    ) -> bool:
        """Whether a face's outline could be a card lying on the table (see :class:`FaceMatchConfig`)."""
        if not cv2.isContourConvex(quad.astype(np.float32)):
            return False
        sides = np.linalg.norm(quad - np.roll(quad, -1, axis=0), axis=1)  # top, right, bottom, left
        tol = self.config.size_tolerance
        width, height = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
        if min(width, height) < 8:
            return False
        if abs(sides[0] / sides[2] - 1) > tol or abs(sides[1] / sides[3] - 1) > tol:
            return False  # opposite sides unequal: seen far too askew to be a card lying flat
        fh, fw = self.colour[face].shape[:2]
        if abs((width / height) / (fw / fh) - 1) > tol:
            return False
        if card_size_px is not None:
            expected = np.array(card_size_px, np.float64)
            if np.any(np.abs(np.array([width, height]) / expected - 1) > tol):
                return False
        return True

    def _where_twins_differ(self) -> list[npt.NDArray[np.bool_] | None]:
        """For each face with twins, where on the face a twin differs from it in colour once the
        twin is laid onto it (a similarity fitted to their matching keypoints: twins' art may sit
        a little apart on their faces): chroma apart by more than ``twin_chroma``, widened by a
        pixel. These are the only pixels that tell twins apart. None for a face without twins, or
        whose twins differ hardly anywhere (the whole face is compared then)."""
        out: list[npt.NDArray[np.bool_] | None] = []
        for face in range(len(self.cards)):
            fh, fw = self.chroma[face].shape[:2]
            mask = np.zeros((fh, fw), bool)
            for g in np.flatnonzero(self.twins[face]):
                if g == face:
                    continue
                onto = self._align(int(g), face)
                if onto is None:
                    continue
                laid = cv2.warpAffine(
                    self.chroma[g].astype(np.float32), onto, (fw, fh), flags=cv2.INTER_LINEAR
                )
                inside = cv2.warpAffine(np.ones(self.chroma[g].shape[:2], np.uint8), onto, (fw, fh)) > 0
                mask |= inside & (np.abs(self.chroma[face] - laid).sum(-1) > self.config.twin_chroma)
            mask = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
            out.append(mask if mask.mean() >= 0.002 else None)
        return out

    def _align(self, g: int, face: int) -> npt.NDArray[np.float64] | None:
        """The similarity that lays face ``g`` onto ``face`` (2 × 3), from their keypoints' nearest
        matches and RANSAC; None when too few agree."""
        mine, theirs = self.owners == face, self.owners == g
        pairs = self.matcher.knnMatch(self.descriptors[theirs], self.descriptors[mine], k=2)
        good = [p[0] for p in pairs if len(p) == 2 and p[0].distance < self.config.ratio * p[1].distance]
        if len(good) < self.config.min_matches:
            return None
        src = self.points[theirs][[m.queryIdx for m in good]]
        dst = self.points[mine][[m.trainIdx for m in good]]
        m, inliers = cv2.estimateAffinePartial2D(
            src, dst, method=cv2.RANSAC, ransacReprojThreshold=self.config.ransac_px
        )
        if m is None or int(inliers.sum()) < self.config.min_matches:
            return None
        return np.asarray(m, np.float64)

    def _colour_distance(self, face: int, h: npt.NDArray[np.float64], image: npt.NDArray[np.uint8]) -> float:
        """How far the image, cut in the located face's frame by ``h``, lies in colour from ``face``
        (its face turned either way up): the mean absolute difference of their chroma (Lab's a and
        b, each less its median, so a colour cast of the light counts for nothing), both smoothed
        over a few pixels so a pixel's misplacement does not count either; only where the face's
        twins differ from it (:meth:`_where_twins_differ`), when that is known."""
        fh, fw = self.colour[face].shape[:2]
        cut = np.asarray(
            cv2.warpPerspective(image, h, (fw, fh), flags=cv2.WARP_INVERSE_MAP | cv2.INTER_LINEAR), np.uint8
        )
        mine, theirs = _chroma(cut), self.chroma[face]
        mask = self.differ[face]
        if mask is None or mine.shape != theirs.shape:
            return float(min(np.abs(mine - theirs).mean(), np.abs(mine - theirs[::-1, ::-1]).mean()))
        upright = np.abs(mine - theirs)[mask].mean()
        turned = np.abs(mine - theirs[::-1, ::-1])[mask[::-1, ::-1]].mean()
        return float(min(upright, turned))

    def _one_each(
        self, found: list[tuple[int, FaceMatch, npt.NDArray[np.float64]]], image: npt.NDArray[np.uint8]
    ) -> list[FaceMatch]:
        """One card per place: the locations with the most matches first, each taking the weaker
        ones on its card; a card whose face has twins (:meth:`_twin_faces`) is the twin nearest in
        colour (:meth:`_colour_distance`)."""
        order = sorted(found, key=lambda f: -f[1].matches)
        out: list[FaceMatch] = []
        for face, best, h in order:
            if any(
                float(np.linalg.norm(best.centre - k.centre)) <= self.config.same_card * k.width()
                for k in out
            ):
                continue
            twins = np.flatnonzero(self.twins[face])
            if len(twins) > 1:
                # each twin cut where its own keypoints put it here (twins' art may sit a little
                # apart on their faces), else where the best location's do
                frame = {int(g): h for g in twins}
                for g in twins:
                    own = [
                        (k.matches, hh)
                        for f, k, hh in found
                        if f == g
                        and float(np.linalg.norm(best.centre - k.centre))
                        <= self.config.same_card * best.width()
                    ]
                    if own:
                        frame[int(g)] = max(own, key=lambda o: o[0])[1]
                far = sorted(
                    (self._colour_distance(int(g), frame[int(g)], image), self.cards[g]) for g in twins
                )
                if far[0][0] <= self.config.colour_margin * far[1][0]:
                    card = far[0][1]
                elif all(self.cards[g] in JOKER_NAMES for g in twins):
                    card = "?J"  # a joker, but which the colours do not say
                else:
                    continue  # twins the colours do not tell apart: the corners' reading stands
                best = FaceMatch(card, best.matches, best.quad)
            out.append(best)
        return out


def _chroma(bgr: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
    """Lab's a and b of an image smoothed over a few pixels, each less its median (a colour cast of
    the light counts for nothing)."""
    lab = cv2.cvtColor(cv2.GaussianBlur(bgr, (0, 0), 2.0), cv2.COLOR_BGR2LAB)[..., 1:].astype(np.float64)
    return np.asarray(lab - np.median(lab.reshape(-1, 2), axis=0), np.float64)
