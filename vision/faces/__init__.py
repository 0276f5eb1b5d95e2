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

A court card fanned under another card shows a strip too narrow for its keypoints. Round each card
found, and each card its corners named (located by its own face), the deck's faces are slid over
what shows beside it: a copy of the same card, or an art card of another name
(:meth:`UnderSearch.covered_copies`, :mod:`vision.faces.under`, which the matcher owns). An art
card is looked for under other cards only when the deck's corners do not name it
(:func:`corner_named`, learned once from its faces laid alone): where the corners name the courts,
the strip's corner names it, and on filmed deals the search found nothing there that the corners
did not.

Every card found this way takes the place of whatever the corner indices made of it (a card whose
box centre lies at the face's middle or at one of its corners, where indices are printed): a court
card its corner called "a spade", or ``??``, becomes the king of spades it is.

>>> ART_CARDS[:3], ART_CARDS[-2:]
(('JS', 'QS', 'KS'), ('SJ', 'BJ'))
"""

from vision.faces.matcher import (
    ART_CARDS,
    PROBE_CLOTH,
    PROBE_TURNS,
    FaceMatch,
    FaceMatchConfig,
    FaceMatcher,
    FaceMatcherError,
    corner_named,
)
from vision.faces.placing import place_faces
from vision.faces.under import DIFFER, UnderSearch

__all__ = [
    "ART_CARDS",
    "DIFFER",
    "PROBE_CLOTH",
    "PROBE_TURNS",
    "FaceMatch",
    "FaceMatchConfig",
    "FaceMatcher",
    "FaceMatcherError",
    "UnderSearch",
    "corner_named",
    "place_faces",
]
