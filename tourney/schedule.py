"""The fixed parts of a schedule: the lot, the circle method, the knockout bracket's seed positions,
and where an event's group stage ends and its knockout begins.

>>> circle(["A", "B", "C", "D"])
[[('A', 'D'), ('B', 'C')], [('A', 'C'), ('D', 'B')], [('A', 'B'), ('C', 'D')]]
>>> circle(["A", "B", "C"])[0]
[('A', None), ('B', 'C')]
>>> seed_positions(8)
[1, 8, 4, 5, 2, 7, 3, 6]
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from tourney.event import Bye, Event, Result, Round, Side


def draw_lots(event: Event) -> dict[str, int]:
    """Each entry's lot (1 … n; lot 1 ranks first), drawn once per event from its ``seed``.

    The draw: the entry ids in sorted order, shuffled by ``random.Random(f"tourney:{seed}:lot")``;
    an entry's lot is its place in the shuffled list, from 1.

    >>> from tourney.event import Entry
    >>> lots = draw_lots(Event("swiss", "zhku", 42, (Entry("A", "A"), Entry("B", "B"), Entry("C", "C"))))
    >>> sorted(lots.values())
    [1, 2, 3]
    """
    ids = sorted(e.id for e in event.entries)
    random.Random(f"tourney:{event.seed}:lot").shuffle(ids)
    return {entry_id: i + 1 for i, entry_id in enumerate(ids)}


def circle(members: Sequence[str]) -> list[list[tuple[str | None, str | None]]]:
    """A single round robin by the circle method: the first member stays, the others turn one place
    a round; with an odd count ``None`` joins, and whoever meets it sits the round out (a bye)."""
    players: list[str | None] = [*members, *([None] if len(members) % 2 else [])]
    m = len(players)
    rounds = []
    for _ in range(m - 1):
        rounds.append([(players[i], players[m - 1 - i]) for i in range(m // 2)])
        players = [players[0], players[-1], *players[1:-1]]
    return rounds


def seed_positions(size: int) -> list[int]:
    """Seeds 1 … ``size`` (a power of two) in bracket order: neighbours meet in the first round, and
    the best seeds meet as late as they can (seed 002 art. 25: seeded places)."""
    order = [1]
    while len(order) < size:
        n = 2 * len(order)
        order = [s for top in order for s in (top, n + 1 - top)]
    return order


def bracket_size(count: int) -> int:
    """The smallest power of two that holds ``count`` entries."""
    size = 1
    while size < count:
        size *= 2
    return size


def groups(event: Event) -> dict[str | None, list[str]]:
    """The round-robin pools: each group's entry ids in lot order (one pool ``None`` when ungrouped)."""
    lots = draw_lots(event)
    pools: dict[str | None, list[str]] = {}
    for entry in event.entries:
        pools.setdefault(entry.group, []).append(entry.id)
    return {g: sorted(ids, key=lambda i: lots[i]) for g, ids in pools.items()}


def group_stage_rounds(event: Event) -> int:
    """How many rounds the round robin takes (the largest group's); 0 for a Swiss event and for a
    knockout without groups."""
    if event.format == "swiss" or (event.format == "knockout" and not event.grouped):
        return 0
    return max((len(circle(ids)) for ids in groups(event).values()), default=0)


def knockout_progress(event: Event, rounds: Sequence[Round]) -> dict[str, tuple[bool, int]] | None:
    """For a knockout whose bracket has begun within ``rounds``: each entry's (qualified, knockout
    rounds won: a match it went through, or a bye); ``None`` before the bracket's first round."""
    start = group_stage_rounds(event)
    if event.format != "knockout" or len(rounds) <= start:
        return None
    first = rounds[start]
    entered = {i.entry for i in first.items if isinstance(i, Bye)}
    entered |= {e for m in first.matches for e in (m.home, m.away)}
    won = dict.fromkeys((e.id for e in event.entries), 0)
    for rnd in rounds[start:]:
        for item in rnd.items:
            if isinstance(item, Bye):
                won[item.entry] += 1
                continue
            decided = None if item.result is None else board_winner(item.result)
            if decided is not None:
                won[item.home if decided == "home" else item.away] += 1
    return {e.id: (e.id in entered, won[e.id]) for e in event.entries}


def board_winner(result: Sequence[Result]) -> Side | None:
    """The side that goes through a match: more boards decided its way (a team's pairs' boards),
    then the larger sum of level margins; ``None`` when still level.

    >>> board_winner((Result("9", "5"), Result("4", "6")))
    'home'
    >>> board_winner((Result("7", "7"),)) is None, board_winner((Result("7", "7", winner="away"),))
    (True, 'away')
    """
    home = sum(1 for r in result if r.decided == "home")
    away = sum(1 for r in result if r.decided == "away")
    if home == away:
        home, away = sum(r.margin for r in result), 0
    if home == away:
        return None
    return "home" if home > away else "away"
