"""Deal after deal at one table: what the camera learns between deals.

A table plays a match, deal after deal, in front of the same camera. Between two deals the table
is cleared; before the first lead a player shows the level card(s) of the suit they want as trump
(亮主), or a pair of jokers for no trump, and takes them back. From the film alone:

* :func:`read_declaration`: whether a play shown alone and taken back (no other seat played to it)
  declares trump, and which trump and level it declares;
* :class:`MatchProgress`: the next deal's level and dealer from the last deal's outcome (the engine's
  ``outcome``, applied by :class:`engine.match.MatchState`), as far as the film has told them: a
  side's level is known once it was given or declared, and stays known as the side goes up;
* when no declaration was seen (the trump came from the bottom, or the camera missed it), the
  pipeline takes the trump of :data:`TRUMPS` that fits the play best and the table service asks a
  referee to check it (a ``look``).

>>> read_declaration(("7H", "7H"), "7", 2)
('H', '7')
>>> read_declaration(("BJ", "BJ"), None, 2)
('NT', None)
>>> read_declaration(("SJ",), "7", 2)  # the pair's other joker hidden under it
('NT', None)
>>> read_declaration(("7H", "8H"), "7", 2) is None, read_declaration(("9S",), "7", 2) is None
(True, True)
>>> read_declaration(("QD",), None, 2)
('D', 'Q')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from engine.cards import RANK_NAME, AnyCard, Card, parse_any, parse_rank
from engine.deal_log import DealLog
from engine.match import MatchState, MatchStateError
from engine.seats import parse_seat

TRUMPS = ("S", "H", "D", "C", "NT")


def read_declaration(
    cards: Sequence[AnyCard | str], level: str | None, decks: int
) -> tuple[str, str | None] | None:
    """``(trump, level)`` that ``cards`` shown alone declare (text given for a card is parsed): one
    to ``decks`` copies of one ranked card of the level (any rank when ``level`` is None: the
    declaration then tells the level), or two or more of one joker (no trump, level untold); None
    for anything else."""
    shown = [parse_any(c) if isinstance(c, str) else c for c in cards]
    if not shown or len(shown) > decks or len(set(shown)) != 1 or not isinstance(shown[0], Card):
        return None
    card = shown[0]
    if card.suit is None:  # a joker
        return "NT", None
    rank = RANK_NAME[card.rank]
    if level is not None and RANK_NAME[parse_rank(level)] != rank:
        return None
    return card.suit, rank


@dataclass(frozen=True)
class MatchProgress:
    """The match as the table service follows it: each side's level where known (``None``: not
    told yet), and the next dealer where known."""

    rules: str
    levels: Mapping[str, str | None]
    dealer: str | None = None

    @classmethod
    def start(cls, rules: str, level: str | None, dealer: str | None) -> MatchProgress:
        """The match before the first deal: the given level is the first dealer's side's; with no
        dealer given, the side is learnt from the first deal's leader (:meth:`first_dealt`)."""
        levels: dict[str, str | None] = {"NS": None, "EW": None}
        if level is not None and dealer is not None:
            levels[parse_seat(dealer).side] = level
        return cls(rules, levels, dealer)

    @classmethod
    def new_game(cls, rules: str) -> MatchProgress:
        """A game begun afresh (an event's next round at this table): both sides at 2, the first
        dealer not known until a deal shows it.

        >>> MatchProgress.new_game("zhku-3deck").levels
        {'NS': '2', 'EW': '2'}
        """
        return cls(rules, {"NS": "2", "EW": "2"}, None)

    def level_for(self, dealer: str | None) -> str | None:
        """The level of the dealing side, when known."""
        return None if dealer is None else self.levels[parse_seat(dealer).side]

    def first_dealt(self, dealer: str, level: str | None) -> MatchProgress:
        """The same match once a deal is known to be dealt by ``dealer`` at ``level``."""
        if level is None:
            return self
        return replace(self, levels={**self.levels, parse_seat(dealer).side: level})

    def after(
        self, log: DealLog, result: Mapping[str, Any] | None, *, level_told: bool = True
    ) -> MatchProgress:
        """The match after a deal: with its outcome (``result`` from ``score``), the next dealer and
        the levels it moves; without one (a deal the engine refused, or whose outcome the unknown
        cards leave open), nothing is known of the next deal but the levels that were. The deal's
        level is the dealing side's only when it was told (``level_told``: given or declared, not
        the level a deal is scored at for want of one)."""
        dealer = log.dealer.name
        known = self.first_dealt(dealer, RANK_NAME[log.level]) if level_told else self
        if result is None or not isinstance(result.get("outcome"), Mapping):
            return replace(known, dealer=None)
        start = {side: lv or "2" for side, lv in known.levels.items()}
        try:
            state = MatchState.new(self.rules, start, dealer).after_deal(log.to_json(), result)
        except MatchStateError:
            return replace(known, dealer=None)
        levels = {side: state.levels[side] if known.levels[side] is not None else None for side in start}
        return replace(known, levels=levels, dealer=state.dealer)
