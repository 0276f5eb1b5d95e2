"""Seats ``S E N W``; play goes S → E → N → W → S (下家 is the next seat). Partners: S+N, E+W.

>>> Seat.S.next, Seat.W.next, Seat.E.partner, Seat.N.side
(Seat.E, Seat.S, Seat.W, 'NS')
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from engine.text import shown


class UnknownSeatError(ValueError):
    """Text that is not one of ``S E N W``."""


class Seat(Enum):
    S = 0
    E = 1
    N = 2
    W = 3

    def __init__(self, index: int) -> None:
        #: The seat's place in ``SEAT_ORDER`` (its value, as a plain attribute for hot loops).
        self.index = index

    def __repr__(self) -> str:
        return f"Seat.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def letter(self) -> SeatName:
        """The seat's name, typed as the one spelling (:data:`SeatName`).

        >>> Seat.W.letter
        'W'
        """
        return SEAT_NAMES[self.index]

    @property
    def next(self) -> Seat:
        """The 下家: the seat that plays after this one."""
        return SEAT_ORDER[(self.index + 1) % 4]

    @property
    def partner(self) -> Seat:
        return SEAT_ORDER[(self.index + 2) % 4]

    @property
    def side(self) -> str:
        """``NS`` or ``EW``."""
        return "NS" if self.index % 2 == 0 else "EW"

    def offset(self, k: int) -> Seat:
        return SEAT_ORDER[(self.index + k) % 4]


SEAT_ORDER: tuple[Seat, ...] = (Seat.S, Seat.E, Seat.N, Seat.W)
#: A seat's name as text (in JSON, pydantic bodies, zones): the one spelling every package uses.
SeatName = Literal["S", "E", "N", "W"]
#: The names in play order, like :data:`SEAT_ORDER`.
#:
#: >>> SEAT_NAMES == tuple(s.name for s in SEAT_ORDER)
#: True
SEAT_NAMES: tuple[SeatName, ...] = ("S", "E", "N", "W")
SIDES: tuple[str, str] = ("NS", "EW")
#: Seats by their exact name (``parse_seat`` also takes other cases and spaces).
SEAT_BY_NAME: dict[str, Seat] = {s.name: s for s in SEAT_ORDER}


def parse_seat(text: object) -> Seat:
    """Seat from ``S``/``E``/``N``/``W`` (case-insensitive); raises :class:`UnknownSeatError`."""
    fast = SEAT_BY_NAME.get(text) if isinstance(text, str) else None
    if fast is not None:
        return fast
    if isinstance(text, str):
        key = text.strip().upper()
        if key in Seat.__members__:
            return Seat[key]
    raise UnknownSeatError(f"unknown seat {shown(text)}")


def side_seats(side: str) -> tuple[Seat, Seat]:
    return (Seat.S, Seat.N) if side == "NS" else (Seat.E, Seat.W)
