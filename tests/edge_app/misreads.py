"""Simulated deals read with confident misreads, through the table service's decoding and alerts.

A misread the camera makes in every frame (a 5♥ read 5♠ with full agreement) passes every check of
the reading itself; only the rules and the deck's inventory can expose it. :func:`read_deal` plays
a simulated deal (:func:`engine.sim.simulate_deal`), swaps ``misreads`` of its cards (seeded) for
other cards of the deck, feeds the tracker's tricks to :func:`edge_app.deal.build_deal` and
:class:`edge_app.events.EventStream` as the table service does (the deal so far after every
trick, then the finished deal), and returns the violations the truth holds and the ones alerted.
Used by ``tests/edge_app/test_edge_misreads.py`` and ``benchmarks/misreads.py``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from edge_app.deal import DealInfo, build_deal
from edge_app.events import EventStream
from engine.cards import ALL_CARDS
from engine.score import score_log
from engine.sim import simulate_deal
from vision.tracking import TrackedPlay, TrackedTrick

#: every card name of a deck (jokers included)
NAMES = tuple(str(c) for c in ALL_CARDS)

Violation = tuple[str, str, int]  # kind, seat, trick


@dataclass(frozen=True)
class MisreadDeal:
    """One simulated deal read with misreads: what the truth holds and what the table alerted."""

    rules: str
    seed: int
    misread: dict[tuple[int, int, int], str]  # (trick, play, card), 0-based → the card read
    truth: frozenset[Violation]
    alerted: frozenset[Violation]
    refused: str | None

    @property
    def false_alerts(self) -> frozenset[Violation]:
        return self.alerted - self.truth


def read_deal(rules: str, seed: int, misreads: int, *, live: bool = True) -> MisreadDeal:
    """Deal ``seed`` of ``rules`` (a revoke injected when ``seed % 3 == 1``, a failed throw when
    ``seed % 3 == 2``) read with ``misreads`` cards misread in every frame; ``live``: the events of
    the deal so far after each trick too, as the table service sends them."""
    raw = simulate_deal(rules, seed, inject_revoke=seed % 3 == 1, inject_failed_throw=seed % 3 == 2)
    log = {k: v for k, v in raw.items() if k not in ("hands", "injected")}
    truth = frozenset((v["kind"], v["seat"], int(v["trick"])) for v in score_log(log)["violations"])
    rng = random.Random(seed * 31 + misreads)
    plays = [(k, i) for k, t in enumerate(log["tricks"]) for i in range(len(t["plays"]))]
    misread: dict[tuple[int, int, int], str] = {}
    for _ in range(misreads):
        k, i = rng.choice(plays)
        j = rng.randrange(len(log["tricks"][k]["plays"][i][1]))
        misread[(k, i, j)] = rng.choice([n for n in NAMES if n != log["tricks"][k]["plays"][i][1][j]])
    tricks = []
    for k, trick in enumerate(log["tricks"]):
        read = [
            TrackedPlay(
                seat, tuple(sorted(misread.get((k, i, j), c) for j, c in enumerate(cards))), 5, 5, 10 * k + i
            )
            for i, (seat, cards) in enumerate(trick["plays"])
        ]
        tricks.append(TrackedTrick(tuple(read), True))
    info = DealInfo(rules, log["level"], log["trump"], log["dealer"])
    stream = EventStream()
    events = []
    if live:
        for k in range(1, len(tricks)):
            events += stream.update(build_deal(tricks[:k], (), info, so_far=True))
    deal = build_deal(tricks, tuple(log["bottom"]), info)
    events += stream.update(deal, ended=True)
    alerted = frozenset(
        (e.kind, e.seat, int(e.trick))
        for e in events
        if e.type == "alert" and e.kind in ("revoke", "failed_throw") and e.seat and e.trick
    )
    return MisreadDeal(rules, seed, misread, truth, alerted, deal.problem)
