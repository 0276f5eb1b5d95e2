"""Art cards found by their whole face, for an enrolled deck (the reader's ``faces`` step).

A corner index is all the localiser and the heads look at, and some decks print too little there:
guyenne-classic's jacks, queens and kings show only a suit sign in their corners, tigullio's jokers
a small star. An enrolled deck (``tractorcam enroll``) brings the card's whole face
(``DIR/faces/CARD.png``), and the art of a court card or a joker is a picture rich in detail and
unlike any other card's, the textbook case for local-feature instance recognition: SIFT keypoints of
each art face (:data:`ART_CARDS`) are matched with those of the image read (nearest neighbour over
every face's descriptors, Lowe's ratio test), and each face with enough matches is located by a
RANSAC similarity (a turn, a size and a shift: a card lying flat, seen from above as the rectified
table shows it; two matches make a guess, so RANSAC needs few tries). A location counts as a card when enough matches agree with it and the face's
outline lands where a card could lie: convex, the card's proportions, and its size in pixels when
the rectified table gives it. The matches a card explains are set aside and the search goes on, so
two or three identical cards of a multi-deck game are each found. A card half under another is
still found from the half that shows.

Every card found this way takes the place of whatever the corner indices made of it (a card whose
box centre lies at the face's middle or at one of its corners, where indices are printed): a court
card its corner called "a spade", or ``??``, becomes the king of spades it is.

>>> ART_CARDS[:3], ART_CARDS[-2:]
(('JS', 'QS', 'KS'), ('SJ', 'BJ'))
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from engine.cards import JOKER_NAMES
from vision.detections import box_inside
from vision.instances import CardInstance
from vision.labels import CARD_CLASSES, SUITS, class_id

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

    >>> FaceMatchConfig(min_matches=3)
    Traceback (most recent call last):
    ...
    vision.faces.FaceMatcherError: min_matches must be at least 4, got 3
    """

    template_h: int = 264
    ratio: float = 0.8
    ransac_px: float = 4.0
    min_matches: int = 12
    size_tolerance: float = 0.25
    same_card: float = 0.5
    neighbours: int = 4
    image_scale: float = 0.5
    max_tries: int = 6
    colour_margin: float = 0.8
    twin_chroma: float = 12.0
    resemblance: float = 0.2
    covered_h: int = 64
    covered_ncc: float = 0.7
    covered_margin: float = 0.15
    covered_visible: tuple[float, float] = (0.1, 0.6)
    covered_shift: float = 0.12
    covered_turns: tuple[float, ...] = (-8.0, -6.0, -4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0)
    covered_fine: int = 2

    def __post_init__(self) -> None:
        if self.min_matches < 4:
            raise FaceMatcherError(f"min_matches must be at least 4, got {self.min_matches}")
        if not 0 < self.ratio <= 1:
            raise FaceMatcherError(f"ratio must lie in (0, 1], got {self.ratio}")


