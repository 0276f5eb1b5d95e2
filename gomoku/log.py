"""The gomoku log (``shared/spec/games.md``, "Gomoku"), read and checked.

A log names the board's size, the moves in order (colour ``B`` or ``W``, the point, and the
seconds since the previous move was placed, the first since the clock was started), the move
numbers for which each player asked for a long think, and whether the game is over.

>>> log = parse_gomoku_log({"game": "gomoku", "size": 15, "moves": [["B", "h8", 12.4], ["W", "i9", 20]],
...                         "long_thinks": {"B": [], "W": [2]}, "finished": False})
>>> [(m.colour, str(m.point), m.seconds) for m in log.moves], log.long_thinks
([('B', 'h8', 12.4), ('W', 'i9', 20.0)], {'B': (), 'W': (2,)})
>>> parse_gomoku_log({"game": "gomoku", "moves": [["B", "h8", 1], ["W", "h8", 1]]})
Traceback (most recent call last):
...
gomoku.log.GomokuLogError: move 2: W on h8, which B took at move 1
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from gomoku.board import SIZE, SIZES, Point, PointError, parse_point

COLOURS: Final = ("B", "W")
#: The most seconds a move may be timed at (a day: a clock left running is a fault, not a move).
MAX_SECONDS: Final = 86_400.0


class GomokuLogError(ValueError):
    """A gomoku log that cannot be scored; the message is one line naming what is wrong."""


@dataclass(frozen=True)
class Move:
    number: int  # from 1
    colour: str  # "B" or "W"
    point: Point
    seconds: float | None  # since the previous move (None: not timed)


@dataclass(frozen=True)
class GomokuLog:
    size: int
    moves: tuple[Move, ...]
    long_thinks: dict[str, tuple[int, ...]]
    finished: bool

    def to_json(self) -> dict[str, Any]:
        """The log as the spec writes it (what :func:`parse_gomoku_log` reads back)."""
        return {
            "game": "gomoku",
            "size": self.size,
            "moves": [
                [m.colour, str(m.point)] + ([] if m.seconds is None else [m.seconds]) for m in self.moves
            ],
            "long_thinks": {c: list(self.long_thinks.get(c, ())) for c in COLOURS},
            "finished": self.finished,
        }


def _number(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GomokuLogError(f"{where}: the seconds must be a number, not {type(value).__name__}")
    seconds = float(value)
    if not math.isfinite(seconds) or not 0 <= seconds <= MAX_SECONDS:
        raise GomokuLogError(f"{where}: {value!r} seconds is not a move's time (0 to {MAX_SECONDS:.0f})")
    return seconds


def parse_gomoku_log(data: Any) -> GomokuLog:
    """Read and check a gomoku log (JSON already parsed). Raises :class:`GomokuLogError` for a move
    on an occupied point or off the board, colours not alternating, black not first, a bad point
    name, and any malformed field; a move after the game was won is :mod:`gomoku.rules`'s to refuse."""
    if not isinstance(data, Mapping):
        raise GomokuLogError(f"a gomoku log is a JSON object, not {type(data).__name__}")
    if data.get("game", "gomoku") != "gomoku":
        raise GomokuLogError(f'"game" is {data.get("game")!r}: this is gomoku\'s log reader')
    size = data.get("size", SIZE)
    if isinstance(size, bool) or not isinstance(size, int) or size not in SIZES:
        raise GomokuLogError(
            f'"size" must be a board size from {SIZES.start} to {SIZES.stop - 1} (the seed\'s is 15)'
        )
    raw = data.get("moves", [])
    if not isinstance(raw, list):
        raise GomokuLogError('"moves" must be a list of [colour, point, seconds]')
    if len(raw) > size * size:
        raise GomokuLogError(f'"moves": {len(raw)} moves, more than the {size * size} points of the board')
    taken: dict[Point, int] = {}
    moves: list[Move] = []
    for n, item in enumerate(raw, start=1):
        where = f"move {n}"
        if not isinstance(item, list | tuple) or not 2 <= len(item) <= 3:
            raise GomokuLogError(f"{where}: a move is [colour, point, seconds], not {str(item)[:40]}")
        colour = item[0]
        if colour not in COLOURS:
            raise GomokuLogError(f"{where}: the colour must be 'B' or 'W', not {str(colour)[:10]!r}")
        want = COLOURS[(n - 1) % 2]
        if colour != want:
            raise GomokuLogError(
                f"{where}: {colour} moves, but black moves first and the colours alternate ({want}'s turn)"
            )
        try:
            point = parse_point(item[1], size)
        except PointError as exc:
            raise GomokuLogError(f"{where}: {exc}") from None
        if point in taken:
            by = taken[point]
            raise GomokuLogError(
                f"{where}: {colour} on {point}, which {moves[by - 1].colour} took at move {by}"
            )
        seconds = _number(item[2], where) if len(item) == 3 else None
        taken[point] = n
        moves.append(Move(n, colour, point, seconds))
    thinks_raw = data.get("long_thinks", {}) or {}
    if not isinstance(thinks_raw, Mapping) or any(k not in COLOURS for k in thinks_raw):
        raise GomokuLogError('"long_thinks" must be {"B": [move numbers], "W": [move numbers]}')
    thinks: dict[str, tuple[int, ...]] = {}
    for colour in COLOURS:
        numbers = thinks_raw.get(colour, []) or []
        if not isinstance(numbers, list):
            raise GomokuLogError(f'"long_thinks": {colour}\'s must be a list of move numbers')
        for k in numbers:
            if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= size * size:
                raise GomokuLogError(
                    f'"long_thinks": {colour} asked for a long think for move {str(k)[:10]}, not a move number'
                )
            if COLOURS[(k - 1) % 2] != colour:  # a move in the log, or the one being thought about
                raise GomokuLogError(f"\"long_thinks\": move {k} is {COLOURS[(k - 1) % 2]}'s, not {colour}'s")
        if len(set(numbers)) != len(numbers):
            raise GomokuLogError(f'"long_thinks": {colour} names a move twice')
        thinks[colour] = tuple(sorted(numbers))
    finished = data.get("finished", False)
    if not isinstance(finished, bool):
        raise GomokuLogError('"finished" must be true or false')
    return GomokuLog(size, tuple(moves), thinks, finished)
