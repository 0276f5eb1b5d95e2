"""The board: points named as the spec names them (a column letter ``a``–``o`` from the left as the
camera sees the board from black's side, a row number ``1``–``15`` from black's side: ``h8`` is a
15 × 15 board's centre), and the four directions a line runs in.

>>> p = parse_point("h8", 15)
>>> p, p.col, p.row, str(p)
(Point('h8'), 7, 7, 'h8')
>>> parse_point("p1", 15)
Traceback (most recent call last):
...
gomoku.board.PointError: 'p1' is off a 15 × 15 board (columns a–o, rows 1–15)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: The seed's board.
SIZE: Final = 15
#: The sizes a log may name: up to 26 columns, one letter each.
SIZES: Final = range(5, 27)
LETTERS: Final = "abcdefghijklmnopqrstuvwxyz"
#: row, column, diagonal (up and to the right), anti-diagonal (down and to the right)
DIRECTIONS: Final = ((1, 0), (0, 1), (1, 1), (1, -1))


class PointError(ValueError):
    """A point name that is not one of the board's points."""


@dataclass(frozen=True, order=True)
class Point:
    """An intersection: column and row from 0 (``a1`` is (0, 0))."""

    col: int
    row: int

    def __str__(self) -> str:
        return f"{LETTERS[self.col]}{self.row + 1}"

    def __repr__(self) -> str:
        return f"Point({str(self)!r})"

    def step(self, dc: int, dr: int, k: int = 1) -> Point:
        return Point(self.col + k * dc, self.row + k * dr)

    def on(self, size: int) -> bool:
        return 0 <= self.col < size and 0 <= self.row < size


def parse_point(text: object, size: int = SIZE) -> Point:
    """The point named ``text`` (a letter and a row number; a capital letter is read as its small
    one); :class:`PointError` for anything else or a point off the board."""
    if not isinstance(text, str):
        raise PointError(f"a point is a name like 'h8', not {type(text).__name__}")
    name = text.strip()
    letter, digits = name[:1].lower(), name[1:]
    if (
        not letter
        or letter not in LETTERS
        or not digits.isdigit()
        or not digits.isascii()
        or len(digits) > 2
        or digits.startswith("0")
    ):
        raise PointError(f"{name[:12]!r} is not a point's name (a column letter and a row number, like 'h8')")
    point = Point(LETTERS.index(letter), int(digits) - 1)
    if not point.on(size):
        raise PointError(
            f"{name!r} is off a {size} × {size} board (columns a–{LETTERS[size - 1]}, rows 1–{size})"
        )
    return point


def windows(size: int) -> list[tuple[Point, ...]]:
    """Every line of five points on the board (each direction, each place).

    >>> len(windows(15))  # 11 × 15 rows, as many columns, 11 × 11 of each diagonal
    572
    """
    out = []
    for dc, dr in DIRECTIONS:
        for col in range(size):
            for row in range(size):
                start = Point(col, row)
                if start.step(dc, dr, 4).on(size):
                    out.append(tuple(start.step(dc, dr, k) for k in range(5)))
    return out
