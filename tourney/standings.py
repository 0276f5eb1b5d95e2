"""Standings by each scoring's rules, with the value of every tie-break in the output.

Round points and tie-breaks (``shared/spec/cli.md``, the seeds):

* ``zhku`` (seed 001 notice, 4.4–4.5): a board won 2, drawn 1, lost or forfeited 0; level
  difference +2 / 0 / −2, forfeit −2. Order: points, opponents' points, level difference, lot.
* ``national`` (seed 002 art. 24 timed rounds, art. 27): won 2, drawn 1, lost 0. Order: points,
  rounds won, opponents' points, fewer violations, win ratio (boards won / boards played), lot.
* ``challenge`` (seed 004): won 3, drawn 1, lost 0. Order: points, head-to-head (points taken from
  the entries level on points, in matches between them), small score (the sum of level margins:
  9 against 6 is +3), lot.

A bye is a won board for every pair of the entry, level difference and small score +2 each; the
side that did not forfeit wins its board with +2, the forfeiting side loses it with −2. A team's
round is the sum of its pairs' boards (seed 001); a round is won when the team's board points beat
the opponent's. Opponents' points are the current points of every opponent met (a bye meets none).
The lot is one draw per event from its ``seed``: lot 1 ranks first among otherwise equal entries,
so the standings are a total order.

>>> from tourney.event import parse_event
>>> event = parse_event({"format": "swiss", "scoring": "zhku", "seed": 1,
...     "entries": [{"id": "A"}, {"id": "B"}, {"id": "C"}],
...     "rounds": [{"round": 1, "matches": [
...         {"table": 1, "home": "A", "away": "B", "result": {"home_level": "9", "away_level": "5"}},
...         {"bye": "C"}]}]})
>>> [(r.id, r.points, r.opponents_points, r.level_difference, r.tally.lot) for r in standings(event).rows]
[('C', 2, 0, 2, 2), ('A', 2, 0, 2, 3), ('B', 0, 2, -2, 1)]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from tourney.event import Bye, Entry, Event, Match, Round, Scoring
from tourney.schedule import draw_lots, knockout_progress

#: Board points for a win, a draw and a loss, per scoring.
POINTS: Final[dict[Scoring, tuple[int, int, int]]] = {
    "zhku": (2, 1, 0),
    "national": (2, 1, 0),
    "challenge": (3, 1, 0),
}

#: Each scoring's order after points, as output field names; ``violations`` ranks fewer first.
TIE_BREAKS: Final[dict[Scoring, tuple[str, ...]]] = {
    "zhku": ("opponents_points", "level_difference"),
    "national": ("wins", "opponents_points", "violations", "win_ratio"),
    "challenge": ("head_to_head", "small_score"),
}

#: Level difference (and small score) of a won and a lost board without levels: a bye, a forfeit.
WALKOVER_MARGIN: Final = 2


@dataclass
class Tally:
    """One entry's record over the rounds counted."""

    entry: Entry
    lot: int
    points: int = 0
    level_difference: int = 0
    small_score: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    byes: int = 0
    boards_won: int = 0
    boards_played: int = 0
    violations: int = 0
    #: Opponent met in each match, in round order.
    opponents: list[str] = field(default_factory=list)
    #: Board points taken from each opponent.
    points_against: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    opponents_points: int = 0
    head_to_head: int = 0

    @property
    def played(self) -> int:
        return self.wins + self.draws + self.losses - self.byes

    @property
    def win_ratio(self) -> Fraction:
        return Fraction(self.boards_won, self.boards_played) if self.boards_played else Fraction(0)


