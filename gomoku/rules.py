"""The game's result and the clock (seed 004): five or more stones of one colour in an unbroken
line (row, column or diagonal) win, and the game ends at that move; a game neither player can still
win is drawn (no line of five points holds only empty points and one colour's stones); each move
has 30 s, a move with a long think (长考) 120 s, and each player three long thinks (a fourth one
asked for is void: that move has 30 s). A move over its limit is an ``overtime`` for the referee,
who rules on it; the rules report, they do not forfeit.

>>> moves = [["B", "h8", 10], ["W", "a1", 41.5], ["B", "h9", 100]]
>>> out = score_log({"game": "gomoku", "moves": moves, "long_thinks": {"B": [3]}})
>>> out["winner"], out["draw"], out["violations"]
(None, False, [{'kind': 'overtime', 'colour': 'W', 'move': 2, 'seconds': 41.5, 'limit': 30}])
"""

from __future__ import annotations

from typing import Any, Final

from gomoku.board import DIRECTIONS, Point, windows
from gomoku.log import COLOURS, GomokuLog, GomokuLogError, parse_gomoku_log

#: Seed 004 art. 4: the seconds a move has, with a long think, and the long thinks each player has.
MOVE_LIMIT: Final = 30
LONG_LIMIT: Final = 120
LONG_THINKS: Final = 3


def line_through(stones: dict[Point, str], point: Point, size: int) -> list[Point] | None:
    """The longest unbroken line of ``point``'s colour through ``point`` if it holds five stones or
    more (the first direction of :data:`gomoku.board.DIRECTIONS` on a tie), in line order: left to
    right, or bottom to top for a column."""
    colour = stones[point]
    best: list[Point] | None = None
    for dc, dr in DIRECTIONS:
        back = 0
        while (p := point.step(dc, dr, -(back + 1))).on(size) and stones.get(p) == colour:
            back += 1
        ahead = 0
        while (p := point.step(dc, dr, ahead + 1)).on(size) and stones.get(p) == colour:
            ahead += 1
        if back + ahead + 1 >= 5 and (best is None or back + ahead + 1 > len(best)):
            run = [point.step(dc, dr, k) for k in range(-back, ahead + 1)]
            best = sorted(run, key=lambda q: (q.col, q.row)) if dc else sorted(run, key=lambda q: q.row)
    return best


def drawn(stones: dict[Point, str], size: int) -> bool:
    """Whether neither colour can still make five: every line of five points holds both colours."""
    return all(len({stones[p] for p in w if p in stones}) == 2 for w in windows(size))


def limits(log: GomokuLog) -> dict[int, int]:
    """Each move's limit in seconds: 120 for the first three long thinks a player asked for (in move
    order), 30 for every other move (a fourth long think is void)."""
    out = {m.number: MOVE_LIMIT for m in log.moves}
    for colour in COLOURS:
        for k in log.long_thinks.get(colour, ())[:LONG_THINKS]:
            out[k] = LONG_LIMIT
    return out


def score_log(data: Any) -> dict[str, Any]:
    """``tractorcam score`` on a gomoku log: the winner and the winning line, the moves counted, a
    draw, and each overtime. Raises :class:`GomokuLogError` (one line) for a log it refuses,
    a move after the game was won included."""
    log = parse_gomoku_log(data)
    stones: dict[Point, str] = {}
    winner: str | None = None
    line: list[Point] | None = None
    for move in log.moves:
        if winner is not None:
            raise GomokuLogError(
                f"move {move.number}: {move.colour} on {move.point} after the game was won "
                f"({winner} made five at move {move.number - 1})"
            )
        stones[move.point] = move.colour
        found = line_through(stones, move.point, log.size)
        if found is not None:
            winner, line = move.colour, found
    limit = limits(log)
    violations = [
        {
            "kind": "overtime",
            "colour": m.colour,
            "move": m.number,
            "seconds": m.seconds,
            "limit": limit[m.number],
        }
        for m in log.moves
        if m.seconds is not None and m.seconds > limit[m.number]
    ]
    return {
        "game": "gomoku",
        "winner": winner,
        "line": None if line is None else [str(p) for p in line],
        "moves": len(log.moves),
        "draw": winner is None and drawn(stones, log.size),
        "violations": violations,
    }
