"""From board readings to moves (gomoku): a new stone is a move, timed from when it was first seen;
anything else a quiet board shows (two stones at once, a stone of the wrong colour, a stone taken
or moved, something lying between the points) is a look for the referee.

A reading that is ``busy`` (a hand over the board, :mod:`vision.gomoku`) is never taken as the
board, but it still times a stone: a point that shows a new stone while the cells round it are
clear is noted with the frame's time, and a move confirmed later is timed from there (the stone
shows as soon as the fingers leave it; the rest of the hand may linger). A fingertip resting on a
point can look like a stone there, but a finger lying over the board changes the points next to it
too: a stone is noted only while the points round it read as the board did (or show the stones
already noted). Two quick moves (the
next hand over the board before the last one's board could be read twice) come as several new
stones at once: they are moves when each was seen appearing, one after the other, in turn; else a
look. A board is taken when the
same difference from the last board holds for :attr:`MoveTracker.confirm` quiet readings.

>>> from vision.gomoku import Reading
>>> t = MoveTracker(confirm=2)
>>> empty = ["."] * 225
>>> h8 = list(empty); h8[7 * 15 + 7] = "B"
>>> hand = (0, 1)  # the cells a hand covers, far from h8
>>> [t.update(Reading(r, c), s, i) for i, (r, c, s) in enumerate(
...     [(empty, (), 0.0), (h8, hand, 4.0), (h8, (), 4.4), (h8, (), 4.6)])]
[[], [], [], [TrackedMove(number=1, colour='B', point='h8', at=4.0, frame=1)]]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from gomoku.board import SIZE, Point
from vision.gomoku import Reading

#: Seconds the same few cell middles stay covered, with nothing else moving, before they are taken
#: for something lying between the points (a stone off the grid) and put to the referee.
OFF_GRID_S: Final = 3.0


@dataclass(frozen=True)
class TrackedMove:
    number: int
    colour: str
    point: str
    at: float  # source seconds the stone was first seen
    frame: int


@dataclass(frozen=True)
class BoardLook:
    """Something for the referee to look at: what, where, and when (the frame to show)."""

    kind: str  # "two_stones", "wrong_colour", "taken", "moved", "off_grid"
    reason: str
    points: tuple[str, ...]
    at: float
    frame: int


def _name(index: int) -> str:
    return str(Point(index // SIZE, index % SIZE))


def _around(index: int) -> list[int]:
    """The points next to point ``index`` (the 3 × 3 block less the point)."""
    col, row = index // SIZE, index % SIZE
    return [
        c * SIZE + r
        for c in (col - 1, col, col + 1)
        for r in (row - 1, row, row + 1)
        if (c, r) != (col, row) and 0 <= c < SIZE and 0 <= r < SIZE
    ]


def _cells_of(index: int) -> list[int]:
    """The four cell middles round point ``index`` (:meth:`vision.gomoku.Grid.cells`' index,
    ``c × 16 + r`` for the middle at column ``c - 0.5``, row ``r - 0.5``)."""
    col, row = index // SIZE, index % SIZE
    return [c * (SIZE + 1) + r for c in (col, col + 1) for r in (row, row + 1)]


@dataclass
class MoveTracker:
    confirm: int = 2
    off_grid_s: float = OFF_GRID_S
    board: list[str] = field(default_factory=lambda: ["."] * (SIZE * SIZE))
    moves: list[TrackedMove] = field(default_factory=list)
    looks: list[BoardLook] = field(default_factory=list)
    _seen: dict[int, tuple[str, float, int]] = field(default_factory=dict)
    _pending: tuple[tuple[int, str], ...] | None = None
    _count: int = 0
    _looked: set[tuple[tuple[int, str], ...]] = field(default_factory=set)
    _covered: tuple[tuple[int, ...], float, int] | None = None
    _ignored: frozenset[int] = frozenset()

    @property
    def next_colour(self) -> str:
        return "B" if len(self.moves) % 2 == 0 else "W"

    def update(self, reading: Reading, t: float, frame: int) -> list[TrackedMove | BoardLook]:
        """What ``reading`` (at source time ``t``, frame ``frame``) adds: a move, a look, or nothing."""
        out: list[TrackedMove | BoardLook] = []
        covered = set(reading.covered) - self._ignored
        # a point's new stone, seen with the cells round it clear: when it was first seen
        for i, v in enumerate(reading.points):
            if v == self.board[i]:
                self._seen.pop(i, None)
            elif (
                v != "."
                and not covered.intersection(_cells_of(i))
                and all(
                    reading.points[j] == self.board[j] or self._seen.get(j, ("",))[0] == reading.points[j]
                    for j in _around(i)
                )
                and self._seen.get(i, ("",))[0] != v
            ):
                self._seen[i] = (v, t, frame)
        out += self._off_grid(reading, covered, t, frame)
        if covered:
            self._pending, self._count = None, 0
            return out
        diff = tuple((i, v) for i, v in enumerate(reading.points) if v != self.board[i])
        if diff != self._pending:
            self._pending, self._count = diff, 0
        self._count += 1
        if self._count < self.confirm or not diff:
            return out
        added = [(i, v) for i, v in diff if self.board[i] == "." and v != "."]
        taken = [(i, self.board[i]) for i, v in diff if v == "." and self.board[i] != "."]
        changed = [(i, v) for i, v in diff if v != "." and self.board[i] not in (".", v)]
        if len(added) == 1 and not taken and not changed and added[0][1] == self.next_colour:
            i, colour = added[0]
            seen = self._seen.get(i)
            at, at_frame = (seen[1], seen[2]) if seen is not None and seen[0] == colour else (t, frame)
            out.append(self._take(i, colour, at, at_frame))
            return out
        in_turn = self._in_turn(added) if not taken and not changed else None
        if in_turn is not None:  # moves made quicker than the board could be read between them
            out += [self._take(i, colour, at, at_frame) for i, colour, at, at_frame in in_turn]
            return out
        if diff in self._looked:
            return out
        self._looked.add(diff)
        out.append(self._look(added, taken, changed, t, frame))
        self.looks.append(out[-1])  # type: ignore[arg-type]
        return out

    def _take(self, i: int, colour: str, at: float, frame: int) -> TrackedMove:
        move = TrackedMove(len(self.moves) + 1, colour, _name(i), at, frame)
        self.moves.append(move)
        self.board[i] = colour
        self._seen.pop(i, None)
        self._pending, self._count = None, 0
        return move

    def _in_turn(self, added: list[tuple[int, str]]) -> list[tuple[int, str, float, int]] | None:
        """Several new stones that were each seen appearing, one after the other, in turn (the
        colour to move first): the moves, in order; None when they were not (a look)."""
        if len(added) < 2:
            return None
        seen = [(self._seen.get(i), i, colour) for i, colour in added]
        if any(s is None or s[0] != colour for s, _, colour in seen):
            return None
        ordered = sorted(((s[1], s[2], i, colour) for s, i, colour in seen if s is not None))
        colours = [c for *_, c in ordered]
        times = [at for at, *_ in ordered]
        first = self.next_colour
        turn = [first if k % 2 == 0 else ("W" if first == "B" else "B") for k in range(len(ordered))]
        if colours != turn or any(b <= a for a, b in zip(times, times[1:], strict=False)):
            return None
        return [(i, colour, at, at_frame) for at, at_frame, i, colour in ordered]

    def _look(
        self,
        added: list[tuple[int, str]],
        taken: list[tuple[int, str]],
        changed: list[tuple[int, str]],
        t: float,
        frame: int,
    ) -> BoardLook:
        names = tuple(_name(i) for i, _ in [*added, *taken, *changed])
        if (
            taken
            and added
            and not changed
            and len(taken) == 1
            and len(added) == 1
            and taken[0][1] == added[0][1]
        ):
            kind = "moved"
            reason = f"the {taken[0][1]} stone on {_name(taken[0][0])} was moved to {_name(added[0][0])}"
        elif taken or changed:
            kind = "taken"
            parts = [f"{c} on {_name(i)} taken" for i, c in taken]
            parts += [f"{_name(i)} now shows {v}" for i, v in changed]
            reason = "a stone laid before is gone or changed: " + ", ".join(parts)
        elif len(added) > 1:
            kind = "two_stones"
            reason = f"{len(added)} new stones at once: " + ", ".join(f"{c} on {_name(i)}" for i, c in added)
        else:
            kind = "wrong_colour"
            reason = f"a {added[0][1]} stone on {_name(added[0][0])}, but it is {self.next_colour}'s move"
        return BoardLook(kind, reason + " (move " + str(len(self.moves) + 1) + ")", names, t, frame)

    def _off_grid(self, reading: Reading, covered: set[int], t: float, frame: int) -> list[BoardLook]:
        """A few cell middles covered, the same ones for :attr:`off_grid_s`: a look, once; those
        cells are then left out of the busy test (the rest of the board is read on)."""
        now = tuple(sorted(covered))
        if not now or len(now) > 4:
            self._covered = None
            return []
        if self._covered is None or self._covered[0] != now:
            self._covered = (now, t, frame)
            return []
        if t - self._covered[1] < self.off_grid_s:
            return []
        self._ignored = self._ignored | frozenset(now)
        self._covered = None
        near = sorted(
            {_name(min(c // (SIZE + 1), SIZE - 1) * SIZE + min(c % (SIZE + 1), SIZE - 1)) for c in now}
        )
        look = BoardLook(
            "off_grid",
            f"something lies between the points near {', '.join(near)} (a stone off the grid?)",
            tuple(near),
            t,
            frame,
        )
        self.looks.append(look)
        return [look]