@dataclass(frozen=True, slots=True)
class Row:
    rank: int
    tally: Tally
    scoring: Scoring
    #: Extra fields of the format (group, knockout progress), in output order.
    extra: tuple[tuple[str, Any], ...] = ()

    @property
    def id(self) -> str:
        return self.tally.entry.id

    @property
    def points(self) -> int:
        return self.tally.points

    @property
    def opponents_points(self) -> int:
        return self.tally.opponents_points

    @property
    def level_difference(self) -> int:
        return self.tally.level_difference

    def to_json(self) -> dict[str, Any]:
        t = self.tally
        out: dict[str, Any] = {"rank": self.rank, "id": t.entry.id, "name": t.entry.name}
        out.update(self.extra)
        out.update(
            points=t.points,
            opponents_points=t.opponents_points,
            level_difference=t.level_difference,
        )
        if self.scoring == "national":
            out.update(wins=t.wins, violations=t.violations, win_ratio=round(float(t.win_ratio), 6))
        if self.scoring == "challenge":
            out.update(head_to_head=t.head_to_head, small_score=t.small_score)
        out.update(played=t.played, won=t.wins, drawn=t.draws, lost=t.losses, byes=t.byes, lot=t.lot)
        return out


@dataclass(frozen=True, slots=True)
class Standings:
    after_round: int
    scoring: Scoring
    rows: tuple[Row, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "after_round": self.after_round,
            "scoring": self.scoring,
            "order": ["points", *TIE_BREAKS[self.scoring], "lot"],
            "standings": [r.to_json() for r in self.rows],
        }


def complete_rounds(event: Event) -> tuple[Round, ...]:
    """The rounds counted: 1 … N where every match of each has its result (a later round that is
    unfinished, and every round after it, is left out)."""
    done: list[Round] = []
    for rnd in event.rounds:
        if not rnd.complete:
            break
        done.append(rnd)
    return tuple(done)


def _add_board(home: Tally, away: Tally, margin: int | None, forfeit: str | None, scoring: Scoring) -> None:
    win, draw, loss = POINTS[scoring]
    if forfeit is not None:
        winner, loser = (away, home) if forfeit == "home" else (home, away)
        winner.points += win
        loser.points += loss
        winner.points_against[loser.entry.id] += win
        winner.level_difference += WALKOVER_MARGIN
        loser.level_difference -= WALKOVER_MARGIN
        winner.small_score += WALKOVER_MARGIN
        loser.small_score -= WALKOVER_MARGIN
        return
    assert margin is not None
    home.boards_played += 1
    away.boards_played += 1
    home.small_score += margin
    away.small_score -= margin
    if margin == 0:
        for t, other in ((home, away), (away, home)):
            t.points += draw
            t.points_against[other.entry.id] += draw
        return
    winner, loser = (home, away) if margin > 0 else (away, home)
    winner.points += win
    loser.points += loss
    winner.points_against[loser.entry.id] += win
    winner.boards_won += 1
    winner.level_difference += WALKOVER_MARGIN
    loser.level_difference -= WALKOVER_MARGIN


def tally(event: Event, rounds: Iterable[Round]) -> dict[str, Tally]:
    """Every entry's :class:`Tally` over ``rounds`` (points, margins, opponents' points; head-to-head
    is left for :func:`order`, which knows the pools)."""
    lots = draw_lots(event)
    tallies = {e.id: Tally(e, lots[e.id]) for e in event.entries}
    win = POINTS[event.scoring][0]
    for rnd in rounds:
        for item in rnd.items:
            if isinstance(item, Bye):
                t = tallies[item.entry]
                t.byes += 1
                t.wins += 1
                t.points += win * t.entry.boards
                t.level_difference += WALKOVER_MARGIN * t.entry.boards
                t.small_score += WALKOVER_MARGIN * t.entry.boards
                continue
            _add_match(tallies[item.home], tallies[item.away], item, event.scoring)
    for t in tallies.values():
        t.opponents_points = sum(tallies[o].points for o in t.opponents)
    return tallies


