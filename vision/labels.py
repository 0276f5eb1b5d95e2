"""The detector's class list: one class per card identity, in the engine's card notation.

Shared by the synthetic renderer (labels), the trainer and every detector backend, so a class id
means the same card everywhere. 52 cards in suit blocks S, H, D, C (ranks 2..A), then the small
joker ``SJ`` (小王, black) and the big joker ``BJ`` (大王, red/coloured).

>>> CARD_CLASSES[0], CARD_CLASSES[12], CARD_CLASSES[52], CARD_CLASSES[53]
('2S', 'AS', 'SJ', 'BJ')
>>> class_id("10h")
21
"""

from __future__ import annotations

from engine.cards import CARD_NAMES, RANK_NAME
from engine.cards import SUITS as _ENGINE_SUITS

RANKS: tuple[str, ...] = tuple(RANK_NAME[v] for v in range(2, 15))
SUITS: tuple[str, ...] = tuple(_ENGINE_SUITS)
#: The engine's 54-card order (engine.cards.CARD_NAMES): class id = the engine's card index.
CARD_CLASSES: tuple[str, ...] = tuple(CARD_NAMES)
_INDEX = {name: i for i, name in enumerate(CARD_CLASSES)}


class UnknownCardClass(ValueError):
    """A card name that is not one of the 54 detector classes."""


def class_id(name: str) -> int:
    """Class id of a card name (case-insensitive, ``T`` accepted for ten)."""
    key = name.strip().upper()
    if key.startswith("T") and len(key) == 2:
        key = "10" + key[1]
    try:
        return _INDEX[key]
    except KeyError:
        raise UnknownCardClass(f"not a card: {name!r}") from None


def class_name(cid: int) -> str:
    """Card name of a class id."""
    if not 0 <= cid < len(CARD_CLASSES):
        raise UnknownCardClass(f"class id out of range: {cid}")
    return CARD_CLASSES[cid]
