"""How an enrolled deck is shown to the reader: its colours mapped to those of the decks the reader
learnt (dark ink on a light card) before the first step of :class:`vision.reader.CardReader`.

A deck printed light on dark (gold and silver on black) reads as nothing to a reader that learnt
dark indices on white cards; inverted, its gold turns blue, and with red and blue swapped it shows
red and dark grey indices on a light card: a deck the reader knows. ``tractorcam enroll --labels``
picks the look that reads the labelled photos best (:func:`models.enroll.learn_from_photos`) and
keeps it in the deck's folder (``deck.json``).

>>> img = np.array([[[40, 160, 200]]], np.uint8)     # gold (BGR)
>>> apply_look(img, "inverted-swapped").tolist()     # red-orange
[[[55, 95, 215]]]
>>> apply_look(img, "sepia")
Traceback (most recent call last):
...
vision.look.LookError: unknown look 'sepia' (known: plain, inverted, inverted-swapped)
"""

from __future__ import annotations

from typing import Literal, get_args

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
