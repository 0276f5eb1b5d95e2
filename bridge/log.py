"""The bridge log (``shared/spec/games.md``, "Bridge"), read and checked.

A log names its board, contract and declarer, the tricks in play order (one card per seat; the
opening lead by declarer's left-hand opponent, each later trick led by the last one's winner, play
going clockwise: N → E → S → W), optionally dummy's thirteen cards as laid face up and a claim.
Cards are the engine's (:mod:`engine.cards`), unknown ones included (``??``, ``A?``, ``?S``); a
joker is no bridge card.

>>> log = parse_bridge_log({"game": "bridge", "board": 7, "contract": "4HX", "declarer": "S",
...     "tricks": [{"plays": [["W", "KD"], ["N", "2D"], ["E", "5D"], ["S", "AD"]]}]})
>>> str(log.contract), log.declarer.name, log.dealer.name, log.vulnerable, log.leader_of_first.name
('4HX', 'S', 'S', 'both', 'W')
>>> parse_bridge_log({"game": "bridge", "board": 1, "contract": "3NT", "declarer": "N",
...     "tricks": [{"plays": [["S", "2C"]]}]})
Traceback (most recent call last):
...
bridge.log.BridgeLogError: trick 1, play 1: S plays out of turn (E leads the first trick, declarer N's left-hand opponent)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from bridge.board import BOARD_RANGE, VULNERABILITIES, Vulnerability, board_dealer, board_vulnerability
from bridge.contract import Contract, ContractError, parse_contract
from engine.cards import AnyCard, Card, UnknownCard, UnknownCardError, parse_any
from engine.seats import Seat, UnknownSeatError, parse_seat
from engine.text import shown

#: A deal's tricks, and the cards each hand holds.
TRICKS: Final = 13


class BridgeLogError(ValueError):
    """A bridge log that cannot be scored; the message is one line naming what is wrong."""


def clockwise(seat: Seat) -> Seat:
    """The seat that plays after ``seat`` at bridge (its left-hand opponent).

    >>> [clockwise(s).name for s in (Seat.N, Seat.E, Seat.S, Seat.W)]
    ['E', 'S', 'W', 'N']
    """
    return seat.offset(3)


@dataclass(frozen=True)
class Play:
    seat: Seat
    card: AnyCard


@dataclass(frozen=True)
class Claim:
    """Play stopped after trick ``after_trick``; declarer's side takes ``declarer_tricks`` in all."""

    declarer_tricks: int
    after_trick: int


@dataclass(frozen=True)
class BridgeLog:
    board: int
    contract: Contract
    declarer: Seat | None  # None: passed out
    vulnerable: Vulnerability
    tricks: tuple[tuple[Play, ...], ...]
    dummy: tuple[AnyCard, ...] | None = None
    claim: Claim | None = None
    finished: bool = False

    @property
    def dealer(self) -> Seat:
        return board_dealer(self.board)

    @property
    def dummy_seat(self) -> Seat | None:
        return None if self.declarer is None else self.declarer.partner

    @property
    def leader_of_first(self) -> Seat | None:
        """Who makes the opening lead: declarer's left-hand opponent."""
        return None if self.declarer is None else clockwise(self.declarer)

    @property
    def trump(self) -> str | None:
        """The trump suit, None in no trumps (or passed out)."""
        return None if self.contract.passed_out or self.contract.strain == "NT" else self.contract.strain

    def to_json(self) -> dict[str, Any]:
        """The log as the spec writes it (:func:`parse_bridge_log` reads it back to an equal log);
        ``vulnerable`` only where it is not the board's own.

        >>> log = parse_bridge_log({"game": "bridge", "board": 2, "contract": "pass", "vulnerable": "NS"})
        >>> log.to_json()
        {'game': 'bridge', 'board': 2, 'contract': 'PASS', 'tricks': [], 'finished': False}
        >>> parse_bridge_log(log.to_json()) == log
        True
        """
        out: dict[str, Any] = {"game": "bridge", "board": self.board, "contract": str(self.contract)}
        if self.declarer is not None:
            out["declarer"] = self.declarer.name
        if self.vulnerable != board_vulnerability(self.board):
            out["vulnerable"] = self.vulnerable
        if self.dummy is not None:
            out["dummy"] = [str(c) for c in self.dummy]
        out["tricks"] = [{"plays": [[p.seat.name, str(p.card)] for p in trick]} for trick in self.tricks]
        if self.claim is not None:
            out["claim"] = {
                "declarer_tricks": self.claim.declarer_tricks,
                "after_trick": self.claim.after_trick,
            }
        out["finished"] = self.finished
        return out


