"""An alert in a referee's words: the trick's cards, the play that broke the rule, the play that
proves it, and one plain sentence, read from the deal log and the engine's violation.

>>> log = {"rules": "national-2deck", "level": "2", "trump": "S", "dealer": "S", "tricks": [
...     {"plays": [["S", ["6H"]], ["E", ["7C"]], ["N", ["AH"]], ["W", ["8H"]]]},
...     {"plays": [["N", ["9H"]], ["W", ["JH"]], ["S", ["QH"]], ["E", ["7H"]]]}]}
>>> v = {"kind": "revoke", "seat": "E", "trick": 1, "proven_at": 2, "evidence": ["7H"]}
>>> explain(log, v)["plain"]
'E did not follow hearts: S led 6H at trick 1 and E played 7C, but E still held hearts, as E’s 7H at trick 2 proves it.'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}


def _plays(log: Mapping[str, Any], trick: int) -> list[tuple[str, list[str]]]:
    tricks = log.get("tricks") or []
    if not isinstance(trick, int) or not 1 <= trick <= len(tricks):
        return []
    out = []
    for play in tricks[trick - 1].get("plays", []):
        if isinstance(play, list | tuple) and len(play) >= 2 and isinstance(play[1], list):
            out.append((str(play[0]), [str(c) for c in play[1]]))
    return out


def _led_class(log: Mapping[str, Any], cards: list[str]) -> str:
    """``hearts``, ``trumps``… for the suit class of a lead."""
    from engine.cards import parse_card, parse_rank
    from engine.context import TRUMP, trump_context

    try:
        trump = str(log.get("trump", "NT")).upper()
        ctx = trump_context(parse_rank(str(log.get("level"))), None if trump == "NT" else trump)
        cls = ctx.cls[parse_card(cards[0]).code]
    except (ValueError, IndexError):
        return "the led suit"
    return "trumps" if cls == TRUMP else SUIT_NAMES["SHDC"[cls]]


def explain(log: Mapping[str, Any] | None, violation: Mapping[str, Any]) -> dict[str, Any] | None:
    """The trick (each play with its role: ``lead``, ``offence`` or plain), the proving play and a
    sentence; None when the log does not hold the trick."""
    if not log:
        return None
    kind, seat = violation.get("kind"), violation.get("seat")
    trick, proven = violation.get("trick"), violation.get("proven_at")
    plays = _plays(log, trick) if isinstance(trick, int) else []
    if not plays:
        return None
    leader, lead_cards = plays[0]
    offender = leader if kind == "failed_throw" else seat
    rows = [
        {"seat": s, "cards": c, "role": "offence" if s == offender else ("lead" if i == 0 else "")}
        for i, (s, c) in enumerate(plays)
    ]
    evidence = [str(c) for c in violation.get("evidence") or []]
    proof: dict[str, Any] | None = None
    later = _plays(log, proven) if isinstance(proven, int) and proven != trick else []
    for s, cards in later:
        if (kind == "revoke" and s == seat) or (
            kind == "failed_throw" and s != leader and any(c in evidence for c in cards)
        ):
            proof = {"trick": proven, "seat": s, "cards": cards}
            break
    suit = _led_class(log, lead_cards)
    shown = " ".join(lead_cards)
    mine = " ".join(next((c for s, c in plays if s == seat), []))
    if kind == "revoke":
        plain = (
            f"{seat} did not follow {suit}: {leader} led {shown} at trick {trick} and {seat} played {mine}"
        )
        if proof is not None:
            plain += f", but {seat} still held {suit}, as {seat}’s {' '.join(proof['cards'])} at trick {proven} proves it."
        else:
            plain += f", but {seat} still held {suit} (cards {seat} played by trick {proven} prove it)."
    elif kind == "failed_throw":
        plain = f"{leader}’s throw {shown} at trick {trick} could be beaten"
        if proof is not None:
            plain += f": {proof['seat']}’s {' '.join(proof['cards'])} at trick {proven} proves it."
        else:
            plain += f" (cards played by trick {proven} prove it)."
    elif kind in ("card_count", "mismatch") and seat:
        plain = f"{seat} laid {len(mine.split())} card(s) on a {len(lead_cards)}-card lead at trick {trick}."
    else:
        return {"trick": trick, "plays": rows, "proof": proof, "plain": None}
    return {"trick": trick, "plays": rows, "proof": proof, "plain": plain}
