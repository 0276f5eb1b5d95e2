"""Gomoku at the table (seed 004: the 五子棋挑战赛 of the event's challenge): the gomoku log and its
score (``shared/spec/games.md``, "Gomoku"), pure and standard-library only.

* :mod:`gomoku.board`: points (``h8``), the board and its lines;
* :mod:`gomoku.log`: the log read and checked (:class:`GomokuLogError` for one it refuses);
* :mod:`gomoku.rules`: the winner and the winning line, a draw once no five is possible, and the
  move clock (seed 004 art. 4); :func:`score_log` is ``tractorcam score`` on a gomoku log;
* :mod:`gomoku.sgf`: the game record as SGF (FF[4], ``GM[4]``: gomoku / renju), written and read.

>>> from gomoku import score_log
>>> moves = [["B", p, 3.0] for p in ("h8", "h9", "h10", "h11", "h12")]
>>> for k, p in enumerate(("a1", "b1", "c1", "d1")):
...     moves.insert(2 * k + 1, ["W", p, 3.0])
>>> out = score_log({"game": "gomoku", "size": 15, "moves": moves, "finished": True})
>>> out["winner"], out["line"], out["moves"]
('B', ['h8', 'h9', 'h10', 'h11', 'h12'], 9)
"""

from __future__ import annotations

from gomoku.board import Point, parse_point
from gomoku.log import GomokuLog, GomokuLogError, parse_gomoku_log
from gomoku.rules import score_log

__all__ = ["GomokuLog", "GomokuLogError", "Point", "parse_gomoku_log", "parse_point", "score_log"]
