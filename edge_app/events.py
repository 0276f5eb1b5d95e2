"""The live events a table sends while a deal goes on (the scoreboard's edge events,
:mod:`contract.events`): the deal's start, every play and trick result once the trick is
cleared, an alert for each violation the engine finds proven in the finished log, and a ``look``
alert when an unknown card (``??``: seen, not named) could change a trick's winner or the outcome.

:class:`EventStream` is fed the recognised deal each time a trick is cleared and returns only what
is new since the last call, so a re-scored log never repeats an event. Violations and the looks
about unknown cards wait for the finished deal (:meth:`EventStream.update`). A log the engine refuses
(a card read more often than there are decks, say) raises one ``mismatch`` alert per distinct
reason, for the referee to look at; its tricks are sent as plays without a result.

>>> from edge_app.deal import RecognisedDeal
>>> from engine.deal_log import parse_deal_log
>>> log = parse_deal_log({"rules": "national-2deck", "level": "5", "trump": "H", "dealer": "S",
...        "tricks": [{"plays": [["S", ["AH"]], ["E", ["3S"]], ["N", ["2H"]], ["W", ["QH"]]]}]})
>>> stream = EventStream()
>>> [e.type for e in stream.update(RecognisedDeal(log, None, ()))]
['deal_start', 'play', 'play', 'play', 'play', 'trick']
>>> stream.update(RecognisedDeal(log, None, ()))
[]
"""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Mapping
from typing import Any

from contract.base import Trump
from contract.events import AlertIn, DealStart, EvidenceImage, Play, TrickResult
from edge_app.deal import RecognisedDeal
from engine.cards import RANK_NAME, Card, UnknownCard, format_any
from engine.seats import parse_seat

Event = DealStart | Play | TrickResult | AlertIn
_TRUMPS: dict[str, Trump] = {"S": "S", "H": "H", "D": "D", "C": "C", "NT": "NT"}
ALERT_KIND = {"revoke": "revoke", "failed_throw": "failed_throw", "card_count": "mismatch"}


