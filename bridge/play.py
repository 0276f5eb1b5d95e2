"""The play of a bridge log followed trick by trick: who won each trick, revokes the table's own
plays prove (laws 61–64 of the 1997 Laws) with law 64's transfers, and the score (law 77):
:func:`score_log` is ``tractorcam score`` on a bridge log (``shared/spec/games.md``).

Unknown cards (``??``, ``A?``, ``?S``) stand for any card consistent with the log: not a card named
anywhere else in it (a card of dummy's, as laid, only for dummy), within what is written of them,
and, in a log that holds all 52 cards, the cards the named ones leave. A trick's winner is printed
when every such completion gives the same one or the next trick's leader settles it, else it is
``null`` with ``winner_possible``; counts the winners decide are ``null`` with their ``_range``;
an unknown card the log leaves one card for is listed under ``resolved`` (as ``deal-log.md``
has it). A revoke is reported only when it holds for every completion: an unknown card never
proves one.

>>> out = score_log({"game": "bridge", "board": 1, "contract": "1NT", "declarer": "S", "tricks": [
...     {"plays": [["W", "2C"], ["N", "3C"], ["E", "AC"], ["S", "4C"]]},
...     {"plays": [["E", "KC"], ["S", "5C"], ["W", "2D"], ["N", "6C"]]},
...     {"plays": [["E", "QC"], ["S", "2S"], ["W", "9C"], ["N", "7C"]]}]})
>>> [(t["leader"], t["winner"]) for t in out["tricks"]]
[('W', 'E'), ('E', 'E'), ('E', 'E')]
>>> [(v["seat"], v["trick"], v["proven_at"]) for v in out["violations"]]
[('W', 2, 3)]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any, Final

from bridge.board import is_vulnerable
from bridge.contract import duplicate_score
from bridge.log import TRICKS, BridgeLog, BridgeLogError, Play, parse_bridge_log
from engine.cards import CARD_NAMES, SUITS, Card
from engine.seats import Seat

#: Codes of the 52 bridge cards (no jokers).
DECK: Final = frozenset(range(52))
#: Beyond this many completions of one trick, any of its seats may have won it.
MAX_COMPLETIONS: Final = 200_000


def _suit(code: int) -> str:
    return SUITS[code // 13]


def _rank(code: int) -> int:
    return code % 13


def candidates(log: BridgeLog) -> list[list[frozenset[int]]]:
    """The cards each play may be (per trick, per play): a named card itself; an unknown one any
    bridge card written so, named nowhere else, and for dummy one of its laid cards (when all 13
    are named) or for another seat none of them; in a log that holds all 52 cards, narrowed to the
    cards the named ones leave, and round again while that settles some (a card forced on one
    unknown is no other's)."""
    named = {p.card.code for t in log.tricks for p in t if isinstance(p.card, Card)}
    laid = frozenset(c.code for c in log.dummy or () if isinstance(c, Card))
    dummy_known = len(laid) == TRICKS
    out = []
    for trick in log.tricks:
        row = []
        for play in trick:
            if isinstance(play.card, Card):
                row.append(frozenset((play.card.code,)))
                continue
            cands = (play.card.candidates & DECK) - named
            if play.seat is log.dummy_seat and dummy_known:
                cands &= laid
            elif play.seat is not log.dummy_seat:
                cands -= laid
            row.append(cands)
        out.append(row)
    slots = [(k, i) for k, row in enumerate(out) for i, c in enumerate(row) if len(c) > 1 or not c]
    if sum(len(t) for t in log.tricks) == 52 and slots:
        missing = DECK - named
        changed = True
        while changed:
            changed = False
            forced = {next(iter(out[k][i])) for k, i in slots if len(out[k][i]) == 1}
            for k, i in slots:
                if len(out[k][i]) > 1:
                    narrowed = (out[k][i] & missing) - forced
                    if narrowed != out[k][i]:
                        out[k][i], changed = narrowed, True
    for k, row in enumerate(out):
        for i, c in enumerate(row):
            if not c:
                play = log.tricks[k][i]
                raise BridgeLogError(
                    f"trick {k + 1}, play {i + 1}: no card is left that {play.seat.name}'s {play.card} could be"
                )
    return out


def _beats(a: int, b: int, led: str, trump: str | None) -> bool:
    """Whether card ``a`` beats ``b`` in a trick whose led suit is ``led``."""
    sa, sb = _suit(a), _suit(b)
    if sa == sb:
        return _rank(a) > _rank(b)
    if trump is not None and sa == trump:
        return True
    if trump is not None and sb == trump:
        return False
    return sa == led


def winner_of(cards: Sequence[int], trump: str | None) -> int:
    """The index of the card that takes a complete trick of ``cards`` (the first led): the highest
    trump, else the highest card of the suit led.

    >>> from engine.cards import parse_card
    >>> codes = [parse_card(n).code for n in ("KD", "2D", "5H", "AD")]
    >>> winner_of(codes, None), winner_of(codes, "H")
    (3, 2)
    """
    led = _suit(cards[0])
    best = 0
    for i in range(1, len(cards)):
        if _beats(cards[i], cards[best], led, trump):
            best = i
    return best


def possible_winners(trick: Sequence[Play], cands: Sequence[frozenset[int]], trump: str | None) -> set[Seat]:
    """The seats that take the complete ``trick`` in some completion of its unknown cards."""
    size = 1
    for c in cands:
        size *= len(c)
    if size > MAX_COMPLETIONS:
        return {p.seat for p in trick}
    out: set[Seat] = set()
    for combo in product(*(sorted(c) for c in cands)):
        if len(set(combo)) == 4:
            out.add(trick[winner_of(combo, trump)].seat)
    return out


def follow(log: BridgeLog, cands: list[list[frozenset[int]]]) -> list[set[Seat]]:
    """The seats that may have won each complete trick (one when known, the next trick's leader
    when there is one); raises :class:`BridgeLogError` for a trick led by a seat that could not
    have won the one before."""
    winners: list[set[Seat]] = []
    for k, trick in enumerate(log.tricks):
        if k > 0:
            before = winners[k - 1]
            if trick[0].seat not in before:
                said = "/".join(sorted(s.name for s in before))
                raise BridgeLogError(
                    f"trick {k + 1}, play 1: {trick[0].seat.name} leads out of turn ({said} won trick {k})"
                )
            winners[k - 1] = {trick[0].seat}
        if len(trick) == 4:
            winners.append(possible_winners(trick, cands[k], log.trump))
    return winners


@dataclass(frozen=True)
class Revoke:
    seat: Seat
    trick: int  # 1-based
    proven_at: int
    suit: str
    evidence: list[str]


def revokes(log: BridgeLog, cands: list[list[frozenset[int]]]) -> list[Revoke]:
    """Every revoke the plays prove for every completion: in a trick whose led suit is known, a seat
    whose card is surely of another suit, and who surely held one of the suit led: a card of it
    that seat plays later, or (dummy) one of its laid cards it had not played yet."""
    laid = [c.code for c in log.dummy or () if isinstance(c, Card)]
    out = []
    for k, trick in enumerate(log.tricks):
        led_suits = {_suit(c) for c in cands[k][0]}
        if len(led_suits) != 1:
            continue
        led = next(iter(led_suits))
        for i in range(1, len(trick)):
            seat = trick[i].seat
            if any(_suit(c) == led for c in cands[k][i]):
                continue  # it may have followed suit
            proof: tuple[int, str] | None = None
            if seat is log.dummy_seat:  # a laid card of the suit no earlier play of dummy's may be
                maybe_played = {
                    c
                    for u in range(k)
                    for j, p in enumerate(log.tricks[u])
                    if p.seat is seat
                    for c in cands[u][j]
                }
                held = [c for c in laid if _suit(c) == led and c not in maybe_played]
                if held:
                    proof = (k, CARD_NAMES[held[0]])
            if proof is None:  # a card of the suit led it plays later, named (or settled by the log)
                for u in range(k + 1, len(log.tricks)):
                    j = next((j for j, p in enumerate(log.tricks[u]) if p.seat is seat), None)
                    if j is not None and len(cands[u][j]) == 1 and _suit(next(iter(cands[u][j]))) == led:
                        proof = (u, CARD_NAMES[next(iter(cands[u][j]))])
                        break
            if proof is not None:
                own = CARD_NAMES[next(iter(cands[k][i]))] if len(cands[k][i]) == 1 else str(trick[i].card)
                out.append(Revoke(seat, k + 1, proof[0] + 1, led, [own, proof[1]]))
    return out


def _transfer_values(
    log: BridgeLog, revoke: Revoke, winners: list[set[Seat]], claimed: dict[str, int], first_in_suit: bool
) -> set[int]:
    """The tricks law 64 (1997) transfers for ``revoke``, over the winners still possible."""
    t = revoke.trick - 1
    if not first_in_suit or revoke.seat is log.dummy_seat or revoke.trick == TRICKS - 1 or t >= len(winners):
        return {0}
    side = revoke.seat.side
    later = winners[t + 1 :]
    if claimed[side] > 0 or any(all(w.side == side for w in ws) for ws in later):
        won_later_possible = {True}
    elif any(any(w.side == side for w in ws) for ws in later):
        won_later_possible = {False, True}
    else:
        won_later_possible = {False}
    values = set()
    for w in winners[t]:
        for later_won in won_later_possible:
            if w is revoke.seat:
                values.add(1 + (1 if later_won else 0))
            elif w.side == side or later_won:
                values.add(1)
            else:
                values.add(0)
    return values


def _span(values: Iterable[int]) -> tuple[int, int]:
    v = list(values)
    return min(v), max(v)


def _with_range(out: dict[str, Any], key: str, lo: int, hi: int) -> None:
    if lo == hi:
        out[key] = lo
    else:
        out[key] = None
        out[f"{key}_range"] = [lo, hi]


def score_log(data: Any) -> dict[str, Any]:
    """``tractorcam score`` on a bridge log (parsed JSON): one JSON-ready dict; raises
    :class:`BridgeLogError` for a log it refuses."""
    log = parse_bridge_log(data)
    out: dict[str, Any] = {
        "game": "bridge",
        "board": log.board,
        "dealer": log.dealer.name,
        "vulnerable": log.vulnerable,
        "contract": str(log.contract),
    }
    if log.declarer is None:
        out |= {"tricks": [], "declarer_tricks": 0, "adjusted_tricks": 0, "result": 0,
                "score": {"NS": 0, "EW": 0}, "violations": [], "unknown": 0}  # fmt: skip
        return out
    out["declarer"] = log.declarer.name
    cands = candidates(log)
    winners = follow(log, cands)
    rows = []
    for k, trick in enumerate(log.tricks):
        row: dict[str, Any] = {"trick": k + 1, "leader": trick[0].seat.name}
        if len(trick) == 4:
            ws = winners[k]
            if len(ws) == 1:
                row["winner"] = next(iter(ws)).name
            else:
                row["winner"] = None
                row["winner_possible"] = sorted(s.name for s in ws)
        rows.append(row)
    out["tricks"] = rows
    side = log.declarer.side
    sure = sum(all(w.side == side for w in ws) for ws in winners)
    maybe = sum(any(w.side == side for w in ws) for ws in winners)
    claimed = {"NS": 0, "EW": 0}
    if log.claim is not None:
        left, claim = TRICKS - log.claim.after_trick, log.claim.declarer_tricks
        if claim > maybe + left:
            raise BridgeLogError(
                f"the claim gives declarer's side {claim} tricks; it has won at most {maybe} and {left} are left"
            )
        if claim < sure:
            raise BridgeLogError(f"the claim gives declarer's side {claim} tricks; it has already won {sure}")
        lo = hi = log.claim.declarer_tricks
        claimed[side] = max(0, log.claim.declarer_tricks - maybe)
        other = "EW" if side == "NS" else "NS"
        claimed[other] = max(0, left - (log.claim.declarer_tricks - sure))
    else:
        lo, hi = sure, maybe
    _with_range(out, "declarer_tricks", lo, hi)
    found = revokes(log, cands)
    violations = []
    shift_lo = shift_hi = 0
    seen_suits: set[tuple[Seat, str]] = set()
    for r in found:
        first = (r.seat, r.suit) not in seen_suits
        seen_suits.add((r.seat, r.suit))
        later = [p.seat for p in (log.tricks[r.trick] if r.trick < len(log.tricks) else ())]
        established = r.trick != TRICKS - 1 and any(s in (r.seat, r.seat.partner) for s in later)
        t_lo, t_hi = _span(_transfer_values(log, r, winners, claimed, first) if established else {0})
        v: dict[str, Any] = {
            "kind": "revoke",
            "seat": r.seat.name,
            "trick": r.trick,
            "proven_at": r.proven_at,
            "established": established,
        }
        _with_range(v, "transferred", t_lo, t_hi)
        v["reason"] = (
            f"{r.seat.name} played {r.evidence[0]} to trick {r.trick}, led in {r.suit}, and held "
            f"{r.evidence[1]}"
            + (" (dummy's, as laid)" if r.seat is log.dummy_seat else f" (played to trick {r.proven_at})")
        )
        v["evidence"] = r.evidence
        violations.append(v)
        sign = 1 if r.seat.side != side else -1  # a defender's revoke gives declarer tricks
        shift_lo += sign * (t_lo if sign > 0 else t_hi)
        shift_hi += sign * (t_hi if sign > 0 else t_lo)
    unknown = sum(len(c) > 1 for row in cands for c in row)
    resolved = [
        {"trick": k + 1, "seat": play.seat.name, "index": 0, "card": CARD_NAMES[next(iter(cands[k][i]))]}
        for k, trick in enumerate(log.tricks)
        for i, play in enumerate(trick)
        if not isinstance(play.card, Card) and len(cands[k][i]) == 1
    ]
    if log.finished:
        a_lo, a_hi = max(0, min(TRICKS, lo + shift_lo)), max(0, min(TRICKS, hi + shift_hi))
        _with_range(out, "adjusted_tricks", a_lo, a_hi)
        need = log.contract.tricks_needed
        _with_range(out, "result", a_lo - need, a_hi - need)
        vul = is_vulnerable(log.vulnerable, side)
        s_lo, s_hi = (duplicate_score(log.contract, vul, t) for t in (a_lo, a_hi))
        other = "EW" if side == "NS" else "NS"
        if s_lo == s_hi:
            out["score"] = {side: s_lo, other: -s_lo}
        else:
            out["score"] = None
            out["score_range"] = {side: [s_lo, s_hi], other: [-s_hi, -s_lo]}
    out["violations"] = violations
    if resolved:
        out["resolved"] = resolved
    out["unknown"] = unknown
    return out
