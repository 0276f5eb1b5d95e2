"""The faces step's matching: an enrolled deck's art cards found by their whole face (SIFT keypoints
located by a RANSAC similarity, :meth:`FaceMatcher.match`), and looked for under other cards by their
visible strip (:meth:`FaceMatcher.covered_copies`, with :mod:`vision.faces.ncc`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from copy import copy as shallow_copy
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from engine.cards import JOKER_NAMES, may_be_same, parse_any
from vision.faces.ncc import best_place, masked_ncc, masked_nccs, ncc_near, near, turned, whole_ncc
from vision.instances import CardInstance
from vision.labels import CARD_CLASSES, SUITS
from vision.settings import SHIPPED

#: The cards whose art is matched: the court cards (suit by suit) and the two jokers.
ART_CARDS: tuple[str, ...] = tuple(f"{rank}{suit}" for suit in SUITS for rank in "JQK") + JOKER_NAMES


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

    A **covered copy** (:meth:`FaceMatcher.covered_copies`) is looked for under each card found, at
    ``covered_h`` pixels a face: the copy's visible strip must correlate with the face at least
    ``covered_ncc`` (normalised cross-correlation), ``covered_margin`` above every other face of the
    deck at that place; between ``covered_visible`` (shares of the face) of it showing, its middle
    at least ``covered_shift`` of a card's width from the top card's, turned by one of
    ``covered_turns`` (degrees) from it. Faces that come within ``covered_margin`` at that size
    (another court of the same art, whose index alone differs) are judged again at ``covered_fine``
    times the size, where what tells them apart shows: the copy stands when the face beats each of
    them there by ``covered_margin``.

    An **art card under another card** is looked for round each card found and each card its
    corners named (:meth:`FaceMatcher.locate`: its face slid round where its corners lie, turned in
    steps of ``locate_turn`` degrees, ``locate_reach`` pixels of the face's size either way;
    located where it correlates at least ``locate_ncc``). Every face of the deck is tried there,
    either way up, where ``under_core`` of the face shows 2 pixels or more from anything hidden (a
    strip, not a sliver along the card's edge); the ``under_candidates`` that fit best lying square
    to the card over them, within ``covered_margin`` of ``covered_ncc``, are turned as a copy is.
    The best must be an art card the decks hold another of and the deck's corners do not name
    (:func:`corner_named`; or the twin of the card over it), stand as a copy does, and show the
    contrast and brightness its face has in the light of the card over it (``under_contrast``,
    ``under_offset``: :meth:`FaceMatcher._same_light`), and its outline must show where it is not
    hidden, a step in brightness at least ``under_edge`` of the step round the card over it
    (:meth:`FaceMatcher._outlined`); a covered copy must show both too.

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


@dataclass(frozen=True)
class FaceMatch:
    """One card found by its face: the card, how many matches agree on it, and the face's outline in
    the image (4 × 2, the face's top-left, top-right, bottom-right, bottom-left corners); ``covered``:
    found from the strip of it that shows under another card (:meth:`FaceMatcher.covered_copies`);
    ``located``: a card its corners named, located by its face (:meth:`FaceMatcher.locate`) to look
    under it, which :func:`place_faces` does not add (its corners' reading stands)."""

    card: str
    matches: int
    quad: npt.NDArray[np.float64]
    covered: bool = False
    located: bool = False

    @property
    def centre(self) -> npt.NDArray[np.float64]:
        """The middle of the card."""
        return np.asarray(self.quad.mean(axis=0), np.float64)

    @property
    def box(self) -> tuple[float, float, float, float]:
        """The axis-aligned box round the card (x1, y1, x2, y2)."""
        lo, hi = self.quad.min(axis=0), self.quad.max(axis=0)
        return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))

    @property
    def score(self) -> float:
        """A confidence from the number of agreeing matches: ``m / (m + 4)`` (12 → 0.75, 36 → 0.9).

        >>> FaceMatch("KS", 36, np.zeros((4, 2))).score
        0.9
        """
        return self.matches / (self.matches + 4)

    def index_points(self) -> npt.NDArray[np.float64]:
        """Where a corner index's middle lies on this card: a tenth of the card in from each corner
        (4 × 2), the places a corner reading of this card puts its box."""
        q = self.quad
        pts = []
        for a, b in ((0.1, 0.1), (0.9, 0.1), (0.9, 0.9), (0.1, 0.9)):  # across, down
            top, bottom = q[0] + a * (q[1] - q[0]), q[3] + a * (q[2] - q[3])
            pts.append(top + b * (bottom - top))
        return np.array(pts, np.float64)

    def width(self) -> float:
        """The card's shorter side in pixels (the mean of the face's top and bottom edges)."""
        q = self.quad
        return float((np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2)


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
        #: the art cards the deck's corners name (:func:`corner_named`): none is looked for under
        #: another card but a twin of it (:meth:`_under`); empty: every art card is
        self.corner_named: frozenset[str] = frozenset()
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
        self._turned_faces: dict[
            tuple[str, float, bool],
            tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float64]],
        ] = {}
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
        last, the cards of ``read`` located to look under them (:attr:`FaceMatch.located`)."""
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
        if not self.deck_grey:
            return cards
        tops: list[FaceMatch] = []
        named = [c for c in read if str(c.card) in self.deck_grey and self._under(str(c.card))]
        if card_size_px is not None and named:
            shrunk = self._shrunk(full, card_size_px)
            for card in named:
                if any(
                    float(np.linalg.norm(k.centre - (np.array(card.box[:2]) + card.box[2:]) / 2))
                    <= self.config.same_card * k.width()
                    for k in cards
                ):
                    continue  # found by its face already
                top = self.locate(str(card.card), card.box, card.corners, *shrunk)
                if top is not None:
                    tops.append(top)
        return self.covered_copies(cards, bgr, decks, tops) + tops

    def covered_copies(
        self,
        found: list[FaceMatch],
        image: npt.NDArray[np.uint8],
        decks: int | None = None,
        tops: Sequence[FaceMatch] = (),
    ) -> list[FaceMatch]:
        """``found`` and, after it, the cards found partly under another: under each card found,
        its covered copy (:meth:`covered_copy`), while fewer than ``decks`` of that card are found
        (a game of one deck has no copy to find; None: not known); and under each card found and
        each of ``tops`` (cards the corners named, located by :meth:`locate`), an art card of
        another name (:meth:`covered_art`). A card found under another is looked under in turn,
        with every card it lies under masked out too, and none is taken where a card found
        already lies, or a card the corners named but its own.

        A pair of court cards is often laid as a fan, one card over the other, and too little of the
        lower one shows for its keypoints to locate it. What shows is the same face, a little
        shifted and turned: each card found is cut out of the image with a margin in its own frame
        (its face upright), and its face is slid over what lies round it, the card itself masked
        out; where the visible strip correlates well with the face, and clearly better than with any
        other face of the deck, a copy lies there. A court card or a joker fanned under a number
        card, or under a court of another name, is found the same way, from the art faces."""
        grey = np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image, np.float32)
        out = list(found)
        todo: list[tuple[FaceMatch, tuple[FaceMatch, ...]]] = [(top, ()) for top in [*found, *tops]]
        explained: dict[int, npt.NDArray[np.bool_]] = {}

        def free(card: FaceMatch, top: FaceMatch) -> bool:
            """No card found lies where ``card`` does, nor a card the corners named other than
            ``card`` itself (a fanned pair's lower card, its corners read too, is found again)."""
            return not any(
                float(np.linalg.norm(card.centre - k.centre)) <= self.config.same_card * k.width()
                for k in [*out, *tops]
                if k is not top and not (k.located and k.card == card.card)
            )

        while todo:
            top, above = todo.pop(0)
            if top.card not in self.deck_grey:
                continue  # a joker of unknown size

            def seen(
                top: FaceMatch = top, above: tuple[FaceMatch, ...] = above, for_copy: bool = False
            ) -> npt.NDArray[np.bool_]:
                """What shows of the other cards known round ``top`` (:meth:`_explained`); for
                its copy, not of a card its corners named and located with ``top``'s name (that
                card may be the copy itself, as :func:`free` has it)."""
                known = [
                    k
                    for k in [*out, *tops]
                    if k is not top
                    and all(k is not a for a in above)
                    and not (for_copy and k.located and k.card == top.card)
                ]
                shows = np.zeros(grey.shape, bool)
                for k in known:
                    if id(k) not in explained:
                        explained[id(k)] = self._explained(k, grey)
                    shows |= explained[id(k)]
                return shows

            if top.card in ART_CARDS and (decks is None or sum(k.card == top.card for k in out) < decks):
                copy = self.covered_copy(top, grey, above, partial(seen, for_copy=True))
                if copy is not None and free(copy, top):
                    out.append(copy)
                    if decks is not None:
                        todo.append((copy, (*above, top)))
            wanted = [
                c for c in self._under(top.card) if decks is None or sum(k.card == c for k in out) < decks
            ]
            under = self.covered_art(top, grey, above, wanted, seen()) if wanted else None
            if under is not None and free(under, top):
                out.append(under)
                todo.append((under, (*above, top)))
        return out

    def with_corner_named(self, named: frozenset[str]) -> FaceMatcher:
        """The same matcher, knowing which art cards the deck's corners name (:attr:`corner_named`)."""
        out = shallow_copy(self)
        out.corner_named = named
        return out

    def _twins_of(self, card: str) -> set[str]:
        """The faces the grey does not tell from ``card``'s (:meth:`_twin_faces`), but itself."""
        if card not in self.cards:
            return set()
        return {self.cards[g] for g in np.flatnonzero(self.twins[self.cards.index(card)])} - {card}

    def _under(self, card: str) -> list[str]:
        """The art cards looked for partly under ``card``: each but ``card`` itself that the deck's
        corners do not name (:attr:`corner_named`; what they name, they read where its strip shows),
        and ``card``'s twins (a strip that ``card``'s face and its twin's fit alike is no covered copy,
        :meth:`covered_copy`, but a joker of unknown size, :meth:`covered_art`)."""
        twins = self._twins_of(card)
        return [c for c in ART_CARDS if c != card and (c not in self.corner_named or c in twins)]

    def _shrunk(
        self, grey: npt.NDArray[np.float32], card_size_px: tuple[float, float]
    ) -> tuple[npt.NDArray[np.float32], float]:
        """``grey`` at the size of :attr:`deck_grey`'s faces (a card ``card_size_px`` high there is
        a face high), blurred as they are, and that scale: what :meth:`locate` slides faces over."""
        s = next(iter(self.deck_grey.values())).shape[0] / card_size_px[1]
        small = cv2.GaussianBlur(
            cv2.resize(grey, None, fx=s, fy=s, interpolation=cv2.INTER_AREA), (0, 0), 1.0
        )
        return np.asarray(small, np.float32), s

    def locate(
        self,
        card: str,
        box: tuple[float, float, float, float],
        corners: int,
        small: npt.NDArray[np.float32],
        s: float,
    ) -> FaceMatch | None:
        """Where the card its corners named lies whole (its face's outline), or None: the deck's
        face of ``card`` slid round the reading's ``box`` (its middle at the box's when both corners
        were read, ``corners`` 2; else one of its two index places there), turned all the way round
        in steps of ``locate_turn`` degrees and then by single degrees, over ``small`` (the image
        read at ``s`` times its size, :meth:`_shrunk`); located where it correlates at least
        ``locate_ncc`` (:class:`FaceMatchConfig`)."""
        cfg = self.config
        th, tw = self.deck_grey[card].shape
        at = np.array([box[0] + box[2], box[1] + box[3]]) * s / 2
        places = [(tw / 2, th / 2)] if corners >= 2 else [(0.1 * tw, 0.1 * th), (0.9 * tw, 0.9 * th)]

        def fit(turn: float, place: tuple[float, float]) -> tuple[float, int, int] | None:
            templ, alpha, rot = self._turned(card, turn)
            q = rot @ np.array([place[0], place[1], 1.0])
            x, y = int(round(at[0] - q[0])), int(round(at[1] - q[1]))
            window, _, x0, y0 = near(small, small, alpha.shape, x, y, cfg.locate_reach)
            if window.shape[0] < alpha.shape[0] or window.shape[1] < alpha.shape[1]:
                return None
            ncc = whole_ncc(window, templ, alpha)
            row, col = np.unravel_index(int(np.argmax(ncc)), ncc.shape)
            return float(ncc[row, col]), x0 + int(col), y0 + int(row)

        best: tuple[float, int, int, float, tuple[float, float]] | None = None
        for turn in np.arange(0.0, 360.0, cfg.locate_turn):
            for place in places:
                got = fit(float(turn), place)
                if got is not None and (best is None or got[0] > best[0]):
                    best = (*got, float(turn), place)
        if best is None:
            return None
        for turn in np.arange(best[3] - cfg.locate_turn + 1, best[3] + cfg.locate_turn):
            got = fit(float(turn), best[4])
            if got is not None and got[0] > best[0]:
                best = (*got, float(turn), best[4])
        value, x, y, turn, _ = best
        if value < cfg.locate_ncc:
            return None
        quad = np.c_[_face_corners(tw, th), np.ones(4)] @ self._turned(card, turn)[2].T + np.array([x, y])
        return FaceMatch(card, cfg.min_matches, quad / s, located=True)

    def _turned(
        self, card: str, degrees: float, fine: bool = False
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float64]]:
        """:func:`turned` of a deck face (at ``covered_fine`` times the size: ``fine``), kept; a face
        turned more than a quarter turn either way is the face turned half a turn less, flipped, so
        a face and its half-turn have the same shape."""
        degrees = (degrees + 180.0) % 360.0 - 180.0
        key = (card, degrees, fine)
        if key not in self._turned_faces:
            if abs(degrees) > 90.0:
                templ, alpha, rot = self._turned(
                    card, degrees - 180.0 if degrees > 0 else degrees + 180.0, fine
                )
                h, w = alpha.shape
                flip = np.array([[-1.0, 0.0, w - 1.0], [0.0, -1.0, h - 1.0], [0.0, 0.0, 1.0]])
                self._turned_faces[key] = (
                    np.ascontiguousarray(templ[::-1, ::-1]),
                    np.ascontiguousarray(alpha[::-1, ::-1]),
                    (flip @ np.vstack([rot, [0.0, 0.0, 1.0]]))[:2],
                )
            else:
                self._turned_faces[key] = turned((self.fine_grey if fine else self.deck_grey)[card], degrees)
        return self._turned_faces[key]

    def _canvas(
        self,
        top: FaceMatch,
        grey: npt.NDArray[np.float32],
        above: tuple[FaceMatch, ...],
        scale: int,
        seen: npt.NDArray[np.bool_] | None = None,
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float64]] | None:
        """The image round ``top`` in its own frame (:meth:`covered_copy`), at ``scale`` times the
        size of :attr:`deck_grey`'s faces: standardised where usable, the usable pixels (0 or 1),
        and the 2 × 3 map canvas → image; None when too little shows. ``top``, the cards of
        ``above`` and the image's pixels ``seen`` (when given) are not usable."""
        th, tw = (self.fine_grey if scale > 1 else self.deck_grey)[top.card].shape
        mx, my = _MARGIN
        width, height = int(round((1 + 2 * mx) * tw)), int(round((1 + 2 * my) * th))
        corners = _face_corners(tw, th)
        m, _ = cv2.estimateAffinePartial2D(corners, top.quad)
        if m is None:
            return None
        shift = np.array([[1.0, 0.0, -mx * tw], [0.0, 1.0, -my * th], [0.0, 0.0, 1.0]])
        to_image = (np.vstack([m, [0.0, 0.0, 1.0]]) @ shift)[:2]  # canvas → image
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        canvas = cv2.GaussianBlur(cv2.warpAffine(grey, to_image, (width, height), flags=flags), (0, 0), 1.0)
        free = np.ones_like(grey) if seen is None else np.where(seen, 0.0, 1.0).astype(np.float32)
        usable = cv2.warpAffine(free, to_image, (width, height), flags=flags) > 0.99
        x0, y0 = int(mx * tw) - 2 * scale, int(my * th) - 2 * scale
        usable[max(0, y0) : y0 + th + 5 * scale, max(0, x0) : x0 + tw + 5 * scale] = False  # the top card
        if above:
            to_canvas = cv2.invertAffineTransform(to_image)
            hidden = np.zeros(usable.shape, np.uint8)
            for card in above:  # and the cards over it
                quad = np.c_[card.quad, np.ones(4)] @ to_canvas.T
                cv2.fillConvexPoly(hidden, np.round(quad).astype(np.int32), 1)
            grow = 5 * scale
            usable &= cv2.dilate(hidden, np.ones((grow, grow), np.uint8)) == 0
        if usable.sum() < 16:
            return None
        mean, std = canvas[usable].mean(), canvas[usable].std() + 1e-6
        image = np.where(usable, (canvas - mean) / std, 0.0).astype(np.float32)
        return image, usable.astype(np.float32), np.asarray(to_image, np.float64)

    def covered_copy(
        self,
        top: FaceMatch,
        grey: npt.NDArray[np.float32],
        above: tuple[FaceMatch, ...] = (),
        seen: Callable[[], npt.NDArray[np.bool_]] | None = None,
    ) -> FaceMatch | None:
        """The copy of ``top``'s card partly under it, or None (:meth:`covered_copies`); ``above``:
        the cards ``top`` itself lies under, masked out with it. The copy must show its face's
        contrast and brightness in the light of ``top`` (:meth:`_same_light`, ``seen()``: the
        pixels where other cards known here show, left out of it) and its outline where it is not
        hidden (:meth:`_outlined`): in filmed deal rtg25 the table's grain above a lone J♠
        correlated with the dark band across the top of its face."""
        cut = self._canvas(top, grey, above, 1)
        if cut is None:
            return None
        best = self._strip(top, cut, [top.card], self.config.covered_turns).get(top.card)
        if best is None:
            return None
        found = self._stands(top, grey, above, cut, top.card, best, (0.0,))
        if (
            found is None
            or not self._same_light(top, found, grey, above, None if seen is None else seen())
            or not self._outlined(top, found, grey, above)
        ):
            return None
        return found

    def covered_art(
        self,
        top: FaceMatch,
        grey: npt.NDArray[np.float32],
        above: tuple[FaceMatch, ...],
        cards: Sequence[str],
        seen: npt.NDArray[np.bool_] | None = None,
    ) -> FaceMatch | None:
        """An art card of ``cards`` partly under ``top``, either way up, or None
        (:meth:`covered_copies`); ``above``: the cards ``top`` lies under, masked out with it;
        ``seen``: the pixels of the image where another card known here shows
        (:meth:`_explained`), masked out too (what shows of a card already read is no strip of
        another).

        Every face of the deck is tried lying square to ``top``, where ``under_core`` of it shows
        away from anything hidden (:meth:`_strip`); the ``under_candidates`` that fit best (within
        ``covered_margin`` of ``covered_ncc``) are turned as a copy is. The best must be one of
        ``cards`` (a number card's strip is its own: its corners read it) and stand as a copy
        does, against every other face of the deck either way up but its twins (a joker whose twin
        the grey cannot tell from it is ``?J``), and show its face's contrast and brightness in the
        light of ``top`` (:meth:`_same_light`: the table's grain or a hand beside a lone card
        correlates with a face about as well as a strip does) and its outline where it is not
        hidden (:meth:`_outlined`: a striped cloth has a face's contrast too)."""
        cfg = self.config
        turns = tuple(t + half for half in (0.0, 180.0) for t in cfg.covered_turns)
        floor = cfg.covered_ncc - cfg.covered_margin  # turning a face by a few degrees gains less
        cut = self._canvas(top, grey, above, 1, seen)
        if cut is None:
            return None
        square = self._strip(top, cut, list(cards), (0.0, 180.0), cfg.under_core)
        if all(b[0] < floor for b in square.values()):
            return None  # none of ``cards`` can be among the candidates
        rest = [card for card in self.deck_grey if card not in cards]
        square |= self._strip(top, cut, rest, (0.0, 180.0), cfg.under_core) if rest else {}
        kept = sorted((b[0], card) for card, b in square.items() if b[0] >= floor)[::-1]
        few = [card for _, card in kept[: cfg.under_candidates]]
        turned = self._strip(top, cut, few, turns, cfg.under_core) if few else {}
        if not turned:
            return None
        name, best = max(turned.items(), key=lambda item: item[1][0])
        if name not in cards:
            return None  # a number card's strip: its corners read it
        twins = self._twins_of(name)
        if twins and not all(c in JOKER_NAMES for c in (*twins, name)):
            return None  # twins the grey does not tell apart, and no name for what they share
        found = self._stands(top, grey, above, cut, name, best, (0.0, 180.0), twins, seen)
        if (
            found is None
            or not self._same_light(top, found, grey, above, seen)
            or not self._outlined(top, found, grey, above)
        ):
            return None
        if not twins:
            return found
        return FaceMatch("?J", found.matches, found.quad, covered=True)

    def _placed(
        self, card: str, best: tuple[float, float, int, int], to_image: npt.NDArray[np.float64]
    ) -> FaceMatch:
        """``card`` found under another at ``best`` (:meth:`_strip`) on the canvas mapped to the
        image by ``to_image``, as a card found under another."""
        th, tw = self.deck_grey[card].shape
        corners = _face_corners(tw, th)
        _, turn, x, y = best
        quad_canvas = np.c_[corners, np.ones(4)] @ self._turned(card, turn)[2].T + np.array([x, y])
        return FaceMatch(
            card, self.config.min_matches, np.c_[quad_canvas, np.ones(4)] @ to_image.T, covered=True
        )

    def _explained(self, card: FaceMatch, grey: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
        """The pixels of ``grey`` where ``card`` shows: inside its outline, where its face, mapped
        to the image as ``gain × face + offset`` (least squares, fitted again twice on the half of
        the pixels it fits best, so a card lying over part of it does not count), differs from the
        image by at most half the face's spread; opened by 5 pixels, then grown by a face pixel
        within the outline (the edges of its signs, which a pixel's misplacement leaves out).
        Pixels of a card lying over part of it fit nowhere but by chance and are left out."""
        face = self.deck_grey.get(card.card, self.deck_grey[JOKER_NAMES[0]])  # ``?J``: either joker
        th, tw = face.shape
        corners = _face_corners(tw, th)
        m, _ = cv2.estimateAffinePartial2D(corners, card.quad)
        if m is None:
            return np.zeros(grey.shape, bool)
        size = (grey.shape[1], grey.shape[0])
        warped = cv2.warpAffine(face, m, size, flags=cv2.INTER_LINEAR)
        inside = cv2.warpAffine(np.ones_like(face), m, size) > 0.99
        inside = cv2.erode(inside.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
        if inside.sum() < 16:
            return np.zeros(grey.shape, bool)
        scale = float(np.sqrt(abs(np.linalg.det(m[:, :2]))))  # image pixels per face pixel
        image = cv2.GaussianBlur(grey, (0, 0), max(1.0, scale))  # as sharp as the face
        f, g = warped[inside], image[inside]
        keep = np.ones(len(f), bool)
        for _ in range(3):
            gain, offset = np.polyfit(f[keep], g[keep], 1)
            miss = np.abs(g - (gain * f + offset))
            keep = miss <= np.median(miss)
        near = np.abs(image - (gain * warped + offset)) <= 0.5 * abs(gain) * face.std()
        shows = cv2.morphologyEx((inside & near).astype(np.uint8), cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
        grow = 2 * int(np.ceil(scale)) + 1  # a face pixel either way: the edges of its signs
        return np.asarray(inside & (cv2.dilate(shows, np.ones((grow, grow), np.uint8)) > 0), np.bool_)

    def _outlined(
        self, top: FaceMatch, under: FaceMatch, grey: npt.NDArray[np.float32], above: tuple[FaceMatch, ...]
    ) -> bool:
        """Whether ``under``'s outline shows where it is not hidden: the mean step in brightness
        across it (2 pixels either side, the image blurred by a pixel) at least ``under_edge`` of
        the step across ``top``'s own outline (its upper quartile: where it meets the table). A
        card's edge is a step from card stock to what lies beside it; the outline of a face laid
        over the table's stripes or grain by chance crosses no step (filmed deal d1: a Q♦ under a
        lone 9♥ on a striped cloth, 0.03 of the top card's step; true strips 0.25-0.42)."""
        image = np.asarray(cv2.GaussianBlur(grey, (0, 0), 1.0), np.float32)
        grow = np.ones((5, 5), np.uint8)
        hidden = np.asarray(cv2.dilate(_filled((top, *above), grey.shape), grow), np.uint8)
        theirs = _edge_steps(under.quad, image, hidden)
        mine = _edge_steps(
            top.quad, image, np.asarray(cv2.dilate(_filled(above, grey.shape), grow), np.uint8)
        )
        if len(theirs) < 16 or len(mine) < 16:
            return False
        return float(theirs.mean()) >= self.config.under_edge * float(np.percentile(mine, 75))

    def _same_light(
        self,
        top: FaceMatch,
        under: FaceMatch,
        grey: npt.NDArray[np.float32],
        above: tuple[FaceMatch, ...],
        seen: npt.NDArray[np.bool_] | None = None,
    ) -> bool:
        """Whether what shows of ``under`` is card stock in the light ``top`` shows: ``top``'s face
        maps to the image under it as ``gain × face + offset`` (least squares), and the strip of
        ``under`` that shows must have its face's contrast under that gain, within
        ``under_contrast`` (a share), and its brightness under that map, within ``under_offset``
        (a share of ``top``'s face's spread). Normalised correlation ignores both, so the table's
        grain or a hand in a sliver beside a card can correlate with a face as well as a card does;
        their contrast is a fifth to a third of a face's (g25)."""
        th, tw = self.deck_grey[top.card].shape
        corners = _face_corners(tw, th)
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP

        def cut(
            card: FaceMatch, hidden: Sequence[FaceMatch]
        ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
            m, _ = cv2.estimateAffinePartial2D(corners, card.quad)
            bare = 1 - _filled(hidden, grey.shape)  # what no card of ``hidden`` covers
            bare = np.asarray(cv2.erode(bare, np.ones((5, 5), np.uint8)), np.uint8)  # off the edges
            image = cv2.GaussianBlur(cv2.warpAffine(grey, m, (tw, th), flags=flags), (0, 0), 1.0)
            use = cv2.warpAffine(bare.astype(np.float32), m, (tw, th), flags=flags) > 0.99
            return np.asarray(image, np.float32), np.asarray(use, np.bool_)

        face = self.deck_grey[top.card]
        image, use = cut(top, above)
        if seen is not None:  # a known card lying over ``top`` is not ``top``'s light
            m, _ = cv2.estimateAffinePartial2D(corners, top.quad)
            use &= cv2.warpAffine(seen.astype(np.float32), m, (tw, th), flags=flags) <= 0.01
        if use.sum() < 16:
            return False
        gain, offset = np.polyfit(face[use], image[use], 1)
        strip, shows = cut(under, (top, *above))
        if seen is not None:  # what shows of other cards known here
            m, _ = cv2.estimateAffinePartial2D(corners, under.quad)
            other = cv2.warpAffine(seen.astype(np.float32), m, (tw, th), flags=flags) > 0.01
            shows &= ~other
        if shows.sum() < 16 or abs(gain) < 1e-6:
            return False
        theirs = self.deck_grey[under.card][shows]
        contrast = float(strip[shows].std() / (abs(gain) * theirs.std() + 1e-6))
        lift = float(
            (strip[shows].mean() - (gain * theirs.mean() + offset)) / (abs(gain) * face.std() + 1e-6)
        )
        low, high = self.config.under_contrast
        return low <= contrast <= high and abs(lift) <= self.config.under_offset

    def _strip(
        self,
        top: FaceMatch,
        cut: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float64]],
        cards: Sequence[str],
        turns: Sequence[float],
        core: float = 0.0,
    ) -> dict[str, tuple[float, float, int, int]]:
        """Where each of ``cards``' faces, turned by one of ``turns``, best fits what shows round
        ``top`` on its canvas ``cut`` (:meth:`_canvas`) as a card partly under it: card →
        (correlation, turn, x, y of the turned face's corner on the canvas); a card no place shows
        the right share of is left out. With ``core``, at least that share of the face must show
        2 pixels or more from anything hidden: a strip, not a sliver along the top card's edge."""
        cfg = self.config
        image, u, _ = cut
        inner = cv2.erode(u, np.ones((5, 5), np.uint8)) if core > 0 else None
        th, tw = self.deck_grey[top.card].shape
        mx, my = _MARGIN
        best: dict[str, tuple[float, float, int, int]] = {}
        for turn in turns:
            alpha = self._turned(cards[0], turn)[1]  # every face of the deck has the same size
            nccs, n = masked_nccs(image, u, [self._turned(card, turn)[0] for card in cards], alpha)
            ah, aw = alpha.shape
            ys, xs = np.mgrid[0 : n.shape[0], 0 : n.shape[1]]
            centre_x, centre_y = xs + aw / 2 - (mx + 0.5) * tw, ys + ah / 2 - (my + 0.5) * th
            ok = (n >= cfg.covered_visible[0] * alpha.sum()) & (n <= cfg.covered_visible[1] * alpha.sum())
            ok &= np.hypot(centre_x, centre_y) >= cfg.covered_shift * tw
            if inner is not None:
                ok &= np.asarray(cv2.matchTemplate(inner, alpha, cv2.TM_CCORR)) >= core * alpha.sum()
            if not ok.any():
                continue
            for card, ncc in zip(cards, nccs, strict=True):
                score = np.where(ok, ncc, -1.0)
                row, col = np.unravel_index(int(np.argmax(score)), score.shape)
                if card not in best or score[row, col] > best[card][0]:
                    best[card] = (float(score[row, col]), turn, int(col), int(row))
        return best

    def _stands(
        self,
        top: FaceMatch,
        grey: npt.NDArray[np.float32],
        above: tuple[FaceMatch, ...],
        cut: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float64]],
        card: str,
        best: tuple[float, float, int, int],
        halves: tuple[float, ...],
        twins: set[str] | frozenset[str] = frozenset(),
        seen: npt.NDArray[np.bool_] | None = None,
    ) -> FaceMatch | None:
        """The card ``card`` found at ``best`` (:meth:`_strip`) under ``top``, when it correlates at
        least ``covered_ncc`` and ``covered_margin`` above every other face of the deck but
        ``twins`` (each turned as it is, and by each of ``halves`` more) placed near there, or
        beats those within the margin where each differs from it (:meth:`_finer`); else None."""
        cfg = self.config
        value, turn, x, y = best
        if value < cfg.covered_ncc:
            return None
        image, u, to_image = cut
        others = [(c, turn + h) for c in self.deck_grey if c != card and c not in twins for h in halves]
        if others:
            templs = np.stack([self._turned(c, t)[0] for c, t in others])
            rivals = ncc_near(image, u, templs, self._turned(card, turn)[1], x, y)
            close = [o for o, r in zip(others, rivals, strict=True) if value - r < cfg.covered_margin]
            if close and not self._finer(top, grey, above, card, turn, (x, y), close, seen):
                return None
        return self._placed(card, best, to_image)

    def _finer(
        self,
        top: FaceMatch,
        grey: npt.NDArray[np.float32],
        above: tuple[FaceMatch, ...],
        card: str,
        turn: float,
        at: tuple[int, int],
        close: list[tuple[str, float]],
        seen: npt.NDArray[np.bool_] | None = None,
    ) -> bool:
        """Whether the card found under ``top`` at ``at`` (``card``'s face turned by ``turn``, its
        corner on the canvas of :meth:`_strip`) is ``card`` rather than any of ``close`` (each a face
        and its turn), judged at ``covered_fine`` times the size: each face placed where it fits best
        near there, and compared only where the two faces differ (:data:`DIFFER`); ``card``'s face
        must correlate ``covered_margin`` better there than each of the others."""
        scale = self.config.covered_fine
        cut = self._canvas(top, grey, above, scale, seen) if scale >= 2 else None
        if cut is None:
            return False
        image, u, _ = cut
        templ, alpha, _ = self._turned(card, turn, True)
        h, w = alpha.shape
        near = (at[0] * scale, at[1] * scale, 2 * scale)

        def placed(face: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
            x, y = best_place(image, u, face, alpha, *near)
            return image[y : y + h, x : x + w], u[y : y + h, x : x + w]

        window, use = placed(templ)
        if window.shape != alpha.shape:
            return False
        whole = np.ones_like(alpha)  # each face compared at the one place found for it
        for other_card, other_turn in close:
            other = self._turned(other_card, other_turn, True)[0]
            differ = alpha * (np.abs(templ - other) > DIFFER)
            theirs, their_use = placed(other)
            if theirs.shape != alpha.shape:
                continue
            mine = masked_ncc(window, differ * use, templ, whole)[0][0, 0]
            if (
                mine - masked_ncc(theirs, differ * their_use, other, whole)[0][0, 0]
                < self.config.covered_margin
            ):
                return False
        return True

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


#: the margin round a top card in :meth:`FaceMatcher.covered_copy`'s canvas, shares of its face
#: (across, along)
_MARGIN = (0.55, 0.35)

#: where two standardised faces differ by more than this (standard deviations), the pixels that
#: tell a covered copy from another face of the same art (:meth:`FaceMatcher._finer`)
DIFFER = 1.0


def _face_corners(w: float, h: float) -> npt.NDArray[np.float64]:
    """A face's corners w × h: top-left, top-right, bottom-right, bottom-left (4 × 2).

    >>> _face_corners(2, 3).tolist()
    [[0.0, 0.0], [2.0, 0.0], [2.0, 3.0], [0.0, 3.0]]
    """
    return np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)