class EventStream:
    """What is new in each successive recognised deal (see the module docstring)."""

    def __init__(self) -> None:
        self.started = False
        self.sent_tricks = 0
        self.alerts: set[tuple[str, str, int]] = set()
        self.problems: set[str] = set()
        self.looks: set[tuple[str, int]] = set()

    def update(self, deal: RecognisedDeal, *, ended: bool = False) -> list[Event]:
        """The events not sent yet for ``deal`` (complete tricks only). A violation is alerted only
        once the log is finished: until every card of the decks has been read, a card misread with
        confidence (a 5♥ read 5♠ in every frame) cannot be told from a revoke, and the deck's
        inventory exposes it only when the misread card's other copies are seen. The rules apply
        the penalty to the deal's result, so nothing is lost by waiting. A deal that ``ended``
        without being seen finished raises its proven violations as ``look`` alerts instead. The
        looks about unknown cards wait for the same moment: most winners an unknown card leaves
        open are settled by who leads next and by the cards read later."""
        log = deal.log
        out: list[Event] = []
        if not self.started:
            out.append(
                DealStart(
                    type="deal_start",
                    rules=log.rules.id,
                    level=RANK_NAME[log.level],
                    trump=_TRUMPS[log.trump or "NT"],
                    dealer=log.dealer.letter,
                )
            )
            self.started = True
        result, problem = deal.result, deal.refusal
        if problem is not None and problem not in self.problems:
            self.problems.add(problem)
            out.append(
                AlertIn(type="alert", kind="mismatch", reasoning=f"the recognised log is refused: {problem}")
            )
        tricks = [t for t in log.tricks if t.complete]
        for i in range(self.sent_tricks, len(tricks)):
            for p in tricks[i].plays:
                out.append(Play(type="play", trick=i + 1, seat=p.seat.letter, cards=format_any(p.cards)))
            r = result["tricks"][i] if result is not None and i < len(result["tricks"]) else {}
            if r.get("winner") and r.get("points") is not None:  # open values (unknown cards): no result
                out.append(TrickResult(type="trick", trick=i + 1, winner=r["winner"], points=r["points"]))
        self.sent_tricks = max(self.sent_tricks, len(tricks))
        whole = log.finished or ended  # the whole deal's inventory known: violations and looks
        if whole:
            out += self._looks(deal, result, len(tricks))
        out += self._centre(deal, result)
        if deal.level_doubt:
            out += self._look_once(
                "level",
                f"{deal.level_doubt}: the deal is scored at {RANK_NAME[log.level]}; check the outcome of the deal before",
            )
        if deal.trump_inferred and log.finished:
            out += self._look_once(
                "trump",
                f"nobody was seen declaring trump: the log's trump {log.trump or 'NT'} is inferred from the play; "
                "check it",
            )
        if not whole:
            return out
        for v in (result or {}).get("violations", []):
            key = (v["kind"], v["seat"], int(v["trick"]))
            if key in self.alerts:
                continue
            self.alerts.add(key)
            out.append(violation_alert(deal, v, whole=log.finished))
        return out

    def _look_once(self, topic: str, reasoning: str) -> list[AlertIn]:
        """A ``look`` about the whole deal, the first time ``topic`` comes up; none after."""
        if (topic, 0) in self.looks:
            return []
        self.looks.add((topic, 0))
        return [AlertIn(type="alert", kind="look", reasoning=reasoning)]

    def _centre(self, deal: RecognisedDeal, result: dict[str, Any] | None) -> list[AlertIn]:
        """One ``look`` per deal when the centre holds point cards the log gives the defenders in
        no trick (:func:`centre_mismatches`) at two tricks in a row: a misread winner or point card
        the referee can settle with the pictures. Points missing from the centre ask nothing: a
        card lying under another hides them."""
        if result is None or ("centre", 0) in self.looks:
            return []
        bad = [m for m in centre_mismatches(deal, result) if m[3]]
        for (k, seen, counted, _), (k2, seen2, counted2, extra) in zip(bad, bad[1:], strict=False):
            if k2 == k + 1:
                self.looks.add(("centre", 0))
                return [
                    AlertIn(
                        type="alert",
                        kind="look",
                        trick=k2,
                        reasoning=f"the defenders' point cards in the centre add up to {seen2} while "
                        f"trick {k2} lay on the table, but the log gives them {counted2} by then "
                        f"({seen} against {counted} at trick {k}), and no trick they won holds "
                        f"{', '.join(format_any(extra))}: a trick's winner or a point "
                        "card may be misread; look at the pictures",
                        images=_images(deal, [(k, "centre"), (k2, "centre")]),
                    )
                ]
        return []

    def _looks(self, deal: RecognisedDeal, result: dict[str, Any] | None, complete: int) -> list[AlertIn]:
        """A ``look`` alert for each value the unknown cards leave open that decides something: the
        winner of a cleared trick, the outcome of the deal (once each), with the pictures of the
        plays holding unknown cards (for the outcome: at most :data:`OUTCOME_IMAGES` of them)."""
        if result is None or not result.get("unknown"):
            return []
        out = []
        for r in result["tricks"][:complete]:
            key = ("winner", int(r["trick"]))
            if "winner" in r and r["winner"] is None and key not in self.looks:
                self.looks.add(key)
                out.append(
                    AlertIn(
                        type="alert",
                        kind="look",
                        trick=r["trick"],
                        reasoning=f"trick {r['trick']}: an unknown card could change who won it; "
                        "a look at the cards settles it",
                        images=_images(deal, _unknown_plays(deal, int(r["trick"]))),
                    )
                )
        if "outcome" in result and result["outcome"] is None and ("outcome", 0) not in self.looks:
            self.looks.add(("outcome", 0))
            possible = "; ".join(f"{o['side']} +{o['levels']}" for o in result.get("outcome_possible", []))
            out.append(
                AlertIn(
                    type="alert",
                    kind="look",
                    reasoning=f"the outcome depends on {result['unknown']} unknown card(s) (possible: {possible})",
                    images=_images(
                        deal,
                        [p for t in range(1, complete + 1) for p in _unknown_plays(deal, t)][:OUTCOME_IMAGES],
                    ),
                )
            )
        return out


