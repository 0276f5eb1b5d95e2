"""tractorcam's rules engine: the referee's ground truth for Shengji / Tractor (升级 / 拖拉机).

A pure library (standard library only, no I/O): cards and seats, rule sets as data, combination
reading, follow obligations, trick winners, the evidence model for revokes and failed throws,
scoring, trump declarations, match state and a deal simulator.
"""

from engine.cards import Card, UnknownCardError, parse_card, parse_cards
from engine.deal_log import DealLog, DealLogError, LeaderError, Play, Ruling, Trick, parse_deal_log
from engine.rules import RULE_SET_IDS, RULE_SETS, RuleSet, UnknownRuleSetError, get_rule_set
from engine.score import DealResult, evaluate, score_log
from engine.seats import Seat, parse_seat

__all__ = [
    "Card",
    "DealLog",
    "DealLogError",
    "LeaderError",
    "DealResult",
    "Play",
    "RULE_SETS",
    "RULE_SET_IDS",
    "RuleSet",
    "Ruling",
    "Seat",
    "Trick",
    "UnknownCardError",
    "UnknownRuleSetError",
    "evaluate",
    "get_rule_set",
    "parse_card",
    "parse_cards",
    "parse_deal_log",
    "parse_seat",
    "score_log",
]
