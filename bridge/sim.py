"""A bridge board played at random, for films and tests: the deal, a contract, and play that follows
suit whenever it can, optionally with one revoke injected (a player who holds the suit led
discarding another suit). The log is the spec's (``shared/spec/games.md``), with two keys of its
own a film needs: ``"hands"`` (each seat's 13 cards as dealt) and ``"injected"`` (the revoke made,
if any).

>>> log = simulate_board(7, board=3)
>>> log["game"], log["board"], len(log["tricks"]), sorted(len(h) for h in log["hands"].values())
('bridge', 3, 13, [13, 13, 13, 13])
>>> injected = simulate_board(7, board=3, inject_revoke=True)["injected"]
>>> sorted(injected)
['seat', 'suit', 'trick']
"""

from __future__ import annotations

import random
from typing import Any, Final

from bridge.contract import STRAINS
from bridge.log import TRICKS, clockwise
from bridge.play import winner_of
from engine.cards import CARD_NAMES, SUITS
from engine.seats import Seat

#: Contract levels drawn, the low ones more often (as at a table).
LEVELS: Final = (1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 6, 7)


def _suit(code: int) -> str:
    return SUITS[code // 13]


def simulate_board(
    seed: int,
    *,
    board: int | None = None,
    contract: str | None = None,
    declarer: str | None = None,
    inject_revoke: bool = False,
) -> dict[str, Any]:
    """A finished board (13 tricks) from ``seed``: the board number (1–32 unless given), contract
    and declarer drawn unless given; dummy's 13 cards as laid. With ``inject_revoke`` one follower
    who holds the suit led discards another suit on a trick 2–10 (the first such chance from a
    trick drawn), so the revoke is established and proven by a later play."""
    rng = random.Random(seed)
    board = board if board is not None else rng.randint(1, 32)
    if contract is None:
        level = rng.choice(LEVELS)
        doubling = rng.choice(["", "", "", "", "X", "XX"])
        contract = f"{level}{rng.choice(STRAINS)}{doubling}"
    strain = contract.rstrip("X")[1:]
    trump = None if strain == "NT" else strain
    declarer_seat = Seat[declarer] if declarer is not None else rng.choice(list(Seat))
    codes = list(range(52))
    rng.shuffle(codes)
    hands = {seat: sorted(codes[i * TRICKS : (i + 1) * TRICKS]) for i, seat in enumerate(Seat)}
    dealt = {seat.name: [CARD_NAMES[c] for c in cards] for seat, cards in hands.items()}
    held = {seat: list(cards) for seat, cards in hands.items()}
    plant_from = rng.randint(2, 10) if inject_revoke else None
    injected: dict[str, Any] | None = None
    leader = clockwise(declarer_seat)
    tricks = []
    for t in range(TRICKS):
        seat = leader
        plays: list[tuple[Seat, int]] = []
        for i in range(4):
            hand = held[seat]
            if i == 0:
                card = rng.choice(hand)
            else:
                led = _suit(plays[0][1])
                same = [c for c in hand if _suit(c) == led]
                other = [c for c in hand if _suit(c) != led]
                plant = plant_from is not None and injected is None and t + 1 >= plant_from and t + 1 <= 10
                if plant and len(same) >= 1 and other:
                    card = rng.choice(other)
                    injected = {"seat": seat.name, "trick": t + 1, "suit": led}
                else:
                    card = rng.choice(same or hand)
            hand.remove(card)
            plays.append((seat, card))
            seat = clockwise(seat)
        leader = plays[winner_of([c for _, c in plays], trump)][0]
        tricks.append({"plays": [[s.name, CARD_NAMES[c]] for s, c in plays]})
    dummy = declarer_seat.partner
    log: dict[str, Any] = {
        "game": "bridge",
        "board": board,
        "contract": contract,
        "declarer": declarer_seat.name,
        "dummy": dealt[dummy.name],
        "tricks": tricks,
        "finished": True,
        "hands": dealt,
    }
    if injected is not None:
        log["injected"] = injected
    return log
