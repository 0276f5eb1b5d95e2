"""The contract and its duplicate score (law 77 of the 1997 Laws, which seed 003 follows).

>>> c = parse_contract("3ntxx")
>>> str(c), c.level, c.strain, c.doubled, c.tricks_needed
('3NTXX', 3, 'NT', 2, 9)
>>> duplicate_score(parse_contract("3NT"), vulnerable=False, tricks=10)
430
>>> duplicate_score(parse_contract("4SX"), vulnerable=False, tricks=6)
-800
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from engine.text import shown

STRAINS: Final = ("C", "D", "H", "S", "NT")
#: A contract's state of doubling, by the number of ``X`` written after it.
DOUBLINGS: Final = ("", "X", "XX")


class ContractError(ValueError):
    """Text that is not a contract (``PASS``, or a level 1–7, a strain, then ``X`` or ``XX``)."""


@dataclass(frozen=True)
class Contract:
    """A contract: ``level`` 1–7, ``strain`` one of :data:`STRAINS`, ``doubled`` 0, 1 (doubled) or 2
    (redoubled); ``level`` 0 is a board passed out (:data:`PASSED_OUT`)."""

    level: int
    strain: str = "NT"
    doubled: int = 0

    def __post_init__(self) -> None:
        if self.level == 0:
            if self.doubled:
                raise ContractError("a board passed out is not doubled")
            return
        if not 1 <= self.level <= 7:
            raise ContractError(f"a contract's level is 1 to 7, not {self.level}")
        if self.strain not in STRAINS:
            raise ContractError(
                f"a contract's strain is one of {', '.join(STRAINS)}, not {shown(self.strain)}"
            )
        if self.doubled not in (0, 1, 2):
            raise ContractError(f"a contract is undoubled, doubled or redoubled, not {self.doubled}")

    @property
    def passed_out(self) -> bool:
        return self.level == 0

    @property
    def tricks_needed(self) -> int:
        """The tricks declarer's side must take: six plus the level."""
        return 6 + self.level

    def __str__(self) -> str:
        return "PASS" if self.passed_out else f"{self.level}{self.strain}{DOUBLINGS[self.doubled]}"


PASSED_OUT: Final = Contract(0)


def parse_contract(text: object) -> Contract:
    """A contract from its spelling (``4H``, ``3NTX``, ``7SXX``, ``PASS``; any case); raises
    :class:`ContractError` for anything else.

    >>> parse_contract("pass").passed_out, parse_contract("1c").strain
    (True, 'C')
    """
    if not isinstance(text, str):
        raise ContractError(f"a contract is text such as '4HX' or 'PASS', not {shown(text)}")
    key = text.strip().upper()
    if key == "PASS":
        return PASSED_OUT
    body = key.rstrip("X")
    doubled = len(key) - len(body)
    if doubled > 2 or len(body) < 2 or not body[0].isdigit():
        raise ContractError(f"not a contract: {shown(text)} (e.g. '4HX', '3NT', 'PASS')")
    level, strain = int(body[0]), body[1:]
    if level == 0:
        raise ContractError(f"a contract's level is 1 to 7, not 0 ({shown(text)})")
    return Contract(level, strain, doubled)


def _trick_value(strain: str, k: int) -> int:
    """The trick points of the ``k``-th odd trick (1-based) undoubled."""
    if strain in ("C", "D"):
        return 20
    if strain in ("H", "S"):
        return 30
    return 40 if k == 1 else 30


def duplicate_score(contract: Contract, vulnerable: bool, tricks: int) -> int:
    """The duplicate score of ``contract`` when declarer's side takes ``tricks`` (0–13), from
    declarer's side (negative when it goes down): law 77.

    Made: trick points (C D 20, H S 30, NT 40 then 30; doubled ×2, redoubled ×4), 300 (vulnerable
    500) for a game (trick points of 100 or more) or 50 for a part score, 500 / 750 for a small and
    1,000 / 1,500 for a grand slam, 50 for making a doubled and 100 a redoubled contract, and each
    overtrick at its trick value undoubled, 100 / 200 doubled, 200 / 400 redoubled. Down: each
    undertrick 50 / 100 undoubled; doubled not vulnerable 100, 200, 200, then 300 each, doubled
    vulnerable 200 then 300 each; redoubled twice the doubled.

    >>> [duplicate_score(parse_contract(c), v, t) for c, v, t in [
    ...     ("2H", False, 8), ("4H", True, 11), ("6NT", False, 12), ("7CXX", True, 13),
    ...     ("1NTX", False, 4), ("3DX", True, 5), ("2SXX", False, 9)]]
    [110, 650, 990, 2660, -500, -1100, 840]
    """
    if not 0 <= tricks <= 13:
        raise ValueError(f"a side takes 0 to 13 tricks, not {tricks}")
    if contract.passed_out:
        return 0
    factor = (1, 2, 4)[contract.doubled]
    over = tricks - contract.tricks_needed
    if over < 0:
        down = -over
        if contract.doubled == 0:
            return -down * (100 if vulnerable else 50)
        if vulnerable:
            doubled = 200 + 300 * (down - 1)
        else:
            doubled = sum((100, 200, 200)[:down]) + 300 * max(0, down - 3)
        return -doubled * contract.doubled  # redoubled: twice the doubled
    points = sum(_trick_value(contract.strain, k) for k in range(1, contract.level + 1)) * factor
    score = points + ((500 if vulnerable else 300) if points >= 100 else 50)
    if contract.level == 6:
        score += 750 if vulnerable else 500
    elif contract.level == 7:
        score += 1500 if vulnerable else 1000
    score += (0, 50, 100)[contract.doubled]
    if contract.doubled == 0:
        score += over * _trick_value(contract.strain, 2)
    else:
        score += over * (200 if vulnerable else 100) * contract.doubled
    return score