#: The most pictures an outcome ``look`` carries (the plays with unknown cards, first ones first;
#: the scoreboard takes six).
OUTCOME_IMAGES = 6

#: The share of its readings that must agree on a play before it may prove a rule break in front of
#: a table; below it the referee is asked to look instead.
MIN_AGREEMENT = 0.6


def _plays_of(deal: RecognisedDeal, v: dict[str, Any]) -> list[tuple[int, str]]:
    """The plays a violation rests on: the one that broke the rule, and those that prove it (for a
    revoke, the lead that named the suit and the offender's play at ``proven_at``; for a failed
    throw, the plays there holding its evidence)."""
    trick, proven = int(v["trick"]), int(v.get("proven_at") or v["trick"])
    tricks = deal.log.tricks
    seat = str(v["seat"])
    leader = tricks[trick - 1].leader.name if trick <= len(tricks) else seat
    if v["kind"] == "failed_throw":
        evidence = set(v.get("evidence") or [])
        proving = [
            (proven, p.seat.name)
            for p in (tricks[proven - 1].plays if proven <= len(tricks) else ())
            if p.seat.name != leader and evidence & set(format_any(p.cards))
        ]
        return [(trick, leader), *proving]
    # a misread lead names another suit: the revoke rests on it as much as on the offender's play
    plays = [(trick, leader), (trick, seat)] if leader != seat else [(trick, seat)]
    if proven != trick:
        plays.append((proven, seat))
    return plays


def violation_alert(deal: RecognisedDeal, v: dict[str, Any], whole: bool = True) -> AlertIn:
    """The alert for a proven violation, with a picture of each play it rests on; a ``look`` instead
    when one of those plays was read with doubt (under :data:`MIN_AGREEMENT` of its readings), the
    trick of the offence or of a failed throw's proof is one the decoding questioned
    (``deal.doubtful``), or the offender's own play that proves a revoke in a later trick is
    (``deal.doubtful_plays``: the rest of that trick, who led it or another seat's card the camera
    missed, changes nothing of what the offender held), or the deal was not seen ``whole`` (its
    inventory could not check the cards)."""
    plays = _plays_of(deal, v)
    images = _images(deal, plays)
    doubt = min((deal.agreement_of(t, s) for t, s in plays), default=1.0)
    reason = str(v.get("reason") or v.get("evidence") or v["kind"])
    # the tricks the violation rests on: the offence and its proof (the seat of every play comes
    # from its zone, so a doubtful trick between them changes neither)
    trick, proven = int(v["trick"]), int(v.get("proven_at") or v["trick"])
    questioned = {trick, proven} & deal.doubtful
    if v["kind"] == "revoke" and proven != trick and (proven, str(v["seat"])) not in deal.doubtful_plays:
        questioned.discard(proven)
    kind = ALERT_KIND.get(v["kind"], "mismatch")
    if questioned:
        kind, why = (
            "look",
            f"tricks the camera read with doubt (trick(s) {', '.join(map(str, sorted(questioned)))})",
        )
    elif doubt < MIN_AGREEMENT:
        kind, why = "look", f"cards read with doubt (only {doubt:.0%} of the readings agree)"
    elif not whole:
        kind, why = (
            "look",
            "a deal the camera did not see finished (its cards could not be checked against the decks)",
        )
    if kind == "look":
        reason = f"a {v['kind'].replace('_', ' ')} would follow from {why}: look at the pictures. {reason}"
    return AlertIn(
        type="alert",
        kind=kind,
        seat=v["seat"],
        trick=v["trick"],
        proven_at=v.get("proven_at"),
        reasoning=reason,
        images=images,
    )


