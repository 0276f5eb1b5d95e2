"""A duplicate board's dealer and vulnerability by its number (seed 003, law 2; the 1997 Laws'
law 2): the pattern of boards 1–16, repeated by every later 16.

>>> [board_dealer(b).name for b in (1, 2, 3, 4, 17)]
['N', 'E', 'S', 'W', 'N']
>>> [board_vulnerability(b) for b in (1, 2, 3, 4, 8, 16, 20)]
['none', 'NS', 'EW', 'both', 'none', 'EW', 'both']
"""

from __future__ import annotations

from typing import Final, Literal

from engine.seats import Seat

Vulnerability = Literal["none", "NS", "EW", "both"]
VULNERABILITIES: Final[tuple[Vulnerability, ...]] = ("none", "NS", "EW", "both")
#: The board numbers a log may carry.
BOARD_RANGE: Final = (1, 999)

_DEALERS: Final = (Seat.N, Seat.E, Seat.S, Seat.W)
_VULNERABLE: Final[tuple[Vulnerability, ...]] = (
    "none", "NS", "EW", "both",
    "NS", "EW", "both", "none",
    "EW", "both", "none", "NS",
    "both", "none", "NS", "EW",
)  # fmt: skip


def board_dealer(board: int) -> Seat:
    """The dealer of board ``board`` (≥ 1): N, E, S, W in turn."""
    return _DEALERS[(board - 1) % 4]


def board_vulnerability(board: int) -> Vulnerability:
    """Who is vulnerable on board ``board`` (≥ 1): ``none``, ``NS``, ``EW`` or ``both``."""
    return _VULNERABLE[(board - 1) % 16]


def is_vulnerable(vulnerability: Vulnerability, side: str) -> bool:
    """Whether ``side`` (``NS`` or ``EW``) is vulnerable.

    >>> is_vulnerable("NS", "NS"), is_vulnerable("NS", "EW"), is_vulnerable("both", "EW")
    (True, False, True)
    """
    return vulnerability == "both" or vulnerability == side
