"""A bridge event's frame (seed 003, law 8: the movement between rounds): which pairs meet at which
table and which boards they play each round, and an event's results from its boards' scores.

* :func:`mitchell`: the Mitchell movement for a pair event of ``tables`` tables. North-South pair
  ``t`` stays at table ``t``; East-West pairs move up one table a round and the boards down one.
  With an even number of tables the East-West pairs skip a table after half the rounds (the skip
  Mitchell), so that none meets a board set twice; it then has one round fewer than tables.
* :func:`pair_results`: a pair event's standings by match points, North-South and East-West ranked
  apart (a Mitchell has a winner of each direction): each board's traveller scored by
  :func:`bridge.results.matchpoints`, each pair's match points against the tops of the boards it
  played, as a percentage.
* :func:`team_match`: a team match of two tables (law 78's IMPs): each board's North-South scores
  at the table where team A sits North-South and at the one where it sits East-West; team A gains
  their difference, in IMPs.

>>> [(s.table, s.ns, s.ew, s.boards) for s in mitchell(3, boards_per_round=2) if s.round == 2]
[(1, 1, 3, (3, 4)), (2, 2, 1, (5, 6)), (3, 3, 2, (1, 2))]
>>> team_match([(1, 420, -50), (2, -100, -100)]).imps
(10, 0)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bridge.results import imps, matchpoints


class MovementError(ValueError):
    """A movement that cannot be made (too few tables, too many rounds)."""


@dataclass(frozen=True)
class Seating:
    """Who plays what at one table in one round (rounds, tables and pairs numbered from 1)."""

    round: int
    table: int
    ns: int
    ew: int
    boards: tuple[int, ...]


def mitchell(tables: int, boards_per_round: int = 2, rounds: int | None = None) -> list[Seating]:
    """The Mitchell movement (see the module docstring): every table's seating, round by round.
    ``rounds`` defaults to as many as the movement has: ``tables`` when odd, one fewer when even.
    Board set ``s`` (from 0) holds boards ``s × boards_per_round + 1`` on; table ``t`` starts with
    set ``t``. Raises :class:`MovementError` for fewer than 3 tables, fewer than 1 board a round,
    or more rounds than the movement has."""
    if tables < 3:
        raise MovementError(f"a Mitchell needs at least 3 tables, not {tables}")
    if boards_per_round < 1:
        raise MovementError(f"a round plays at least 1 board, not {boards_per_round}")
    most = tables if tables % 2 else tables - 1
    rounds = most if rounds is None else rounds
    if not 1 <= rounds <= most:
        raise MovementError(f"a Mitchell of {tables} tables has 1 to {most} rounds, not {rounds}")
    out = []
    for r in range(rounds):
        skip = 1 if tables % 2 == 0 and r >= tables // 2 else 0
        for t in range(tables):
            ew = (t - r - skip) % tables
            board_set = (t + r) % tables
            first = board_set * boards_per_round + 1
            out.append(Seating(r + 1, t + 1, t + 1, ew + 1, tuple(range(first, first + boards_per_round))))
    return out


@dataclass(frozen=True)
class BoardResult:
    """One line of a traveller: the board, the pairs that played it, North-South's score."""

    board: int
    ns: int
    ew: int
    ns_score: int


@dataclass(frozen=True)
class Standing:
    """A pair's place in its direction: its match points, the tops of the boards it played, and the
    percentage they make (rounded to two places)."""

    direction: str  # "NS" or "EW"
    pair: int
    matchpoints: int
    top: int

    @property
    def percentage(self) -> float:
        return round(100 * self.matchpoints / self.top, 2) if self.top else 0.0


def pair_results(results: Iterable[BoardResult]) -> list[Standing]:
    """The standings of a pair event, North-South first then East-West, each best first (ties by
    pair number): every board's traveller match-pointed (2 for each score beaten, 1 for each tie),
    each pair's total against the tops it could have had.

    >>> lines = [BoardResult(1, 1, 1, 420), BoardResult(1, 2, 2, 450), BoardResult(1, 3, 3, 420)]
    >>> [(s.direction, s.pair, s.matchpoints, s.percentage) for s in pair_results(lines)][:3]
    [('NS', 2, 4, 100.0), ('NS', 1, 1, 25.0), ('NS', 3, 1, 25.0)]
    """
    by_board: dict[int, list[BoardResult]] = {}
    for line in results:
        by_board.setdefault(line.board, []).append(line)
    totals: dict[tuple[str, int], list[int]] = {}
    for lines in by_board.values():
        ns, ew = matchpoints([line.ns_score for line in lines])
        top = 2 * (len(lines) - 1)
        for line, a, b in zip(lines, ns, ew, strict=True):
            for key, mp in ((("NS", line.ns), a), (("EW", line.ew), b)):
                total = totals.setdefault(key, [0, 0])
                total[0] += mp
                total[1] += top
    standings = [Standing(d, p, mp, top) for (d, p), (mp, top) in totals.items()]
    return sorted(standings, key=lambda s: (s.direction != "NS", -s.percentage, s.pair))


@dataclass(frozen=True)
class TeamMatch:
    """A team match's boards: each board's IMPs to team A (team B's are their negatives), and the
    totals (A, B)."""

    boards: tuple[int, ...]
    imps: tuple[int, ...]

    @property
    def totals(self) -> tuple[int, int]:
        gain = sum(v for v in self.imps if v > 0)
        loss = -sum(v for v in self.imps if v < 0)
        return gain, loss


def team_match(boards: Sequence[tuple[int, int, int]]) -> TeamMatch:
    """A two-table team match from each board's ``(board, ns_score_a, ns_score_b)``: North-South's
    score at the table where team A sits North-South, and at the one where it sits East-West.
    Team A gains their difference: law 78's IMPs.

    >>> m = team_match([(1, 620, -100), (2, -50, 140), (3, 110, 110)])
    >>> m.imps, m.totals
    ((12, -5, 0), (12, 5))
    """
    return TeamMatch(tuple(b for b, _, _ in boards), tuple(imps(a - b) for _, a, b in boards))