def _filled(cards: Sequence[FaceMatch], shape: tuple[int, ...]) -> npt.NDArray[np.uint8]:
    """An image of ``shape`` (h, w) with ``cards``' outlines filled with 1."""
    out = np.zeros(shape[:2], np.uint8)
    for card in cards:
        cv2.fillConvexPoly(out, np.round(card.quad).astype(np.int32), 1)
    return out


def _edge_steps(
    quad: npt.NDArray[np.float64],
    image: npt.NDArray[np.float32],
    hidden: npt.NDArray[np.uint8],
    step: float = 2.0,
) -> npt.NDArray[np.float64]:
    """The step in brightness across the outline ``quad`` (40 points along each side, ``step``
    pixels in and out along the normal) where both ends lie in ``image`` and not ``hidden``.

    >>> img = np.zeros((40, 40), np.float32); img[10:30, 10:30] = 100
    >>> quad = np.array([[10, 10], [30, 10], [30, 30], [10, 30]], np.float64)
    >>> steps = _edge_steps(quad, img, np.zeros((40, 40), np.uint8))
    >>> len(steps), float(steps.min())
    (160, 100.0)
    """
    h, w = image.shape
    centre = quad.mean(axis=0)
    points, normals = [], []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        along = (b - a) / (np.linalg.norm(b - a) + 1e-9)
        normal = np.array([along[1], -along[0]])
        if np.dot(normal, (a + b) / 2 - centre) < 0:
            normal = -normal
        s = np.linspace(0.05, 0.95, 40)[:, None]
        points.append(a + s * (b - a))
        normals.append(np.repeat(normal[None], 40, axis=0))
    p, n = np.concatenate(points), np.concatenate(normals)
    inner = np.round(p - step * n).astype(np.int64)
    outer = np.round(p + step * n).astype(np.int64)
    ok = np.ones(len(p), bool)
    for q in (inner, outer):
        ok &= (q[:, 0] >= 0) & (q[:, 0] < w) & (q[:, 1] >= 0) & (q[:, 1] < h)
    inner, outer = inner[ok], outer[ok]
    ok = (hidden[inner[:, 1], inner[:, 0]] == 0) & (hidden[outer[:, 1], outer[:, 0]] == 0)
    inner, outer = inner[ok], outer[ok]
    return np.asarray(np.abs(image[outer[:, 1], outer[:, 0]] - image[inner[:, 1], inner[:, 0]]), np.float64)


def _chroma(bgr: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
    """Lab's a and b of an image smoothed over a few pixels, each less its median (a colour cast of
    the light counts for nothing)."""
    lab = cv2.cvtColor(cv2.GaussianBlur(bgr, (0, 0), 2.0), cv2.COLOR_BGR2LAB)[..., 1:].astype(np.float64)
    return np.asarray(lab - np.median(lab.reshape(-1, 2), axis=0), np.float64)