def _int(value: object, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise BridgeLogError(f'"{name}" must be a whole number {lo} to {hi}, not {shown(value)}')
    return value


def _card(text: object, where: str) -> AnyCard:
    if not isinstance(text, str):
        raise BridgeLogError(f"{where}: a card is text such as 'AS' or '??', not {shown(text)}")
    try:
        card = parse_any(text)
    except UnknownCardError as exc:
        raise BridgeLogError(f"{where}: {exc}") from None
    if (isinstance(card, Card) and card.is_joker) or (isinstance(card, UnknownCard) and card.joker):
        raise BridgeLogError(f"{where}: {shown(text)} is a joker, and bridge has none")
    return card


def parse_bridge_log(data: Any) -> BridgeLog:
    """The log ``data`` (parsed JSON) read and checked as far as it can be without the tricks'
    winners (:func:`bridge.play.follow` checks each trick's leader); raises :class:`BridgeLogError`."""
    if not isinstance(data, Mapping):
        raise BridgeLogError(f"a bridge log is a JSON object, not {type(data).__name__}")
    if data.get("game") != "bridge":
        raise BridgeLogError(f'a bridge log says "game": "bridge", not {shown(data.get("game"))}')
    if "board" not in data:
        raise BridgeLogError('a bridge log needs its "board" (1 to 999)')
    board = _int(data["board"], "board", *BOARD_RANGE)
    try:
        contract = parse_contract(data.get("contract"))
    except ContractError as exc:
        raise BridgeLogError(f'"contract": {exc}') from None
    vulnerable: Vulnerability = board_vulnerability(board)
    if data.get("vulnerable") is not None:
        given = data["vulnerable"]
        if given not in VULNERABILITIES:
            raise BridgeLogError(f'"vulnerable" is one of {", ".join(VULNERABILITIES)}, not {shown(given)}')
        vulnerable = given
    declarer: Seat | None = None
    if contract.passed_out:
        if data.get("declarer") is not None:
            raise BridgeLogError("a board passed out has no declarer")
    else:
        try:
            declarer = parse_seat(data.get("declarer"))
        except UnknownSeatError as exc:
            raise BridgeLogError(f'"declarer": {exc} (a contract needs its declarer: N, E, S or W)') from None
    raw_tricks = data.get("tricks", [])
    if not isinstance(raw_tricks, Sequence) or isinstance(raw_tricks, str):
        raise BridgeLogError(f'"tricks" is a list of tricks, not {type(raw_tricks).__name__}')
    if len(raw_tricks) > TRICKS:
        raise BridgeLogError(f"{len(raw_tricks)} tricks: a deal has {TRICKS}")
    if declarer is None and raw_tricks:
        raise BridgeLogError("a board passed out has no tricks")
    tricks: list[tuple[Play, ...]] = []
    for k, raw in enumerate(raw_tricks, 1):
        plays = raw.get("plays") if isinstance(raw, Mapping) else None
        if not isinstance(plays, Sequence) or isinstance(plays, str) or not 1 <= len(plays) <= 4:
            raise BridgeLogError(f'trick {k}: "plays" is a list of one to four [seat, card]')
        if len(plays) < 4 and k < len(raw_tricks):
            raise BridgeLogError(f"trick {k} has {len(plays)} plays, and a later trick follows it")
        trick = []
        for i, play in enumerate(plays, 1):
            where = f"trick {k}, play {i}"
            if not isinstance(play, Sequence) or isinstance(play, str) or len(play) != 2:
                raise BridgeLogError(f"{where}: a play is [seat, card], not {shown(play)}")
            try:
                seat = parse_seat(play[0])
            except UnknownSeatError as exc:
                raise BridgeLogError(f"{where}: {exc}") from None
            trick.append(Play(seat, _card(play[1], where)))
        for i, (a, b) in enumerate(zip(trick, trick[1:], strict=False), 2):
            if b.seat is not clockwise(a.seat):
                seen = [p.seat for p in trick[: i - 1]]
                twice = "plays twice in the trick" if b.seat in seen else "plays out of turn"
                raise BridgeLogError(
                    f"trick {k}, play {i}: {b.seat.name} {twice} ({clockwise(a.seat).name} plays after {a.seat.name})"
                )
        tricks.append(tuple(trick))
    if tricks and declarer is not None and tricks[0][0].seat is not clockwise(declarer):
        raise BridgeLogError(
            f"trick 1, play 1: {tricks[0][0].seat.name} plays out of turn ({clockwise(declarer).name} leads "
            f"the first trick, declarer {declarer.name}'s left-hand opponent)"
        )
    dummy = None
    if data.get("dummy") is not None:
        raw_dummy = data["dummy"]
        if declarer is None:
            raise BridgeLogError("a board passed out has no dummy")
        if not isinstance(raw_dummy, Sequence) or isinstance(raw_dummy, str) or len(raw_dummy) > TRICKS:
            raise BridgeLogError(f'"dummy" is a list of at most {TRICKS} cards')
        dummy = tuple(_card(c, f"dummy, card {i}") for i, c in enumerate(raw_dummy, 1))
    claim = None
    if data.get("claim") is not None:
        raw_claim = data["claim"]
        if declarer is None:
            raise BridgeLogError("a board passed out has no claim")
        if not isinstance(raw_claim, Mapping):
            raise BridgeLogError('"claim" is {"declarer_tricks": N, "after_trick": K}')
        claim = Claim(
            _int(raw_claim.get("declarer_tricks"), "claim.declarer_tricks", 0, TRICKS),
            _int(raw_claim.get("after_trick"), "claim.after_trick", 0, TRICKS),
        )
        complete = sum(len(t) == 4 for t in tricks)
        if claim.after_trick != complete or len(tricks) != complete:
            raise BridgeLogError(
                f"the claim comes after trick {claim.after_trick}, but the log holds {len(tricks)} tricks "
                f"({complete} complete)"
            )
    finished = data.get("finished", False)
    if not isinstance(finished, bool):
        raise BridgeLogError(f'"finished" is true or false, not {shown(finished)}')
    if (
        finished
        and not contract.passed_out
        and claim is None
        and not (len(tricks) == TRICKS and len(tricks[-1]) == 4)
    ):
        raise BridgeLogError(f"a finished log needs {TRICKS} tricks or a claim; it has {len(tricks)}")
    log = BridgeLog(board, contract, declarer, vulnerable, tuple(tricks), dummy, claim, finished)
    _check_cards(log)
    return log


def _check_cards(log: BridgeLog) -> None:
    """Each named card once: over the plays, and dummy's laid cards held by dummy alone."""
    where: dict[Card, str] = {}
    for k, trick in enumerate(log.tricks, 1):
        for i, play in enumerate(trick, 1):
            if isinstance(play.card, Card):
                here = f"trick {k}, play {i}"
                if play.card in where:
                    raise BridgeLogError(f"{here}: {play.card} again (played at {where[play.card]})")
                where[play.card] = here
    if log.dummy is None:
        return
    laid = [c for c in log.dummy if isinstance(c, Card)]
    if len(set(laid)) != len(laid):
        twice = next(c for c in laid if laid.count(c) > 1)
        raise BridgeLogError(f"dummy: {twice} laid twice")
    for k, trick in enumerate(log.tricks, 1):
        for i, play in enumerate(trick, 1):
            if isinstance(play.card, Card) and play.card in laid and play.seat is not log.dummy_seat:
                raise BridgeLogError(
                    f"trick {k}, play {i}: {play.seat.name} plays {play.card}, a card of dummy's ({log.dummy_seat})"
                )
            if (
                play.seat is log.dummy_seat
                and isinstance(play.card, Card)
                and len(laid) == TRICKS
                and play.card not in laid
            ):
                raise BridgeLogError(
                    f"trick {k}, play {i}: dummy ({play.seat.name}) plays {play.card}, not among the cards it laid"
                )
