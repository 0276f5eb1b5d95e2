"""Contract bridge at the table (seed 003: the Chinese Bridge Association's laws of 1999, after the
WBF's 1997 Laws of Duplicate Bridge): the bridge log and its score (``shared/spec/games.md``), pure
and standard-library only, on the engine's card and seat vocabulary.

* :mod:`bridge.board`: a board's dealer and vulnerability (law 2);
* :mod:`bridge.contract`: the contract (``4HX``, ``3NT``, ``PASS``) and its duplicate score (law 77);
* :mod:`bridge.results`: IMPs (law 78's scale) and match points of a traveller;
* :mod:`bridge.log`: the log read and checked (:class:`BridgeLogError` for one it refuses);
* :mod:`bridge.play`: trick winners and revokes proven by the table's own plays, with law 64's
  transfers; :func:`score_log` is ``tractorcam score`` on a bridge log.

>>> from bridge import imps, duplicate_score, parse_contract
>>> duplicate_score(parse_contract("4HX"), vulnerable=True, tricks=10), imps(790 - 620)
(790, 5)
"""

from __future__ import annotations

from bridge.board import board_dealer, board_vulnerability
from bridge.contract import Contract, ContractError, duplicate_score, parse_contract
from bridge.log import BridgeLog, BridgeLogError, parse_bridge_log
from bridge.play import score_log
from bridge.results import imps, matchpoints

__all__ = [
    "BridgeLog",
    "BridgeLogError",
    "Contract",
    "ContractError",
    "board_dealer",
    "board_vulnerability",
    "duplicate_score",
    "imps",
    "matchpoints",
    "parse_bridge_log",
    "parse_contract",
    "score_log",
]
