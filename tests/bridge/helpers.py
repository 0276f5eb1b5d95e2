"""Bridge deals for the tests: logs written by hand, and whole deals played at random by the tests'
own simple rules (never by the code under test)."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

SUITS = "SHDC"
RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
CLOCKWISE = "NESW"


def log(contract: str, declarer: str, *tricks: str, board: int = 1, **extra: Any) -> dict[str, Any]:
    """A bridge log from tricks written ``"W:2C N:3C E:AC S:4C"``."""
    return {
        "game": "bridge",
        "board": board,
        "contract": contract,
        "declarer": declarer,
        "tricks": [{"plays": [p.split(":") for p in t.split()]} for t in tricks],
        **extra,
    }


def suit_of(card: str) -> str:
    return card[-1]


def rank_of(card: str) -> int:
    return RANKS.index(card[:-1])


def winner(plays: list[tuple[str, str]], trump: str | None) -> str:
    """The test's own trick winner: the highest trump, else the highest card of the suit led."""
    led = suit_of(plays[0][1])

    def key(play: tuple[str, str]) -> tuple[int, int]:
        card = play[1]
        return (2 if suit_of(card) == trump else 1 if suit_of(card) == led else 0, rank_of(card))

    return max(plays, key=key)[0]


def next_seat(seat: str) -> str:
    return CLOCKWISE[(CLOCKWISE.index(seat) + 1) % 4]


def deal(rng: random.Random) -> dict[str, list[str]]:
    cards = [r + s for s in SUITS for r in RANKS]
    rng.shuffle(cards)
    return {seat: cards[i * 13 : (i + 1) * 13] for i, seat in enumerate(CLOCKWISE)}


def play(
    rng: random.Random, contract: str, declarer: str, plant: tuple[int, int] | None = None
) -> tuple[list[list[tuple[str, str]]], list[str], tuple[str, int] | None]:
    """A whole deal played: every follower follows suit when it can (a random card), but at
    ``plant`` = (trick, follower) a follower holding the suit led and another discards when it can.
    The tricks, their winners, and the revoke planted (seat, trick) if one was."""
    hands = deal(rng)
    trump = None if contract.endswith("NT") else contract[1]
    leader, tricks, winners, planted = next_seat(declarer), [], [], None
    for t in range(13):
        plays: list[tuple[str, str]] = []
        seat = leader
        for i in range(4):
            hand = hands[seat]
            if i == 0:
                card = rng.choice(hand)
            else:
                led = suit_of(plays[0][1])
                same = [c for c in hand if suit_of(c) == led]
                other = [c for c in hand if suit_of(c) != led]
                if plant == (t, i) and same and other and planted is None:
                    card, planted = rng.choice(other), (seat, t + 1)
                else:
                    card = rng.choice(same or hand)
            hand.remove(card)
            plays.append((seat, card))
            seat = next_seat(seat)
        leader = winner(plays, trump)
        tricks.append(plays)
        winners.append(leader)
    return tricks, winners, planted


def as_log(contract: str, declarer: str, tricks: list[list[tuple[str, str]]], board: int) -> dict[str, Any]:
    return {
        "game": "bridge",
        "board": board,
        "contract": contract,
        "declarer": declarer,
        "tricks": [{"plays": [list(p) for p in t]} for t in tricks],
        "finished": True,
    }


def random_boards(boards: int) -> dict[str, st.SearchStrategy[Any]]:
    """Hypothesis strategies for a board played at random (:func:`play`): its seed, contract
    (level, strain, doubling), declarer and board number (1 to ``boards``)."""
    return {
        "seed": st.integers(0, 2**32),
        "level": st.integers(1, 7),
        "strain": st.sampled_from(["C", "D", "H", "S", "NT"]),
        "doubled": st.sampled_from(["", "X", "XX"]),
        "declarer": st.sampled_from(list(CLOCKWISE)),
        "board": st.integers(1, boards),
    }
