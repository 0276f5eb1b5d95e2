"""How an enrolled deck is shown to the reader: its colours mapped to those of the decks the reader
learnt (dark ink on a light card) before the first step of :class:`vision.reader.CardReader`.

A deck printed light on dark (gold and silver on black) reads as nothing to a reader that learnt
dark indices on white cards; inverted, its gold turns blue, and with red and blue swapped it shows
red and dark grey indices on a light card: a deck the reader knows. ``tractorcam enroll --labels``
picks the look that reads the labelled photos best (:func:`models.enroll.learn_from_photos`) and
keeps it in the deck's folder (``deck.json``).

A deck printed on glittering card stock shows the localiser a speck of light every few pixels, and
it boxes those instead of the indices. :func:`despeckle` (a small median filter) shows the localiser
the deck without them; the heads still read the crops as they are. Enrollment keeps it when it reads
the labelled photos better (``deck.json``: ``despeckle``).

>>> img = np.array([[[40, 160, 200]]], np.uint8)     # gold (BGR)
>>> apply_look(img, "inverted-swapped").tolist()     # red-orange
[[[55, 95, 215]]]
>>> speck = np.zeros((5, 5, 3), np.uint8); speck[2, 2] = 255   # one bright speck of glitter
>>> int(despeckle(speck, 3).max()), int(despeckle(speck, 0).max())
(0, 255)
>>> apply_look(img, "sepia")
Traceback (most recent call last):
...
vision.look.LookError: unknown look 'sepia' (known: plain, inverted, inverted-swapped)
"""

from __future__ import annotations

from typing import Literal, get_args

import cv2
import numpy as np
import numpy.typing as npt

Look = Literal["plain", "inverted", "inverted-swapped"]
LOOKS: tuple[Look, ...] = get_args(Look)


class LookError(ValueError):
    """An unknown look (one line)."""


def apply_look(image: npt.NDArray[np.uint8], look: str) -> npt.NDArray[np.uint8]:
    """``image`` (BGR) as ``look`` shows it: ``plain`` as it is, ``inverted`` (255 − each channel),
    ``inverted-swapped`` (inverted, then blue and red swapped)."""
    if look == "plain":
        return image
    if look == "inverted":
        return np.ascontiguousarray(255 - image)
    if look == "inverted-swapped":
        return np.ascontiguousarray((255 - image)[..., ::-1])
    raise LookError(f"unknown look {look!r} (known: {', '.join(LOOKS)})")


#: Median filter sizes :func:`despeckle` takes (0: none).
DESPECKLE_SIZES = (0, 3, 5)


def despeckle(image: npt.NDArray[np.uint8], size: int) -> npt.NDArray[np.uint8]:
    """``image`` with specks smaller than about ``size`` pixels removed (a ``size`` × ``size`` median
    filter; 0: the image as it is)."""
    if size == 0:
        return image
    if size not in DESPECKLE_SIZES:
        raise LookError(f"despeckle {size!r}: one of {', '.join(map(str, DESPECKLE_SIZES))}")
    return np.asarray(cv2.medianBlur(image, size), dtype=np.uint8)
