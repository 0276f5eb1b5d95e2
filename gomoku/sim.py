"""A gomoku game played by two simple players, for films and tests: each move takes a five if it
can, blocks the opponent's four, else extends its own lines near the stones already down, with
some chance. Each move is timed as a table would see it (mostly a few seconds, now and then a long
think the player asked for, now and then a move over its time). The log is the spec's
(``shared/spec/games.md``) with one key of its own a film needs: ``"presses"``, the moments (seconds
from the clock's start) a player pressed the long-think button, each just after the move before.

>>> log = simulate_game(3)
>>> log["game"], log["size"], log["finished"], len(log["moves"]) >= 9
('gomoku', 15, True, True)
>>> from gomoku.rules import score_log
>>> score_log(log)["winner"] in ("B", "W")
True
"""

from __future__ import annotations

import random
from typing import Any, Final

from gomoku.board import DIRECTIONS, SIZE, Point
from gomoku.rules import LONG_LIMIT, MOVE_LIMIT

#: The longest game simulated (a game not won by then stops there, unfinished).
MAX_MOVES: Final = 120


def _run(stones: dict[Point, str], p: Point, colour: str, dc: int, dr: int) -> int:
    """The stones of ``colour`` in line through ``p`` (counting ``p``) along one direction."""
    n = 1
    for sign in (1, -1):
        k = 1
        while (q := p.step(dc, dr, sign * k)).on(SIZE) and stones.get(q) == colour:
            n += 1
            k += 1
    return n


def _value(stones: dict[Point, str], p: Point, colour: str) -> int:
    return max(_run(stones, p, colour, dc, dr) for dc, dr in DIRECTIONS)


def _choose(stones: dict[Point, str], colour: str, rng: random.Random) -> Point:
    other = "W" if colour == "B" else "B"
    if not stones:
        return Point(SIZE // 2 + rng.randint(-2, 2), SIZE // 2 + rng.randint(-2, 2))
    near = {
        q
        for p in stones
        for dc in (-2, -1, 0, 1, 2)
        for dr in (-2, -1, 0, 1, 2)
        if (q := p.step(dc, dr)).on(SIZE) and q not in stones
    }
    options = sorted(near)
    for need in ((colour, 5), (other, 5), (other, 4)):
        hits = [q for q in options if _value(stones, q, need[0]) >= need[1]]
        if hits and (need[1] == 5 or rng.random() < 0.8):
            return rng.choice(hits)
    scored = [(_value(stones, q, colour) + 0.6 * _value(stones, q, other) + rng.random(), q) for q in options]
    scored.sort(reverse=True)
    return scored[min(len(scored) - 1, int(rng.expovariate(1.2)))][1]


def simulate_game(seed: int, *, long_think: float = 0.06, overtime: float = 0.04) -> dict[str, Any]:
    """A game from ``seed``: the log (won, or stopped unfinished at :data:`MAX_MOVES`) with each
    move's seconds, the long thinks asked for (three at most count; a player sometimes asks a
    fourth, which is void) and the button presses that asked for them."""
    rng = random.Random(seed)
    stones: dict[Point, str] = {}
    moves: list[list[Any]] = []
    thinks: dict[str, list[int]] = {"B": [], "W": []}
    presses: list[dict[str, Any]] = []
    clock = 0.0
    won = False
    for n in range(1, MAX_MOVES + 1):
        colour = "B" if n % 2 else "W"
        p = _choose(stones, colour, rng)
        roll = rng.random()
        if n > 2 and roll < long_think:
            thinks[colour].append(n)
            presses.append({"t": round(clock + rng.uniform(1.0, 4.0), 2), "colour": colour})
            seconds = rng.uniform(35.0, LONG_LIMIT + 8.0) if len(thinks[colour]) <= 3 else rng.uniform(31, 60)
        elif roll < long_think + overtime:
            seconds = rng.uniform(MOVE_LIMIT + 1.0, MOVE_LIMIT + 12.0)
        else:
            seconds = min(MOVE_LIMIT - 2.0, max(1.5, rng.lognormvariate(1.6, 0.5)))
        seconds = round(seconds, 1)
        clock += seconds
        stones[p] = colour
        moves.append([colour, str(p), seconds])
        if _value(stones, p, colour) >= 5:
            won = True
            break
    return {
        "game": "gomoku",
        "size": SIZE,
        "moves": moves,
        "long_thinks": thinks,
        "finished": won,
        "presses": presses,
    }