def centre_mismatches(
    deal: RecognisedDeal, result: dict[str, Any]
) -> list[tuple[int, int, int, tuple[Card, ...]]]:
    """``(trick, points seen, points counted, cards unexplained)`` for each trick during which the
    centre (the point cards the defenders had won, :attr:`RecognisedDeal.centre`) held other points
    than the engine's trick results give the defenders before it; ``cards unexplained`` are the
    point cards seen there that no trick the log gives the defenders holds (a copy more than those
    tricks hold counts too). Points missing from the centre are explained by a card lying under
    another; a point card the defenders never won is not. A centre with an unknown card, or a trick
    after one whose winner or points are open, is not compared. Nor is anything before the centre
    first held a card: a table whose defenders keep their point cards elsewhere is never asked
    about it.

    >>> from engine.deal_log import parse_deal_log
    >>> log = parse_deal_log({"rules": "national-2deck", "level": "5", "trump": "H", "dealer": "S",
    ...     "tricks": [{"plays": [["S", ["3S"]], ["E", ["KS"]], ["N", ["4S"]], ["W", ["5H"]]]},
    ...                {"plays": [["E", ["3C"]], ["N", ["10C"]], ["W", ["4C"]], ["S", ["6C"]]]}]})
    >>> r = {"tricks": [{"winner": "W", "points": 15}, {"winner": "N", "points": 10}]}
    >>> centre = ((2, ("5H", "KS")), (3, ("KS",)))
    >>> centre_mismatches(RecognisedDeal(log, None, (), centre=centre), r)
    [(3, 10, 15, ())]
    >>> centre_mismatches(RecognisedDeal(log, None, (), centre=((2, ("10C", "KS")),)), r)
    [(2, 20, 15, (Card('10C'),))]
    """
    dealer_side = deal.log.dealer.side
    counted, before = 0, {1: 0}
    won: Counter[Card] = Counter()
    won_before: dict[int, Counter[Card]] = {1: Counter()}
    for i, r in enumerate(result.get("tricks", [])):
        if r.get("winner") is None or r.get("points") is None:
            break
        if parse_seat(r["winner"]).side != dealer_side:
            counted += int(r["points"])
            if i < len(deal.log.tricks):
                won.update(
                    c for p in deal.log.tricks[i].plays for c in p.cards if isinstance(c, Card) and c.points
                )
        k = int(r["trick"]) + 1 if "trick" in r else len(before) + 1
        before[k], won_before[k] = counted, Counter(won)
    out = []
    used = False
    for k, cards in deal.centre:
        used = used or bool(cards)
        if not used or k not in before or any(isinstance(c, UnknownCard) for c in cards):
            continue
        seen = sum(c.points for c in cards if isinstance(c, Card))
        if seen != before[k]:
            shown = Counter(c for c in cards if isinstance(c, Card) and c.points)
            out.append((k, seen, before[k], tuple(sorted((shown - won_before[k]).elements(), key=str))))
    return out


def evidence_images(
    crops: Mapping[tuple[int, str], bytes], plays: list[tuple[int, str]]
) -> list[EvidenceImage]:
    """The pictures of ``plays`` (trick, seat) that were kept in ``crops`` (JPEG), for an alert."""
    return [
        EvidenceImage(
            content_type="image/jpeg",
            data=base64.b64encode(crops[p]).decode(),
            caption=f"trick {p[0]}, {p[1]}",
        )
        for p in plays
        if crops.get(p)
    ]


def _images(deal: RecognisedDeal, plays: list[tuple[int, str]]) -> list[EvidenceImage]:
    return evidence_images(deal.crops, plays)


def _unknown_plays(deal: RecognisedDeal, trick: int) -> list[tuple[int, str]]:
    """The plays of ``trick`` (1-based) holding an unknown card."""
    tricks = deal.log.tricks
    if not 1 <= trick <= len(tricks):
        return []
    return [
        (trick, p.seat.name)
        for p in tricks[trick - 1].plays
        if any(isinstance(c, UnknownCard) for c in p.cards)
    ]


def event_body(event: Event) -> dict[str, Any]:
    """The JSON body the scoreboard takes (``POST /api/events``)."""
    return event.model_dump(exclude_none=True)
