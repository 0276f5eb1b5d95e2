"""The game record as SGF (Smart Game Format, FF[4]) with ``GM[4]``, the game number SGF gives
gomoku and renju, which gomoku programs read (Renlib, Yixin, Piskvork's tools and most SGF
editors): ``SZ`` the board, one node a move (``B[hh]``, ``W[ii]``), ``RE`` the result once known.

SGF names a point by two letters, the column from the left and the row **from the top**; the
log's rows count from black's side, the bottom of the board as the camera sees it, so ``h8`` is
``hh`` on 15 × 15 and ``a1`` is ``ao``. Each move's seconds (and a long think) ride in its
comment, ``C[12.4 s]`` or ``C[95 s, long think]``, which :func:`read_sgf` reads back.

>>> from gomoku.log import parse_gomoku_log
>>> log = parse_gomoku_log({"game": "gomoku", "moves": [["B", "h8", 3.5], ["W", "a1", 95]],
...                         "long_thinks": {"W": [2]}})
>>> text = to_sgf(log)
>>> text
'(;FF[4]GM[4]SZ[15]CA[UTF-8]AP[tractorcam]PB[Black]PW[White];B[hh]C[3.5 s];W[ao]C[95 s, long think])'
>>> read_sgf(text) == log
True
"""

from __future__ import annotations

import re
from typing import Any, Final

from gomoku.board import LETTERS, Point
from gomoku.log import GomokuLog, GomokuLogError, parse_gomoku_log
from gomoku.rules import score_log

_PROPERTY: Final = re.compile(r"([A-Z]{1,2})((?:\s*\[(?:[^\]\\]|\\.)*\])+)", re.S)
_VALUE: Final = re.compile(r"\[((?:[^\]\\]|\\.)*)\]", re.S)
_SECONDS: Final = re.compile(r"^\s*(\d+(?:\.\d+)?) s(, long think)?\s*$")


class SgfError(ValueError):
    """An SGF file that is not a gomoku game record this module reads (one line)."""


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _sgf_point(point: Point, size: int) -> str:
    return LETTERS[point.col] + LETTERS[size - 1 - point.row]


def _seconds(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def to_sgf(log: GomokuLog, black: str = "Black", white: str = "White") -> str:
    """The game as one SGF game tree; a finished game's result as ``RE``: ``B+`` or ``W+`` for a
    win, ``0`` for a draw, ``?`` for a game over without either (stopped by the referee)."""
    head = f"FF[4]GM[4]SZ[{log.size}]CA[UTF-8]AP[tractorcam]PB[{_escape(black)}]PW[{_escape(white)}]"
    if log.finished:
        result = score_log(log.to_json())
        head += "RE[" + (f"{result['winner']}+" if result["winner"] else "0" if result["draw"] else "?") + "]"
    nodes = [f";{head}"]
    thinks = {n for numbers in log.long_thinks.values() for n in numbers}
    for m in log.moves:
        node = f";{m.colour}[{_sgf_point(m.point, log.size)}]"
        if m.seconds is not None:
            node += f"C[{_seconds(m.seconds)} s{', long think' if m.number in thinks else ''}]"
        nodes.append(node)
    return "(" + "".join(nodes) + ")"


def read_sgf(text: str) -> GomokuLog:
    """The main line of an SGF game record of gomoku (``GM[4]``; ``GM`` absent is taken as
    gomoku) as a log; :class:`SgfError` for anything else."""
    start = text.find("(;")
    if start < 0:
        raise SgfError("not an SGF game record: no '(;'")
    body = text[start + 1 :]
    nodes: list[dict[str, list[str]]] = []
    # The main line: the root's nodes, then each first variation's; once a variation of the main
    # line closes, what follows (its siblings, the tree's end) is not the main line.
    main = True
    i = 0
    current: dict[str, list[str]] | None = None
    while i < len(body):
        ch = body[i]
        if ch in "()":
            if ch == ")":
                main = False
            i += 1
            continue
        if ch == ";":
            current = {}
            if main:
                nodes.append(current)
            i += 1
            continue
        match = _PROPERTY.match(body, i)
        if match is not None:
            if current is not None and main:
                values = _VALUE.findall(match.group(2))
                current[match.group(1)] = [v.replace("\\]", "]").replace("\\\\", "\\") for v in values]
            i = match.end()
            continue
        if ch.isspace():
            i += 1
            continue
        raise SgfError(f"SGF: unexpected {ch!r} at character {start + 1 + i}")
    if not nodes:
        raise SgfError("not an SGF game record: no node")
    root = nodes[0]
    if root.get("GM", ["4"])[0].strip() != "4":
        raise SgfError(f"GM[{root['GM'][0][:5]}] is not gomoku (GM[4])")
    try:
        size = int(root.get("SZ", ["15"])[0].split(":")[0])
    except ValueError:
        raise SgfError(f"SZ[{root['SZ'][0][:8]}] is not a board size") from None
    moves: list[list[Any]] = []
    thinks: dict[str, list[int]] = {"B": [], "W": []}
    for node in nodes[1:]:
        colour = "B" if "B" in node else "W" if "W" in node else None
        if colour is None:
            continue
        value = node[colour][0].strip()
        if len(value) != 2 or any(c not in LETTERS[:size] for c in value):
            raise SgfError(
                f"move {len(moves) + 1}: {colour}[{value[:5]}] is not a point of a {size} × {size} board"
            )
        name = f"{value[0]}{size - LETTERS.index(value[1])}"
        move: list[Any] = [colour, name]
        said = _SECONDS.match(node.get("C", [""])[0])
        if said is not None:
            move.append(float(said.group(1)))
            if said.group(2):
                thinks[colour].append(len(moves) + 1)
        moves.append(move)
    try:
        return parse_gomoku_log(
            {"game": "gomoku", "size": size, "moves": moves, "long_thinks": thinks, "finished": "RE" in root}
        )
    except GomokuLogError as exc:
        raise SgfError(f"SGF: {exc}") from None