def _add_match(home: Tally, away: Tally, match: Match, scoring: Scoring) -> None:
    assert match.result is not None
    before = (home.points, away.points)
    for board in match.result:
        margin = None if board.forfeit is not None else board.margin
        _add_board(home, away, margin, board.forfeit, scoring)
        home.violations += board.violations[0]
        away.violations += board.violations[1]
    home.opponents.append(away.entry.id)
    away.opponents.append(home.entry.id)
    gained = (home.points - before[0], away.points - before[1])
    if gained[0] == gained[1]:
        home.draws += 1
        away.draws += 1
    else:
        winner, loser = (home, away) if gained[0] > gained[1] else (away, home)
        winner.wins += 1
        loser.losses += 1


def sort_key(t: Tally, scoring: Scoring, skip: Sequence[str] = ()) -> tuple[Any, ...]:
    """Ascending key of the scoring's order: points, its tie-breaks (but those in ``skip``), lot."""
    values: list[Any] = [-t.points]
    for name in TIE_BREAKS[scoring]:
        if name in skip:
            continue
        if name == "violations":
            values.append(t.violations)
        elif name == "win_ratio":
            values.append(-t.win_ratio)
        else:
            values.append(-getattr(t, name))
    values.append(t.lot)
    return tuple(values)


def _head_to_head(pool: Sequence[Tally]) -> None:
    """Each entry's points taken from the others of ``pool`` that are level with it on points."""
    level: dict[int, set[str]] = defaultdict(set)
    for t in pool:
        level[t.points].add(t.entry.id)
    for t in pool:
        t.head_to_head = sum(
            n for o, n in t.points_against.items() if o in level[t.points] and o != t.entry.id
        )


def order(tallies: Iterable[Tally], scoring: Scoring) -> list[Tally]:
    """``tallies`` (one pool: a group, or the whole field) in the scoring's order."""
    pool = list(tallies)
    _head_to_head(pool)
    return sorted(pool, key=lambda t: sort_key(t, scoring))


def group_names(event: Event) -> list[str]:
    """Group names in the order they first appear among the entries."""
    return list(dict.fromkeys(e.group for e in event.entries if e.group is not None))


def standings(event: Event) -> Standings:
    """The standings after the last complete round (round-robin: by group, each from rank 1;
    knockout: by knockout progress once it has begun, see :mod:`tourney.pairing`)."""
    rounds = complete_rounds(event)
    tallies = tally(event, rounds)
    if event.format == "knockout":
        progress = knockout_progress(event, rounds)
        if progress is not None:
            return _knockout_standings(event, rounds, tallies, progress)
    if event.grouped and event.format != "swiss":
        rows: list[Row] = []
        for group in group_names(event):
            pool = order((tallies[e.id] for e in event.entries if e.group == group), event.scoring)
            rows.extend(Row(i + 1, t, event.scoring, (("group", group),)) for i, t in enumerate(pool))
        return Standings(len(rounds), event.scoring, tuple(rows))
    ranked = order(tallies.values(), event.scoring)
    return Standings(
        len(rounds), event.scoring, tuple(Row(i + 1, t, event.scoring) for i, t in enumerate(ranked))
    )


def _knockout_standings(
    event: Event, rounds: Sequence[Round], tallies: dict[str, Tally], progress: dict[str, tuple[bool, int]]
) -> Standings:
    """Qualified entries first, then by knockout rounds survived, then the scoring's order."""
    pools: list[str | None] = [*group_names(event)] or [None]
    for group in pools:  # head-to-head within each group
        order([t for t in tallies.values() if t.entry.group == group], event.scoring)
    ranked = sorted(
        tallies.values(),
        key=lambda t: (
            not progress[t.entry.id][0],
            -progress[t.entry.id][1],
            sort_key(t, event.scoring),
        ),
    )
    rows = []
    for i, t in enumerate(ranked):
        extra: list[tuple[str, Any]] = []
        if t.entry.group is not None:
            extra.append(("group", t.entry.group))
        qualified, survived = progress[t.entry.id]
        extra += [("qualified", qualified), ("knockout_rounds_won", survived)]
        rows.append(Row(i + 1, t, event.scoring, tuple(extra)))
    return Standings(len(rounds), event.scoring, tuple(rows))
