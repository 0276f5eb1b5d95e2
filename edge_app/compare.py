"""A recognised deal log against the deal that was played: what a referee would see go wrong.

Tricks are matched in order by the alignment that shares the most cards (:func:`align_tricks`: a
trick the camera missed or split does not shift every later one), and plays within matched tricks
by seat: a play is **exact** when its cards (as a multiset, duplicates counted) are the truth's. Both logs are scored by the engine; a
violation the recognised log shows and the truth does not is a **false alert** (the worst thing the
product can do), one the truth shows and the reading does not a missed one. A recognised log the
engine refuses outright (say a card read three times in two decks) has no score: ``refused`` says
why, and it counts as neither outcome right nor any alert.

>>> from engine.deal_log import parse_deal_log
>>> head = {"rules": "national-2deck", "level": "5", "trump": "H", "dealer": "S"}
>>> truth = parse_deal_log({**head, "tricks": [{"plays": [["S", ["AH"]], ["E", ["3H"]], ["N", ["2H"]], ["W", ["QH"]]]}]})
>>> read = parse_deal_log({**head, "tricks": [{"plays": [["S", ["AH"]], ["E", ["3S"]], ["N", ["2H"]], ["W", ["QH"]]]}]})
>>> c = compare_deals(read, truth)
>>> c.plays_exact, c.plays, c.false_alerts
(3, 4, ())
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from engine.cards import format_any
from engine.deal_log import DealLog, DealLogError
from engine.score import evaluate


@dataclass(frozen=True)
class DealComparison:
    """Counts of one recognised deal against its truth (see the module docstring)."""

    tricks: int  # in the truth
    tricks_read: int
    plays: int  # in the truth
    plays_exact: int
    #: plays of the truth's length whose named cards are the truth's and whose other cards are
    #: unknown (``??``: seen, not named): right as far as they go (exact ones included)
    plays_consistent: int
    #: plays exact once each unknown card the engine settles (``resolved``: the deck's inventory,
    #: the order of leaders) is filled with what it settles it as: the plays as the score counts
    #: them. The log itself keeps them unknown, as the camera saw them.
    plays_scored: int
    cards: int  # in the truth's plays
    cards_right: int  # per matched play, the multiset intersection
    bottom_exact: bool
    finished_right: bool
    outcome_right: bool  # same outcome (side, levels, next dealer) and defenders' total
    false_alerts: tuple[str, ...]
    missed_alerts: tuple[str, ...]
    refused: str | None


Trick = list[tuple[str, Counter[str]]]


def _plays(log: DealLog, resolved: list[dict[str, Any]] | None = None) -> list[Trick]:
    """Each trick's plays as (seat, multiset of card names); with ``resolved`` (the engine's, trick
    1-based, index 0-based in the play), those unknown cards written as the card they are settled as.

    >>> from engine.deal_log import parse_deal_log
    >>> log = parse_deal_log({"rules": "national-2deck", "level": "5", "trump": "H", "dealer": "S",
    ...     "tricks": [{"plays": [["S", ["AH", "??"]], ["E", ["3H", "4H"]]]}]})
    >>> _plays(log, [{"trick": 1, "seat": "S", "index": 1, "card": "AH"}])[0][0]
    ('S', Counter({'AH': 2}))
    """
    fix = {(r["trick"], r["seat"], r["index"]): r["card"] for r in resolved or () if r.get("trick")}
    return [
        [
            (p.seat.name, Counter(fix.get((t, p.seat.name, i), c) for i, c in enumerate(format_any(p.cards))))
            for p in trick.plays
        ]
        for t, trick in enumerate(log.tricks, 1)
    ]


def _alerts(result: dict[str, Any]) -> set[str]:
    return {f"{v['kind']} {v['seat']} trick {v['trick']}" for v in result.get("violations", [])}


def _shared(a: Trick, b: Trick) -> int:
    seats = dict(a)
    return sum(sum((seats[s] & c).values()) + 1 for s, c in b if s in seats)


def align_tricks(read: list[Trick], truth: list[Trick]) -> list[tuple[int, int]]:
    """Pairs (read index, truth index), in order, that share the most (seat, card) matches in all.

    >>> t = lambda *cards: [("S", Counter([c])) for c in cards]
    >>> align_tricks([t("AH"), t("3C")], [t("AH"), t("KD"), t("3C")])
    [(0, 0), (1, 2)]
    """
    n, m = len(read), len(truth)
    shared = [[_shared(a, b) for b in truth] for a in read]
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            sim = shared[i - 1][j - 1]
            best[i][j] = max(best[i - 1][j], best[i][j - 1], best[i - 1][j - 1] + sim if sim else 0)
    pairs = []
    i, j = n, m
    while i and j:
        sim = shared[i - 1][j - 1]
        if sim and best[i][j] == best[i - 1][j - 1] + sim:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif best[i][j] == best[i - 1][j]:
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def compare_deals(read: DealLog, truth: DealLog, alerted: set[str] | None = None) -> DealComparison:
    """Compare a recognised log with the truth. ``alerted``: the alerts the table service raised
    (``"revoke E trick 3"``; its own judgement of which proven violations are sure enough:
    :mod:`edge_app.events`), when given; else every violation the engine proves in ``read``.
    ``read`` is the log as recognised, checked here; raises ``DealLogError`` when the *truth* is
    one the engine refuses."""
    rp, tp = _plays(read), _plays(truth)
    matched = dict((j, i) for i, j in align_tricks(rp, tp))
    truth_score = evaluate(truth.checked()).to_json()
    refused = None
    try:
        read_score: dict[str, Any] | None = evaluate(read.checked()).to_json()
    except (DealLogError, ValueError) as exc:
        read_score, refused = None, str(exc)
    resolved = read_score.get("resolved") if read_score else None
    scored = _plays(read, resolved) if resolved else rp
    plays = exact = consistent = as_scored = cards = right = 0
    for j, trick in enumerate(tp):
        got_trick = dict(rp[matched[j]]) if j in matched else {}
        scored_trick = dict(scored[matched[j]]) if j in matched else {}
        for seat, want in trick:
            plays += 1
            cards += sum(want.values())
            got = got_trick.get(seat)
            if got is None:
                continue
            right += sum((want & got).values())
            exact += want == got
            as_scored += want == scored_trick.get(seat)
            named = Counter({c: n for c, n in got.items() if "?" not in c})
            consistent += sum(got.values()) == sum(want.values()) and not (named - want)
    got_alerts = alerted if alerted is not None else (_alerts(read_score) if read_score else set())
    want_alerts = _alerts(truth_score)
    outcome_right = bool(
        read_score is not None
        and read_score.get("outcome") == truth_score.get("outcome")
        and read_score.get("defender_total") == truth_score.get("defender_total")
    )
    return DealComparison(
        tricks=len(tp),
        tricks_read=len(rp),
        plays=plays,
        plays_exact=exact,
        plays_consistent=consistent,
        plays_scored=as_scored,
        cards=cards,
        cards_right=right,
        bottom_exact=Counter(format_any(read.bottom or ())) == Counter(format_any(truth.bottom or ())),
        finished_right=read.finished == truth.finished,
        outcome_right=outcome_right,
        false_alerts=tuple(sorted(got_alerts - want_alerts)),
        missed_alerts=tuple(sorted(want_alerts - got_alerts)),
        refused=refused,
    )
