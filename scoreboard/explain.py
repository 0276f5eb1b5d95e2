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
        elif isinstance(play, list | tuple) and len(play) >= 2 and isinstance(play[1], str):
            out.append((str(play[0]), [play[1]]))  # a bridge play: one card
    return out


def _led_class(log: Mapping[str, Any], cards: list[str]) -> str:
    """``hearts``, ``trumps``… for the suit class of a lead (bridge: the suit led)."""
    if log.get("game") == "bridge":
        suit = cards[0][-1:].upper() if cards else ""
        return SUIT_NAMES.get(suit, "the led suit")
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


def _unknown(cards: list[str]) -> bool:
    return any("?" in c for c in cards)


def explain_look(
    log: Mapping[str, Any] | None, result: Mapping[str, Any] | None, trick: Any, seat: str | None
) -> dict[str, Any] | None:
    """A ``look`` in plain words: the trick it asks about (the plays in question marked ``look``:
    the seat's play, or the plays holding unknown cards), a sentence, and the plays a referee may
    name (``settle``: those, then every other play still holding an unknown card; at most 9) with
    the bottom when it holds one. None without a log.

    >>> log = {"bottom": ["??"], "tricks": [{"plays": [["S", ["AH"]], ["E", ["??"]]]}]}
    >>> x = explain_look(log, {"tricks": [{"trick": 1, "points": None, "points_range": [0, 10]}]}, 1, None)
    >>> x["plain"]
    'The camera could not name every card of E’s ?? at trick 1: the trick holds 0 to 10 points depending on it. Name the cards from the picture, or close the look if they do not matter.'
    >>> x["settle"], x["bottom"]
    ([{'trick': 1, 'seat': 'E', 'cards': ['??']}], ['??'])
    """
    if not log:
        return None
    plays = _plays(log, trick) if isinstance(trick, int) else []
    asked = [s for s, c in plays if s == seat] if seat else [s for s, c in plays if _unknown(c)]
    rows = [
        {"seat": s, "cards": c, "role": "look" if s in asked else ("lead" if i == 0 else "")}
        for i, (s, c) in enumerate(plays)
    ]
    settle = [{"trick": trick, "seat": s, "cards": c} for s, c in plays if s in asked]
    for t in range(1, len(log.get("tricks") or []) + 1):
        for s, c in _plays(log, t):
            if _unknown(c) and not (t == trick and s in asked):
                settle.append({"trick": t, "seat": s, "cards": c})
    bottom = [str(c) for c in log.get("bottom") or []]
    scored = [t for t in (result or {}).get("tricks") or [] if t.get("trick") == trick]
    if asked:
        named = " and ".join(f"{s}’s {' '.join(c)}" for s, c in plays if s in asked)
        if _unknown([c for s, cards in plays if s in asked for c in cards]):
            plain = f"The camera could not name every card of {named} at trick {trick}"
            if scored and "winner" in scored[0] and scored[0]["winner"] is None:
                plain += ": who won the trick depends on it"
            elif scored and scored[0].get("points") is None and scored[0].get("points_range"):
                low, high = scored[0]["points_range"]
                plain += f": the trick holds {low} to {high} points depending on it"
            plain += ". Name the cards from the picture, or close the look if they do not matter."
        else:
            plain = (
                f"{named} at trick {trick} was read with doubt. Compare it with the picture and name "
                "the cards, or close the look if they are right."
            )
    elif settle or _unknown(bottom):
        count = sum(1 for row in settle for c in row["cards"] if "?" in c) + sum("?" in c for c in bottom)
        plain = f"{count} card(s) of this deal were seen but not named"
        if result and "outcome" in result and result["outcome"] is None:
            plain += ": the outcome depends on them"
        plain += ". Name them from the pictures, or close the look if they do not matter."
    else:
        plain = None
    return {
        "trick": trick if plays else None,
        "plays": rows,
        "proof": None,
        "plain": plain,
        "settle": settle[:9],
        "bottom": bottom if _unknown(bottom) else None,
    }
