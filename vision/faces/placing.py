"""The faces step's last part: each card found by its face takes the place of what the corner
indices made of it (:func:`place_faces`)."""

from __future__ import annotations

import cv2
import numpy as np

from engine.cards import AnyCard, Card, UnknownCard, is_any_joker, parse_any
from vision.detections import box_inside, box_iou
from vision.faces.found import FaceMatch
from vision.instances import CardInstance


def place_faces(cards: list[CardInstance], found: list[FaceMatch]) -> list[CardInstance]:
    """The faces step: each card found by its face (``found``) replaces the cards the corner
    indices made of it, and is added as a card read from both corners. A card read from both
    corners is the found one when their boxes overlap by half (intersection over union), or when it
    has the found card's name and half its box lies inside the face's (a card mostly covered shows
    a strip along one edge, its two indices at the strip's ends). A card not named (``??``,
    ``?C``; a joker of unknown size is matched as a named card is, and names any joker found) is the found one when half its
    box lies inside the face's (a sign of the card the classifier could not name). One read from a
    single corner is, when its box's middle lies within a fifth of the card's width of one of the
    face's index places (:meth:`FaceMatch.index_points`). A card found under another
    (:attr:`FaceMatch.covered`) replaces a card read from both corners only when not named or named
    as it (the card over it lies mostly in its outline), and one read from a single corner of
    another name only when that corner lies on no card found or located on top
    (:attr:`FaceMatch.located`: those are not added, their corners' reading stands). A joker found without its size (``?J``)
    takes the size its corners named, when they named a joker.

    >>> quad = np.array([[0, 0], [60, 0], [60, 90], [0, 90]], np.float64)
    >>> corner = CardInstance("??", -1, 0.3, (2.0, 4.0, 10.0, 14.0), 1)
    >>> other = CardInstance("5H", 16, 0.9, (40.0, 60.0, 90.0, 150.0), 2)
    >>> [str(c.card) for c in place_faces([corner, other], [FaceMatch("KS", 30, quad)])]
    ['5H', 'KS']
    >>> strip = CardInstance("KS", 46, 0.9, (1.0, 62.0, 61.0, 92.0), 2)
    >>> [str(c.card) for c in place_faces([strip], [FaceMatch("KS", 30, quad)])]
    ['KS']
    >>> inner = CardInstance("??", -1, 0.4, (20.0, 30.0, 40.0, 50.0), 1)
    >>> [str(c.card) for c in place_faces([inner], [FaceMatch("KS", 30, quad)])]
    ['KS']
    >>> joker = CardInstance("?J", -1, 0.8, (5.0, 10.0, 50.0, 60.0), 2)
    >>> [str(c.card) for c in place_faces([joker], [FaceMatch("SJ", 30, quad)])]
    ['SJ']
    >>> big = CardInstance("BJ", 53, 0.9, (2.0, 4.0, 10.0, 14.0), 1)
    >>> [str(c.card) for c in place_faces([big], [FaceMatch("?J", 30, quad)])]
    ['BJ']
    """
    over = [f.quad.astype(np.float32) for f in found if not f.covered]  # cards lying on top
    found = [f for f in found if not f.located]
    if not found:
        return cards
    out = []
    named: dict[int, list[CardInstance]] = {}  # found card → the corner readings it replaces
    inside = box_inside(
        np.array([c.box for c in cards], np.float32).reshape(-1, 4),
        np.array([f.box for f in found], np.float32),
    )  # the share of each card read by its corners that lies in each face's box
    iou = box_iou(
        np.array([c.box for c in cards], np.float64).reshape(-1, 4),
        np.array([f.box for f in found], np.float64),
    )  # each card read by its corners and each face's box: intersection over union
    for i, card in enumerate(cards):
        x1, y1, x2, y2 = card.box
        at = np.array([(x1 + x2) / 2, (y1 + y2) / 2])
        covering = [
            k
            for k, f in enumerate(found)
            if (
                isinstance(card.card, UnknownCard)
                and not card.card.joker
                and inside[i, k] >= 0.5
                or (
                    (not f.covered or _same_card(card.card, f.card))
                    and (iou[i, k] >= 0.5 or (_same_card(card.card, f.card) and inside[i, k] >= 0.5))
                    if card.corners >= 2
                    else float(np.min(np.linalg.norm(f.index_points() - at, axis=1))) <= 0.2 * f.width()
                    and (
                        not f.covered
                        or _same_card(card.card, f.card)
                        or not any(
                            cv2.pointPolygonTest(q, (float(at[0]), float(at[1])), False) >= 0 for q in over
                        )
                    )
                )
            )
        ]
        for k in covering:
            named.setdefault(k, []).append(card)
        if not covering:
            out.append(card)
    for k, f in enumerate(found):
        name = parse_any(f.card)
        jokers = [c for c in named.get(k, []) if isinstance(c.card, Card) and c.card.is_joker]
        if isinstance(name, UnknownCard) and name.joker and jokers:
            name = max(jokers, key=lambda c: c.score).card
        out.append(CardInstance(name, name.code if isinstance(name, Card) else -1, f.score, f.box, 2))
    return out


def _same_card(read: AnyCard, face: str) -> bool:
    """Whether a card read by its corners can be the card a face was found as (named by the
    matcher): the same card, or a joker of unknown size (``?J``) and a joker.

    >>> [_same_card(parse_any(a), b) for a, b in (("KS", "KS"), ("?J", "SJ"), ("SJ", "?J"), ("?J", "KS"))]
    [True, True, True, False]
    """
    b = parse_any(face)
    return read == b or (is_any_joker(read) and is_any_joker(b))
