"""The next round of an event: Swiss, round robin (circle method) or knockout.

* **Swiss** (seed 001 notice 4.2, seed 002 art. 27). Round 1: when the entries' ratings differ, the
  top half by rating meets the bottom half in order (1 v h+1, 2 v h+2, …: strong against weak,
  art. 27); otherwise the seeded lot decides (a random pairing drawn from ``seed``). Later rounds:
  equal or near points (the squared difference of points is the cost), chosen at random among
  equal choices. Never a rematch, never two entries of one unit, never a second bye while a pairing
  without it exists (:mod:`tourney.matching`); when none exists, the fewest breaks, each listed in
  ``relaxed``. An odd count gives the bye to the lowest-placed entry that has not had one.
* **Round robin**: groups from the entries' ``group`` (one group when none is given), each by the
  circle method over its entries in lot order; an odd group gives a bye each round.
* **Knockout**: with groups, the round robin comes first; then the bracket from group places
  (seed 004: the top two of each group, then the best third-placed entries while the bracket has
  room), group winners against runners-up of other groups, the draw among each place by lot (seed
  004: "重新抽签"). Without groups, the bracket is seeded by rating, or by lot when ratings are all
  equal (seed 002 art. 25), with byes to the best seeds when the count is not a power of two. Each
  later round pairs the winners of neighbouring places of the previous round's list (the list is
  the bracket, top to bottom; a bye stands in its place).

Tables are numbered from 1 in standings order (round 1 of a Swiss: rating order, or lot order; a
knockout: bracket order); the better-placed entry is home. Withdrawn entries are not paired.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tourney.event import Bye, Event, EventFileError, Match, Round
from tourney.matching import Breaks, ByeBreaks, pair_up
from tourney.schedule import (
    board_winner,
    bracket_size,
    circle,
    draw_lots,
    group_stage_rounds,
    groups,
    seed_positions,
)
from tourney.standings import complete_rounds, order, sort_key, standings, tally


class PairingError(EventFileError):
    """An event whose next round cannot be paired (unfinished round, event complete, too few entries)."""


@dataclass(frozen=True, slots=True)
class Relaxed:
    """One rule a pairing breaks: ``rematch``, ``same_unit``, ``second_bye`` or ``same_group``."""

    rule: str
    entries: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "entries": list(self.entries)}


@dataclass(frozen=True, slots=True)
class Pairing:
    round: int
    items: tuple[Match | Bye, ...]
    relaxed: tuple[Relaxed, ...] = ()

    @property
    def matches(self) -> tuple[Match, ...]:
        return tuple(i for i in self.items if isinstance(i, Match))

    @property
    def byes(self) -> tuple[str, ...]:
        return tuple(i.entry for i in self.items if isinstance(i, Bye))

    def to_json(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "matches": [i.to_json(False) for i in self.items],
            "relaxed": [r.to_json() for r in self.relaxed],
        }


def history(rounds: Sequence[Round]) -> tuple[set[frozenset[str]], set[str]]:
    """The pairs that have met (a forfeit counts) and the entries that have had a bye."""
    met = {frozenset((m.home, m.away)) for r in rounds for m in r.matches}
    byes = {b for r in rounds for b in r.byes}
    return met, byes


def pair_next(event: Event) -> Pairing:
    """The next round of ``event``; raises :class:`PairingError` when there is none to pair."""
    for rnd in event.rounds:
        for m in rnd.matches:
            if m.result is None:
                raise PairingError(
                    f"round {rnd.number} is not finished: table {m.table} ({m.home} v {m.away}) has no result"
                )
    number = len(event.rounds) + 1
    if event.format == "swiss":
        return _swiss(event, number)
    if event.format == "round-robin":
        return _round_robin(event, number)
    return _knockout(event, number)


def _active(event: Event) -> list[str]:
    return [e.id for e in event.entries if not e.withdrawn]


def _tables(
    event: Event,
    number: int,
    pairs: Sequence[tuple[str, str]],
    bye: Sequence[str],
    place: dict[str, int],
    relaxed: Sequence[Relaxed] = (),
) -> Pairing:
    """Matches sorted by their better-placed entry (home), tables from 1, byes last."""
    ordered = sorted((tuple(sorted(p, key=lambda e: place[e])) for p in pairs), key=lambda p: place[p[0]])
    items: list[Match | Bye] = [Match(k + 1, home, away) for k, (home, away) in enumerate(ordered)]
    items += [Bye(e) for e in sorted(bye, key=lambda e: place[e])]
    rank = {frozenset(p): k for k, p in enumerate(ordered)}
    # each break named as its match is (home first), in table order; a second bye last
    named = [
        Relaxed(r.rule, ordered[rank[frozenset(r.entries)]] if frozenset(r.entries) in rank else r.entries)
        for r in relaxed
    ]
    named.sort(key=lambda r: (rank.get(frozenset(r.entries), len(rank)), r.rule))
    return Pairing(number, tuple(items), tuple(named))


def rule_breaks(event: Event, met: set[frozenset[str]]) -> Breaks:
    """The Swiss rules a pair of entries breaks, given the pairs that have ``met``: ``rematch``,
    ``same_unit`` (the check pairing and a manual override share)."""
    units = {e.id: e.unit for e in event.entries}

    def breaks(a: str, b: str) -> tuple[str, ...]:
        out: tuple[str, ...] = ()
        if frozenset((a, b)) in met:
            out += ("rematch",)
        if units[a] is not None and units[a] == units[b]:
            out += ("same_unit",)
        return out

    return breaks


def _swiss(event: Event, number: int) -> Pairing:
    if event.rounds_planned is not None and number > event.rounds_planned:
        raise PairingError(f"all {event.rounds_planned} planned rounds are paired (rounds_planned)")
    active = _active(event)
    if len(active) < 2:
        raise PairingError(f"a round needs at least two entries that have not withdrawn, got {len(active)}")
    rounds = complete_rounds(event)
    met, had_bye = history(rounds)
    breaks = rule_breaks(event, met)

    def bye_breaks(a: str) -> tuple[str, ...]:
        return ("second_bye",) if a in had_bye else ()

    ratings = {e.id: e.rating for e in event.entries}
    lots = draw_lots(event)
    if number == 1 and len({ratings[a] for a in active}) > 1:
        by_rating = sorted(active, key=lambda a: (-ratings[a], lots[a]))
        half = len(by_rating) // 2
        seat = {a: k for k, a in enumerate(by_rating)}
        # top and bottom halves interleaved, so each block holds the pairs it prefers
        line = [x for k in range(half) for x in (by_rating[k], by_rating[half + k])] + by_rating[2 * half :]

        def cost(i: int, j: int) -> int:
            return (abs(seat[line[i]] - seat[line[j]]) - half) ** 2

        pairs, bye = pair_up(line, cost=cost, breaks=breaks, bye_breaks=bye_breaks, salt=_salt(event, number))
        return _tables(
            event, number, pairs, [bye] if bye else [], seat, _relaxed(pairs, bye, breaks, bye_breaks)
        )
    line = sorted(active, key=lambda a: lots[a])
    rows = standings(event).rows
    if number > 1:
        playing = set(active)
        line = [row.id for row in rows if row.id in playing]
    points = {row.id: row.points for row in rows}

    def closeness(i: int, j: int) -> int:
        return (points[line[i]] - points[line[j]]) ** 2

    pairs, bye = pair_up(
        line, cost=closeness, breaks=breaks, bye_breaks=bye_breaks, salt=_salt(event, number)
    )
    place = {a: k for k, a in enumerate(line)}
    return _tables(
        event, number, pairs, [bye] if bye else [], place, _relaxed(pairs, bye, breaks, bye_breaks)
    )


def _salt(event: Event, number: int) -> str:
    return f"tourney:{event.seed}:round:{number}"


def _relaxed(
    pairs: Sequence[tuple[str, str]], bye: str | None, breaks: Breaks, bye_breaks: ByeBreaks
) -> list[Relaxed]:
    out = [Relaxed(rule, (a, b)) for a, b in pairs for rule in breaks(a, b)]
    if bye is not None:
        out += [Relaxed(rule, (bye,)) for rule in bye_breaks(bye)]
    return out


def _round_robin(event: Event, number: int, first: int = 1) -> Pairing:
    """Round ``number`` of the group stage (its ``first`` round is event round ``first``)."""
    index = number - first
    total = group_stage_rounds(event)
    if index >= total:
        raise PairingError(f"the round robin is complete ({total} rounds)")
    place = {row.id: k for k, row in enumerate(standings(event).rows)}
    met, _ = history(complete_rounds(event))
    withdrawn = {e.id for e in event.entries if e.withdrawn}
    pairs: list[tuple[str, str]] = []
    byes: list[str] = []
    for members in groups(event).values():
        schedule = circle(members)
        if index >= len(schedule):
            continue
        for a, b in schedule[index]:
            a, b = (None if a in withdrawn else a), (None if b in withdrawn else b)
            if a is not None and b is not None:
                pairs.append((a, b))
            elif a is not None or b is not None:
                byes.append(a if a is not None else b)  # type: ignore[arg-type]
    relaxed = [Relaxed("rematch", (a, b)) for a, b in pairs if frozenset((a, b)) in met]
    return _tables(event, number, pairs, byes, place, relaxed)


def _knockout(event: Event, number: int) -> Pairing:
    start = group_stage_rounds(event)
    if number <= start:
        return _round_robin(event, number)
    if number == start + 1:
        return _bracket(event, number)
    previous = event.rounds[-1]
    through: list[str] = []
    for item in previous.items:
        if isinstance(item, Bye):
            through.append(item.entry)
            continue
        assert item.result is not None
        side = board_winner(item.result)
        if side is None:
            raise PairingError(
                f"round {previous.number} table {item.table} ({item.home} v {item.away}) is level: "
                "a knockout match needs a winner (give 'winner' with the equal levels)"
            )
        through.append(item.home if side == "home" else item.away)
    withdrawn = {e.id for e in event.entries if e.withdrawn}
    through = [e for e in through if e not in withdrawn]
    if len(through) < 2:
        champion = f": {through[0]} won" if through else ""
        raise PairingError(f"the knockout is complete{champion}")
    items: list[Match | Bye] = [
        Match(k // 2 + 1, through[k], through[k + 1]) for k in range(0, len(through) - 1, 2)
    ]
    if len(through) % 2:
        items.append(Bye(through[-1]))
    return Pairing(number, tuple(items))


def qualifiers(event: Event) -> list[str]:
    """The bracket's seeds, best first. With groups: group winners, then runners-up, each place in
    lot order (seed 004 draws the knockout anew), then the best third-placed (then fourth-placed …)
    entries across groups while the bracket (the smallest power of two that holds two per group)
    has room: by the scoring's order without head-to-head, byes left out. Without groups: by rating, or by lot when ratings are equal."""
    lots = draw_lots(event)
    active = _active(event)
    if not event.grouped:
        ratings = {e.id: e.rating for e in event.entries}
        if len({ratings[a] for a in active}) > 1:
            return sorted(active, key=lambda a: (-ratings[a], lots[a]))
        return sorted(active, key=lambda a: lots[a])
    rounds = complete_rounds(event)
    tallies = tally(event, rounds)
    places: list[list[str]] = []
    for members in groups(event).values():
        ranked = [
            t.entry.id for t in order((tallies[m] for m in members), event.scoring) if t.entry.id in active
        ]
        for k, entry_id in enumerate(ranked):
            while len(places) <= k:
                places.append([])
            places[k].append(entry_id)
    size = bracket_size(2 * len(groups(event)))
    seeds = sorted(places[0], key=lambda a: lots[a])
    if len(places) > 1:
        seeds += sorted(places[1], key=lambda a: lots[a])
    # across groups: points from matches (a group of odd size gives each of its entries a bye
    # that a group of even size does not), then the tie-breaks but head-to-head, then lot
    played = tally(event, [Round(r.number, r.matches) for r in rounds])
    for place in places[2:]:
        if len(seeds) >= size:
            break
        ranked_place = sorted(place, key=lambda a: sort_key(played[a], event.scoring, skip=("head_to_head",)))
        seeds += ranked_place[: size - len(seeds)]
    return seeds