@dataclass(frozen=True)
class FaceMatch:
    """One card found by its face: the card, how many matches agree on it, and the face's outline in
    the image (4 × 2, the face's top-left, top-right, bottom-right, bottom-left corners)."""

    card: str
    matches: int
    quad: npt.NDArray[np.float64]

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
    ) -> list[FaceMatch]:
        """The art cards in ``image`` (BGR), best first, one per card (``card_size_px``: a card's
        width and height in pixels, when the table gives it), with their covered copies where the
        game's ``decks`` hold another copy (None: not known; :meth:`covered_copies`)."""
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
        return self.covered_copies(cards, bgr, decks) if self.deck_grey else cards

    def covered_copies(
        self, found: list[FaceMatch], image: npt.NDArray[np.uint8], decks: int | None = None
    ) -> list[FaceMatch]:
        """``found`` and, after it, the covered copy of each card found (:meth:`covered_copy`) that
        no other card found already stands for, while fewer than ``decks`` of that card are found
        (a game of one deck has no copy to find; None: not known).

        A pair of court cards is often laid as a fan, one card over the other, and too little of the
        lower one shows for its keypoints to locate it. What shows is the same face, a little
        shifted and turned: each card found is cut out of the image with a margin in its own frame
        (its face upright), and its face is slid over what lies round it, the card itself masked
        out; where the visible strip correlates well with the face, and clearly better than with any
        other face of the deck, a copy lies there. When ``decks`` is known, a copy found is looked
        under in turn (a triple of three decks fanned: the top card, a copy under it and one under
        that), with every card it lies under masked out too."""
        grey = np.asarray(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image, np.float32)
        out = list(found)
        todo: list[tuple[FaceMatch, tuple[FaceMatch, ...]]] = [(top, ()) for top in found]
        while todo:
            top, above = todo.pop(0)
            if top.card not in self.deck_grey:
                continue  # a joker of unknown size
            if decks is not None and sum(k.card == top.card for k in out) >= decks:
                continue  # every copy the decks hold is found
            copy = self.covered_copy(top, grey, above)
            if copy is not None and not any(
                float(np.linalg.norm(copy.centre - k.centre)) <= self.config.same_card * k.width()
                for k in out
                if k is not top
            ):
                out.append(copy)
                if decks is not None:
                    todo.append((copy, (*above, top)))
        return out

    def _turned(
        self, card: str, degrees: float, fine: bool = False
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float64]]:
        """:func:`_turned` of a deck face (at ``covered_fine`` times the size: ``fine``), kept."""
        key = (card, degrees, fine)
        if key not in self._turned_faces:
            self._turned_faces[key] = _turned((self.fine_grey if fine else self.deck_grey)[card], degrees)
        return self._turned_faces[key]

    def _canvas(
        self, top: FaceMatch, grey: npt.NDArray[np.float32], above: tuple[FaceMatch, ...], scale: int
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float64]] | None:
        """The image round ``top`` in its own frame (:meth:`covered_copy`), at ``scale`` times the
        size of :attr:`deck_grey`'s faces: standardised where usable, the usable pixels (0 or 1),
        and the 2 × 3 map canvas → image; None when too little shows."""
        th, tw = (self.fine_grey if scale > 1 else self.deck_grey)[top.card].shape
        mx, my = _MARGIN
        width, height = int(round((1 + 2 * mx) * tw)), int(round((1 + 2 * my) * th))
        corners = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], np.float64)
        m, _ = cv2.estimateAffinePartial2D(corners, top.quad)
        if m is None:
            return None
        shift = np.array([[1.0, 0.0, -mx * tw], [0.0, 1.0, -my * th], [0.0, 0.0, 1.0]])
        to_image = (np.vstack([m, [0.0, 0.0, 1.0]]) @ shift)[:2]  # canvas → image
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        canvas = cv2.GaussianBlur(cv2.warpAffine(grey, to_image, (width, height), flags=flags), (0, 0), 1.0)
        usable = cv2.warpAffine(np.ones_like(grey), to_image, (width, height), flags=flags) > 0.99
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
        self, top: FaceMatch, grey: npt.NDArray[np.float32], above: tuple[FaceMatch, ...] = ()
    ) -> FaceMatch | None:
        """The copy of ``top``'s card partly under it, or None (:meth:`covered_copies`); ``above``:
        the cards ``top`` itself lies under, masked out with it."""
        cfg = self.config
        th, tw = self.deck_grey[top.card].shape
        mx, my = _MARGIN
        cut = self._canvas(top, grey, above, 1)
        if cut is None:
            return None
        image, u, to_image = cut
        corners = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], np.float64)
        best: tuple[float, float, int, int, npt.NDArray[np.float64]] | None = None
        for turn in cfg.covered_turns:
            templ, alpha, rot = self._turned(top.card, turn)
            ncc, n = _masked_ncc(image, u, templ, alpha)
            ah, aw = alpha.shape
            ys, xs = np.mgrid[0 : ncc.shape[0], 0 : ncc.shape[1]]
            centre_x, centre_y = xs + aw / 2 - (mx + 0.5) * tw, ys + ah / 2 - (my + 0.5) * th
            ok = (n >= cfg.covered_visible[0] * alpha.sum()) & (n <= cfg.covered_visible[1] * alpha.sum())
            ok &= np.hypot(centre_x, centre_y) >= cfg.covered_shift * tw
            if not ok.any():
                continue
            score = np.where(ok, ncc, -1.0)
            row, col = np.unravel_index(int(np.argmax(score)), score.shape)
            if best is None or score[row, col] > best[0]:
                best = (float(score[row, col]), turn, int(col), int(row), rot)
        if best is None or best[0] < cfg.covered_ncc:
            return None
        value, turn, x, y, rot = best
        others = [card for card in self.deck_grey if card != top.card]
        if others:
            templs = np.stack([self._turned(card, turn)[0] for card in others])
            rivals = _ncc_near(image, u, templs, self._turned(top.card, turn)[1], x, y)
            close = [card for card, r in zip(others, rivals, strict=True) if value - r < cfg.covered_margin]
            if close and not self._finer(top, grey, above, turn, (x, y), close):
                return None
        quad_canvas = np.c_[corners, np.ones(4)] @ rot.T + np.array([x, y])  # the copy's face corners
        quad = np.c_[quad_canvas, np.ones(4)] @ to_image.T
        return FaceMatch(top.card, cfg.min_matches, quad)

    def _finer(
        self,
        top: FaceMatch,
        grey: npt.NDArray[np.float32],
        above: tuple[FaceMatch, ...],
        turn: float,
        at: tuple[int, int],
        close: list[str],
    ) -> bool:
        """Whether the copy of ``top`` found at ``at`` (the turned face's corner on the canvas of
        :meth:`covered_copy`) is ``top``'s card rather than any of ``close``, judged at
        ``covered_fine`` times the size: each face placed where it fits best near there, and
        compared only where the two faces differ (:data:`DIFFER`); ``top``'s face must correlate
        ``covered_margin`` better there than each of the others."""
        scale = self.config.covered_fine
        cut = self._canvas(top, grey, above, scale) if scale >= 2 else None
        if cut is None:
            return False
        image, u, _ = cut
        templ, alpha, _ = self._turned(top.card, turn, True)
        h, w = alpha.shape
        near = (at[0] * scale, at[1] * scale, 2 * scale)

        def placed(face: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
            x, y = _best_place(image, u, face, alpha, *near)
            return image[y : y + h, x : x + w], u[y : y + h, x : x + w]

        window, use = placed(templ)
        if window.shape != alpha.shape:
            return False
        whole = np.ones_like(alpha)  # each face compared at the one place found for it
        for card in close:
            other = self._turned(card, turn, True)[0]
            differ = alpha * (np.abs(templ - other) > DIFFER)
            theirs, their_use = placed(other)
            if theirs.shape != alpha.shape:
                continue
            mine = _masked_ncc(window, differ * use, templ, whole)[0][0, 0]
            if (
                mine - _masked_ncc(theirs, differ * their_use, other, whole)[0][0, 0]
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


def _turned(
    face: npt.NDArray[np.float32], degrees: float
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float64]]:
    """A face turned by ``degrees`` about its middle on a canvas that holds it whole: the face (its
    visible pixels standardised), where it lies (0 or 1), and the 2 × 3 map face → that canvas."""
    h, w = face.shape
    a = np.deg2rad(degrees)
    ch = int(np.ceil(abs(w * np.sin(a)) + abs(h * np.cos(a))))
    cw = int(np.ceil(abs(w * np.cos(a)) + abs(h * np.sin(a))))
    rot = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    rot[:, 2] += (cw / 2 - w / 2, ch / 2 - h / 2)
    templ = cv2.warpAffine(face, rot, (cw, ch), flags=cv2.INTER_LINEAR)
    alpha = (cv2.warpAffine(np.ones_like(face), rot, (cw, ch), flags=cv2.INTER_LINEAR) > 0.99).astype(
        np.float32
    )
    inside = alpha > 0
    templ = np.where(inside, (templ - templ[inside].mean()) / (templ[inside].std() + 1e-6), 0.0)
    return templ.astype(np.float32), alpha, np.asarray(rot, np.float64)


def _masked_ncc(
    image: npt.NDArray[np.float32],
    usable: npt.NDArray[np.float32],
    templ: npt.NDArray[np.float32],
    alpha: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Normalised cross-correlation of ``templ`` (where ``alpha``) with ``image`` (where ``usable``)
    at every place the template fits wholly, over the pixels both cover; and how many those are.

    >>> rng = np.random.default_rng(0)
    >>> img = rng.normal(size=(30, 30)).astype(np.float32)
    >>> t = img[5:15, 8:20].copy()
    >>> ncc, n = _masked_ncc(img, np.ones_like(img), t, np.ones_like(t))
    >>> tuple(int(v) for v in np.unravel_index(np.argmax(ncc), ncc.shape)), round(float(ncc.max()), 3)
    ((5, 8), 1.0)
    """

    def corr(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        return np.asarray(cv2.matchTemplate(a, b, cv2.TM_CCORR), np.float64)

    ui, ui2 = usable * image, usable * image * image
    at, at2 = alpha * templ, alpha * templ * templ
    n = corr(usable, alpha)
    s_i, s_i2 = corr(ui, alpha), corr(ui2, alpha)
    s_t, s_t2 = corr(usable, at), corr(usable, at2)
    s_ti = corr(ui, at)
    return _ncc_of_sums(n, s_i, s_i2, s_t, s_t2, s_ti), n


def _ncc_of_sums(
    n: npt.NDArray[np.float64],
    s_i: npt.NDArray[np.float64],
    s_i2: npt.NDArray[np.float64],
    s_t: npt.NDArray[np.float64],
    s_t2: npt.NDArray[np.float64],
    s_ti: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """Normalised cross-correlation from the masked sums of the image, the template, their squares
    and their product over ``n`` pixels; -1 where fewer than 16 pixels or no variance."""
    safe = np.maximum(n, 1.0)
    var = (s_t2 - s_t**2 / safe) * (s_i2 - s_i**2 / safe)
    cov = s_ti - s_t * s_i / safe
    return np.asarray(np.where((n >= 16) & (var > 1e-9), cov / np.sqrt(np.maximum(var, 1e-9)), -1.0))


def _near(
    image: npt.NDArray[np.float32],
    usable: npt.NDArray[np.float32],
    shape: tuple[int, int],
    x: int,
    y: int,
    reach: int,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], int, int]:
    """The part of ``image`` and ``usable`` where a template of ``shape`` (h, w) placed with its
    corner within ``reach`` pixels of (``x``, ``y``) lies, and that part's corner (x0, y0)."""
    h, w = shape
    y0, x0 = max(0, y - reach), max(0, x - reach)
    window = (slice(y0, y + reach + h), slice(x0, x + reach + w))
    return image[window], usable[window], x0, y0


def _ncc_near(
    image: npt.NDArray[np.float32],
    usable: npt.NDArray[np.float32],
    templs: npt.NDArray[np.float32],
    alpha: npt.NDArray[np.float32],
    x: int,
    y: int,
    reach: int = 3,
) -> npt.NDArray[np.float64]:
    """For each of ``templs`` (F, h, w, all lying where ``alpha``), its best :func:`_masked_ncc`
    placed within ``reach`` pixels of (``x``, ``y``); -1 each where the template does not fit.

    >>> rng = np.random.default_rng(1)
    >>> img = rng.normal(size=(40, 40)).astype(np.float32)
    >>> templs = np.stack([rng.normal(size=(10, 8)), img[12:22, 20:28]]).astype(np.float32)
    >>> _ncc_near(img, np.ones_like(img), templs, np.ones((10, 8), np.float32), 18, 10).round(3)[1]
    np.float64(1.0)
    """
    from numpy.lib.stride_tricks import sliding_window_view

    h, w = alpha.shape
    img, use, _, _ = _near(image, usable, (h, w), x, y, reach)
    if img.shape[0] < h or img.shape[1] < w:
        return np.full(len(templs), -1.0)
    patches = sliding_window_view(img, (h, w)).reshape(-1, h * w)  # (places, pixels)
    mask = (sliding_window_view(use, (h, w)) * alpha).reshape(-1, h * w)
    t = templs.reshape(len(templs), h * w).T  # (pixels, F)
    n = mask.sum(1)[:, None]
    s_i = (mask * patches).sum(1)[:, None]
    s_i2 = (mask * patches * patches).sum(1)[:, None]
    s_t, s_t2, s_ti = mask @ t, mask @ (t * t), (mask * patches) @ t
    return np.asarray(_ncc_of_sums(n, s_i, s_i2, s_t, s_t2, s_ti).max(axis=0), np.float64)


def _best_place(
    image: npt.NDArray[np.float32],
    usable: npt.NDArray[np.float32],
    templ: npt.NDArray[np.float32],
    alpha: npt.NDArray[np.float32],
    x: int,
    y: int,
    reach: int,
) -> tuple[int, int]:
    """Where (its corner) ``templ`` correlates best with ``image`` (:func:`_masked_ncc`) within
    ``reach`` pixels of (``x``, ``y``); (``x``, ``y``) when it fits nowhere there.

    >>> rng = np.random.default_rng(2)
    >>> img = rng.normal(size=(40, 40)).astype(np.float32)
    >>> _best_place(img, np.ones_like(img), img[12:22, 20:28], np.ones((10, 8), np.float32), 18, 10, 3)
    (20, 12)
    """
    h, w = alpha.shape
    img, use, x0, y0 = _near(image, usable, (h, w), x, y, reach)
    if img.shape[0] < h or img.shape[1] < w:
        return x, y
    ncc, _ = _masked_ncc(img, use, templ, alpha)
    row, col = np.unravel_index(int(np.argmax(ncc)), ncc.shape)
    return x0 + int(col), y0 + int(row)


def _chroma(bgr: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
    """Lab's a and b of an image smoothed over a few pixels, each less its median (a colour cast of
    the light counts for nothing)."""
    lab = cv2.cvtColor(cv2.GaussianBlur(bgr, (0, 0), 2.0), cv2.COLOR_BGR2LAB)[..., 1:].astype(np.float64)
    return np.asarray(lab - np.median(lab.reshape(-1, 2), axis=0), np.float64)


def place_faces(cards: list[CardInstance], found: list[FaceMatch]) -> list[CardInstance]:
    """The faces step: each card found by its face (``found``) replaces the cards the corner
    indices made of it, and is added as a card read from both corners. A card read from both
    corners is the found one when their boxes overlap by half (intersection over union), or when it
    has the found card's name and half its box lies inside the face's (a card mostly covered shows
    a strip along one edge, its two indices at the strip's ends). A card not named (``??``,
    ``?C``; a joker of unknown size is matched as a named card is, and names any joker found) is the found one when half its
    box lies inside the face's (a sign of the card the classifier could not name). One read from a
    single corner is, when its box's middle lies within a fifth of the card's width of one of the
    face's index places (:meth:`FaceMatch.index_points`). A joker found without its size (``?J``)
    takes the size its corners named, when they named a joker.

    >>> quad = np.array([[0, 0], [60, 0], [60, 90], [0, 90]], np.float64)
    >>> corner = CardInstance("??", -1, 0.3, (2.0, 4.0, 10.0, 14.0), 1)
    >>> other = CardInstance("5H", 16, 0.9, (40.0, 60.0, 90.0, 150.0), 2)
    >>> [c.card for c in place_faces([corner, other], [FaceMatch("KS", 30, quad)])]
    ['5H', 'KS']
    >>> strip = CardInstance("KS", 46, 0.9, (1.0, 62.0, 61.0, 92.0), 2)
    >>> [c.card for c in place_faces([strip], [FaceMatch("KS", 30, quad)])]
    ['KS']
    >>> inner = CardInstance("??", -1, 0.4, (20.0, 30.0, 40.0, 50.0), 1)
    >>> [c.card for c in place_faces([inner], [FaceMatch("KS", 30, quad)])]
    ['KS']
    >>> joker = CardInstance("?J", -1, 0.8, (5.0, 10.0, 50.0, 60.0), 2)
    >>> [c.card for c in place_faces([joker], [FaceMatch("SJ", 30, quad)])]
    ['SJ']
    >>> big = CardInstance("BJ", 53, 0.9, (2.0, 4.0, 10.0, 14.0), 1)
    >>> [c.card for c in place_faces([big], [FaceMatch("?J", 30, quad)])]
    ['BJ']
    """
    if not found:
        return cards
    out = []
    named: dict[int, list[CardInstance]] = {}  # found card → the corner readings it replaces
    inside = box_inside(
        np.array([c.box for c in cards], np.float32).reshape(-1, 4),
        np.array([f.box for f in found], np.float32),
    )  # the share of each card read by its corners that lies in each face's box
    for i, card in enumerate(cards):
        x1, y1, x2, y2 = card.box
        at = np.array([(x1 + x2) / 2, (y1 + y2) / 2])
        covering = [
            k
            for k, f in enumerate(found)
            if (
                "?" in card.card
                and card.card != "?J"
                and inside[i, k] >= 0.5
                or (
                    _iou(card.box, f.box) >= 0.5 or (_same_card(card.card, f.card) and inside[i, k] >= 0.5)
                    if card.corners >= 2
                    else float(np.min(np.linalg.norm(f.index_points() - at, axis=1))) <= 0.2 * f.width()
                )
            )
        ]
        for k in covering:
            named.setdefault(k, []).append(card)
        if not covering:
            out.append(card)
    for k, f in enumerate(found):
        name, cid = f.card, -1 if "?" in f.card else class_id(f.card)
        jokers = [c for c in named.get(k, []) if c.card in JOKER_NAMES]
        if name == "?J" and jokers:
            name = max(jokers, key=lambda c: c.score).card
            cid = class_id(name)
        out.append(CardInstance(name, cid, f.score, f.box, 2))
    return out


def _same_card(read: str, face: str) -> bool:
    """Whether a card read by its corners can be the card a face was found as: the same name, or a
    joker of unknown size (``?J``) and a joker.

    >>> _same_card("KS", "KS"), _same_card("?J", "SJ"), _same_card("SJ", "?J"), _same_card("?J", "KS")
    (True, True, True, False)
    """
    jokers = (*JOKER_NAMES, "?J")
    return read == face or (read in jokers and face in jokers)


def _iou(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    """Intersection over union of two boxes.

    >>> _iou((0, 0, 2, 2), (1, 0, 3, 2))
    0.3333333333333333
    """
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0
