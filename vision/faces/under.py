"""The faces step's looking under other cards: an enrolled deck's art cards found from the strip of
them that shows beside a card found or located (:class:`UnderSearch`: a covered copy of the card
over it, or an art card of another name), its faces slid over what shows with
:mod:`vision.faces.ncc`. The matcher (:class:`vision.faces.FaceMatcher`) owns one and hands it the
cards its keypoints found (:meth:`UnderSearch.search`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from copy import copy as shallow_copy
from functools import partial
from typing import TYPE_CHECKING

import cv2
import numpy as np
import numpy.typing as npt

from engine.cards import JOKER_NAMES
from vision.faces.found import ART_CARDS, FaceMatch
from vision.faces.ncc import Spectra, best_place, masked_ncc, ncc_near, near, turned, whole_ncc
from vision.instances import CardInstance

if TYPE_CHECKING:
    from vision.faces.matcher import FaceMatchConfig


class UnderSearch:
    """Looks for an enrolled deck's art cards partly under other cards (:meth:`covered_copies`),
    with the deck's faces in grey (``deck_grey`` at ``covered_h`` pixels high, ``fine_grey`` at
    ``covered_fine`` times that, see :class:`vision.faces.FaceMatchConfig`), the art faces its
    matcher describes (``cards``) and which of them the grey does not tell apart (``twins``, F × F,
    :meth:`vision.faces.FaceMatcher._twin_faces`). It needs no service of the matcher but these."""

    def __init__(
        self,
        config: FaceMatchConfig,
        deck_grey: dict[str, npt.NDArray[np.float32]],
        fine_grey: dict[str, npt.NDArray[np.float32]],
        cards: list[str],
        twins: npt.NDArray[np.bool_],
        corner_named: frozenset[str] = frozenset(),
    ) -> None:
        self.config = config
        self.deck_grey = deck_grey
        self.fine_grey = fine_grey
        self.cards = cards
        self.twins = twins
        #: the art cards the deck's corners name (:func:`vision.faces.corner_named`): none is looked
        #: for under another card but a twin of it (:meth:`_under`); empty: every art card is
        self.corner_named = corner_named
        self._turned_faces: dict[
            tuple[str, float, bool],
            tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.float64]],
        ] = {}

    def with_corner_named(self, named: frozenset[str]) -> UnderSearch:
        """The same search, knowing which art cards the deck's corners name (:attr:`corner_named`)."""
        out = shallow_copy(self)
        out.corner_named = named
        return out

    def search(
        self,
        cards: list[FaceMatch],
        bgr: npt.NDArray[np.uint8],
        full: npt.NDArray[np.float32],
        card_size_px: tuple[float, float] | None,
        decks: int | None,
        read: Sequence[CardInstance],
    ) -> list[FaceMatch]:
        """``cards`` (found by their keypoints in ``bgr``; ``full``: its grey) with the cards found
        partly under them and under the cards of ``read`` the corners named (:meth:`covered_copies`),
        and, last, the cards of ``read`` located to look under them (:meth:`locate`)."""
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
        spectra = Spectra(image, u)
        for turn in turns:
            alpha = self._turned(cards[0], turn)[1]  # every face of the deck has the same size
            nccs, n = spectra.nccs([self._turned(card, turn)[0] for card in cards], alpha)
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


#: the margin round a top card in :meth:`UnderSearch.covered_copy`'s canvas, shares of its face
#: (across, along)
_MARGIN = (0.55, 0.35)

#: where two standardised faces differ by more than this (standard deviations), the pixels that
#: tell a covered copy from another face of the same art (:meth:`UnderSearch._finer`)
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