def _bracket(event: Event, number: int) -> Pairing:
    """The knockout's first round: seeds in bracket places, byes to the best seeds, and (with
    groups) no two entries of one group in the first round while that can be avoided."""
    seeds = qualifiers(event)
    if len(seeds) < 2:
        raise PairingError(f"a knockout needs at least two entries, got {len(seeds)}")
    size = bracket_size(len(seeds))
    rank = {a: k + 1 for k, a in enumerate(seeds)}  # seed numbers from 1
    byes = seeds[: size - len(seeds)]
    playing = seeds[size - len(seeds) :]
    group_of = {e.id: e.group for e in event.entries}

    def cost(i: int, j: int) -> int:
        # seed s meets seed size + 1 - s in a full bracket
        return (rank[playing[i]] + rank[playing[j]] - (size + 1)) ** 2

    def breaks(a: str, b: str) -> tuple[str, ...]:
        return ("same_group",) if group_of[a] is not None and group_of[a] == group_of[b] else ()

    pairs, _ = pair_up(
        playing, cost=cost, breaks=breaks, bye_breaks=lambda a: (), salt=_salt(event, number), block=None
    )
    # each match (or bye) takes the place of the k-th best seed heading a first-round pair
    heads = sorted(
        [(a,) for a in byes] + [tuple(sorted(p, key=lambda e: rank[e])) for p in pairs],
        key=lambda h: rank[h[0]],
    )
    slots = seed_positions(size)
    slot_heads = sorted(range(size // 2), key=lambda k: min(slots[2 * k], slots[2 * k + 1]))
    placed: list[tuple[str, ...]] = [()] * (size // 2)
    for head, k in zip(heads, slot_heads, strict=True):
        placed[k] = head
    items: list[Match | Bye] = []
    table = 0
    for head in placed:
        if len(head) == 1:
            items.append(Bye(head[0]))
        else:
            table += 1
            items.append(Match(table, head[0], head[1]))
    relaxed = [Relaxed(rule, tuple(p)) for p in pairs for rule in breaks(*p)]
    return Pairing(number, tuple(items), tuple(relaxed))
