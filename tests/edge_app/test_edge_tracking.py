"""The tracker (vision.tracking) and the deal-log builder (edge_app.deal) on filmed and scripted
table states; the comparison with the truth (edge_app.compare)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from calibration.table import TableGeometry
from edge_app.compare import compare_deals
from edge_app.deal import DealInfo, build_deal
from engine.cards import AnyCard, parse_any
from engine.deal_log import Play, Trick, parse_deal_log
from engine.seats import Seat
from engine.sim import simulate_deal
from models.synth.deal import plan_deal
from models.synth.layout import Table
from tests.synth.conftest import needs_aisleriot
from vision.instances import CardInstance
from vision.tracking import (
    TableState,
    TrackedPlay,
    TrackedTrick,
    TrackerConfigError,
    TrickTracker,
    _decide_with_unknown,
    _Open,
    table_state,
)

SEATS = "SENW"


def mm_geometry(table: Table) -> TableGeometry:
    """A camera whose pixels are table millimetres (identity homography)."""
    zones, centre = table.zones()
    eye = np.eye(3).tolist()
    return TableGeometry(
        image_width=int(table.width),
        image_height=int(table.height),
        image_to_table=eye,
        table_to_image=eye,
        table_width_mm=table.width,
        table_height_mm=table.height,
        zones=zones,
        centre=centre,
    )


def card_at(card: str, x: float, y: float) -> CardInstance:
    return CardInstance(card, 0, 1.0, (x - 3, y - 3, x + 3, y + 3), 2)


def state(frame: int = 0, **zones: list[str]) -> TableState:
    return TableState(zones={s: tuple(sorted(zones.get(s, []))) for s in SEATS}, frame=frame)  # type: ignore[misc]


def names(cards: Iterable[AnyCard]) -> tuple[str, ...]:
    """Cards as text (the notation), to compare with."""
    return tuple(str(c) for c in cards)


def parsed(*texts: str) -> tuple[AnyCard, ...]:
    return tuple(parse_any(c) for c in texts)


def plays(tracker: TrickTracker) -> list[list[tuple[str, tuple[str, ...]]]]:
    return [[(p.seat, names(p.cards)) for p in t.plays] for t in tracker.tricks()]


def truth_plays(log: dict) -> list[list[tuple[str, tuple[str, ...]]]]:
    return [[(s, tuple(sorted(c))) for s, c, *_ in t["plays"]] for t in log["tricks"]]


# ------------------------------------------------------------------ whole filmed deals, perfect readings


@needs_aisleriot
@pytest.mark.parametrize("rules", ["national-1deck", "national-2deck", "national-3deck", "zhku-3deck"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_filmed_deal_reconstructed_exactly(rules: str, seed: int) -> None:
    """Every keyframe of a planned deal film, sampled at 2 readings a second as ``run`` samples the
    video (a 0.5 s hold gives one reading), placed by ``table_state`` and tracked: the deal log must
    be the one that was played (tricks, order, seats, cards, bottom, finished)."""
    log = simulate_deal(rules, seed)
    table = Table(900.0, 880.0)
    film = plan_deal(log, np.random.default_rng(seed), "guyenne-classic", table)
    geometry = mm_geometry(table)
    tracker = TrickTracker(inertia=2)
    for kf in film.keyframes:
        cards = [card_at(p.card, p.x, p.y) for p in film_face_up(kf.placements)]
        for _ in range(max(1, round(kf.hold * 2))):
            tracker.update(table_state(cards, geometry))
    deal = build_deal(
        tracker.tricks(), tracker.loose(), DealInfo(rules, log["level"], log["trump"], log["dealer"])
    )
    assert truth_plays(deal.log.to_json()) == truth_plays(log)
    assert sorted(deal.log.to_json()["bottom"]) == sorted(log["bottom"])
    assert deal.log.to_json()["finished"] is True and deal.problem is None
    assert all(a == 1.0 for _, _, a in deal.agreement)


def film_face_up(placements: list) -> list:
    return [p for p in placements if p.face_up]


# ------------------------------------------------------------------ scripted readings


def test_one_bad_reading_neither_starts_a_play_nor_changes_one() -> None:
    t = TrickTracker(inertia=2)
    seq = [
        state(S=["AH"]),
        state(S=["AH"], E=["KH"]),  # a one-reading flash in E (an arm, a glare)
        state(S=["AH"]),
        state(S=["AS"]),  # one misreading of S's card
        state(S=["AH"], W=["3H"]),
        state(S=["AH"], W=["3H"]),
        state(S=[], W=["3H"]),  # S's card missed once: the play stays
        state(S=["AH"], W=["3H"]),
    ]
    for s in seq:
        t.update(s)
    assert plays(t) == [[("S", ("AH",)), ("W", ("3H",))]]
    s_play = t.tricks()[0].plays[0]
    assert (s_play.readings, s_play.agreeing) == (7, 6)  # the empty reading is no vote
    assert not t.tricks()[0].complete


def test_majority_of_readings_decides_the_cards() -> None:
    t = TrickTracker(inertia=1)
    for cards in (["10H", "10H"], ["10H"], ["10H", "10H"], ["10S", "10H"], ["10H", "10H"]):
        t.update(state(N=cards))
    (play,) = t.tricks()[0].plays
    assert names(play.cards) == ("10H", "10H") and play.agreeing == 3 and play.agreement == pytest.approx(0.6)


def test_tie_goes_to_more_cards() -> None:
    t = TrickTracker(inertia=1)
    for cards in (["QD"], ["QD", "QD"]):
        t.update(state(W=cards))
    assert names(t.tricks()[0].plays[0].cards) == ("QD", "QD")


def test_a_play_laid_card_by_card_is_decided_as_soon_as_it_has_grown() -> None:
    """N lays the king of spades, five readings later the 3 of clubs beside it: two readings of
    both make the play both cards (it grew), while the earlier readings keep their own count as
    agreement; one reading of both is not yet enough (a misread adds a card as easily)."""
    t = TrickTracker(inertia=1)
    for _ in range(5):
        t.update(state(N=["KS"]))
    t.update(state(N=["KS", "3C"]))
    assert names(t.current("N").cards) == ("KS",)  # type: ignore[union-attr]
    t.update(state(N=["KS", "3C"]))
    play = t.current("N")
    assert play is not None and names(play.cards) == ("3C", "KS") and (play.readings, play.agreeing) == (7, 2)


def test_a_card_covered_later_is_not_growth() -> None:
    """Both cards read first, then an arm over one of them for longer: the readings of one card
    came after, so they are not a play that grew; they outvote as before."""
    t = TrickTracker(inertia=1)
    for cards in [["KS", "3C"]] * 3 + [["KS"]] * 4:
        t.update(state(N=cards))
    assert names(t.current("N").cards) == ("KS",)  # type: ignore[union-attr]


def test_trick_ends_at_the_first_empty_table() -> None:
    t = TrickTracker(inertia=2)
    for s in ("S", "E", "N", "W"):
        for _ in range(2):
            t.update(state(**{x: ["5C"] for x in SEATS[: SEATS.index(s) + 1]}))
    t.update(state())
    assert t.completed == 1 and t.tricks()[0].complete
    assert [p.seat for p in t.tricks()[0].plays] == ["S", "E", "N", "W"]
    for _ in range(2):
        t.update(state(E=["9C"]))
    assert [[p.seat for p in tr.plays] for tr in t.tricks()] == [["S", "E", "N", "W"], ["E"]]


def test_a_play_never_read_does_not_merge_two_tricks() -> None:
    """N's cards are never read: the trick is cleared with three plays, and N's lead of the next
    trick starts a new one instead of joining the old."""
    t = TrickTracker(inertia=2)
    for zones in ({"W": ["3D"]}, {"W": ["3D"], "S": ["4D"]}, {"W": ["3D"], "S": ["4D"], "E": ["8D"]}):
        for _ in range(2):
            t.update(state(**zones))
    t.update(state())
    for _ in range(2):
        t.update(state(N=["AC"]))
    assert [[p.seat for p in tr.plays] for tr in t.tricks()] == [["W", "S", "E"], ["N"]]
    assert t.tricks()[0].complete and not t.tricks()[1].complete


def test_one_empty_reading_between_the_same_plays_is_a_misread() -> None:
    t = TrickTracker(inertia=2)
    for _ in range(2):
        t.update(state(S=["2S"], E=["3S"]))
    t.update(state())  # the whole table misread once
    t.update(state(S=["2S"], E=["3S"]))
    for _ in range(2):
        t.update(state(S=["2S"], E=["3S"], N=["4S"]))
    assert [[p.seat for p in tr.plays] for tr in t.tricks()] == [["S", "E", "N"]]
    assert t.completed == 0 and t.tricks()[0].plays[0].readings == 5
    # two empty readings are a clear, whatever follows
    t.update(state())
    t.update(state())
    t.update(state(S=["2S"], E=["3S"], N=["4S"]))
    assert t.completed == 1


def test_play_order_follows_the_readings_not_the_seat_order() -> None:
    t = TrickTracker(inertia=1)
    t.update(state(W=["3H"]))
    t.update(state(W=["3H"], S=["4H"]))
    assert [p.seat for p in t.tricks()[0].plays] == ["W", "S"]


def test_inertia_must_be_positive() -> None:
    with pytest.raises(TrackerConfigError):
        TrickTracker(inertia=0)


def test_loose_cards_since_last_clear() -> None:
    t = TrickTracker(inertia=1)
    t.update(TableState(zones={}, loose=("3S",)))
    t.update(TableState(zones={}, loose=("3S", "4S")))
    t.update(TableState(zones={}, loose=("3S", "4S")))
    assert names(t.loose()) == ("3S", "4S")
    assert TrickTracker().loose() == ()


def test_table_state_places_cards_by_zone_centre_and_elsewhere() -> None:
    table = Table(900.0, 900.0)
    g = mm_geometry(table)
    cards = [
        card_at("AH", 450, 800),  # S zone (bottom)
        card_at("KH", 450, 100),  # N zone
        card_at("QH", 820, 450),  # E zone
        card_at("JH", 80, 450),  # W zone
        card_at("10H", 450, 450),  # centre
        card_at("9H", 10, 10),  # table margin: no zone
    ]
    s = table_state(cards, g, frame=7)
    assert {k: names(v) for k, v in s.zones.items()} == {
        "S": ("AH",),
        "N": ("KH",),
        "E": ("QH",),
        "W": ("JH",),
    }
    assert (names(s.centre), names(s.loose), s.frame) == (("10H",), ("9H",), 7)
    assert table_state([], g).empty()


# ------------------------------------------------------------------ the deal log


def tp(seat: str, *cards: str) -> TrackedPlay:
    return TrackedPlay(seat, tuple(cards), 2, 2, 0)  # type: ignore[arg-type]


def full_trick(card: str = "3C") -> TrackedTrick:
    return TrackedTrick(tuple(tp(s, card) for s in "SENW"), True)


def test_trailing_dealer_play_of_bottom_size_is_the_bottom() -> None:
    bottom = ("2D", "6D", "7D", "7S", "7C", "9S", "9D", "JS")
    tricks = [full_trick(), TrackedTrick((tp("S", *bottom),), False)]
    deal = build_deal(tricks, (), DealInfo("national-2deck", "4", "H", "S"))
    assert deal.log.to_json()["bottom"] == sorted(bottom) and len(deal.log.to_json()["tricks"]) == 1
    assert deal.log.to_json()["finished"] is True
    # the same cards laid by another seat are a play, not the bottom
    other = build_deal(tricks, (), DealInfo("national-2deck", "4", "H", "E"))
    assert (
        other.log.bottom is None
        and len(other.log.to_json()["tricks"]) == 2
        and other.log.to_json()["finished"] is False
    )


def test_bottom_reaching_a_neighbours_zone_is_still_the_bottom_but_a_last_trick_is_not() -> None:
    bottom = ("2D", "6D", "7D", "7S", "7C", "9S", "9D", "JS")
    at = lambda seat, frame, *cards: TrackedPlay(seat, tuple(cards), 2, 2, frame)  # noqa: E731
    row = TrackedTrick((at("N", 40, "2D"), at("W", 40, *bottom[1:])), False)  # turned up at once
    deal = build_deal([full_trick(), row], (), DealInfo("national-2deck", "4", "H", "W"))
    assert deal.log.to_json()["bottom"] == sorted(bottom) and len(deal.log.to_json()["tricks"]) == 1
    # the same cards laid as a lead and a follow (two readings apart) are the trick in progress
    laid = TrackedTrick((at("W", 40, *bottom[:4]), at("S", 44, *bottom[4:])), False)
    deal = build_deal([full_trick(), laid], (), DealInfo("national-2deck", "4", "H", "W"))
    assert deal.log.bottom is None and len(deal.log.to_json()["tricks"]) == 2


def test_loose_cards_of_bottom_size_are_the_bottom() -> None:
    loose = ("2D", "6D", "7D", "7S", "7C", "9S", "9D", "JS")
    deal = build_deal([full_trick()], loose, DealInfo("national-2deck", "4", "H", "S"))
    assert deal.log.to_json()["bottom"] == sorted(loose) and deal.log.to_json()["finished"] is True
    few = build_deal([full_trick()], loose[:5], DealInfo("national-2deck", "4", "H", "S"))
    assert few.log.bottom is None and few.log.to_json()["finished"] is False


def test_plays_settled_together_are_put_in_turn_order_from_the_leader() -> None:
    trick = TrackedTrick((tp("N", "3C"), tp("S", "4C"), tp("W", "5C"), tp("E", "6C")), True)
    deal = build_deal([trick], (), DealInfo("national-2deck", "4", "H", "N"))
    assert [p[0] for p in deal.log.to_json()["tricks"][0]["plays"]] == ["N", "W", "S", "E"]
    assert deal.problem is None


def test_dealer_defaults_to_first_leader() -> None:
    deal = build_deal([TrackedTrick((tp("E", "AS"),), False)], (), DealInfo("national-2deck", "4", "H"))
    assert deal.log.to_json()["dealer"] == "E"


def test_cards_read_more_often_than_the_decks_hold_become_unknown() -> None:
    """Four AS read in two decks: the two least sure (the later ones on a tie) are written ??."""
    tricks = [full_trick("AS")]
    deal = build_deal(tricks, (), DealInfo("national-2deck", "4", "H", "S"))
    assert deal.problem is None
    assert [cards for _, cards in deal.log.to_json()["tricks"][0]["plays"]] == [
        ["AS"],
        ["AS"],
        ["??"],
        ["??"],
    ]


def test_log_the_engine_refuses_is_kept_with_the_reason() -> None:
    tricks = [full_trick("AS"), TrackedTrick(tuple(TrackedPlay(s, ("3S",), 2, 2, 0) for s in "SENW"), False)]
    # the bottom (all eight cards settled at once in the dealer's zone) holds a third AS
    bottom = TrackedTrick(
        (TrackedPlay("S", ("AS", "3C", "4C", "5C", "6C", "7C", "8C", "9C"), 2, 2, 0),), False
    )
    deal = build_deal([tricks[0], bottom], (), DealInfo("national-2deck", "4", "H", "S"))
    assert deal.log.to_json()["finished"] is True and deal.problem is not None and "AS" in deal.problem
    assert len(deal.log.to_json()["tricks"]) == 1


def test_unknown_rule_set_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        build_deal([full_trick()], (), DealInfo("bridge", "4", "H", "S"))


# ------------------------------------------------------------------ comparison with the truth


def test_compare_counts_alerts_both_ways_and_refused_logs() -> None:
    truth = parse_deal_log(simulate_deal("national-2deck", 3, inject_revoke=True))
    same = compare_deals(truth, truth)
    assert same.plays_exact == same.plays and same.cards_right == same.cards
    assert same.false_alerts == () and same.missed_alerts == () and same.outcome_right
    assert same.refused is None and same.bottom_exact and same.finished_right
    # drop the tricks after the first: the revoke (proven later) is missed, the outcome unknown
    cut = replace(truth, tricks=truth.tricks[:1], finished=False)
    c = compare_deals(cut, truth)
    assert c.tricks_read == 1 and c.plays_exact == len(truth.tricks[0].plays)
    assert c.missed_alerts and not c.outcome_right and not c.finished_right
    ace = parse_any("AS")
    bad = replace(truth, tricks=(Trick((Play(Seat.S, (ace, ace, ace)),)),))  # 3 copies in 2 decks
    assert (
        compare_deals(bad, truth).refused
        == "trick 1, play 1 (S): AS appears more than 2 time(s) with 2 deck(s)"
    )


def test_compare_aligns_tricks_so_a_missed_trick_costs_only_itself() -> None:
    truth = parse_deal_log(simulate_deal("national-2deck", 4))
    read = replace(truth, tricks=truth.tricks[1:])  # the camera missed the first trick
    c = compare_deals(read, truth)
    first = len(truth.tricks[0].plays)
    assert c.plays_exact == c.plays - first and c.tricks_read == c.tricks - 1
    # a play read at the wrong seat is not exact, and a wrong card costs only itself
    t0 = truth.tricks[0].plays
    moved = Trick((replace(t0[0], seat=t0[1].seat), *t0[1:]))
    swapped = replace(truth, tricks=(moved, *truth.tricks[1:]))
    assert compare_deals(swapped, truth).plays_exact <= c.plays - 1


def test_a_card_left_unknown_that_the_inventory_settles_is_exact_as_scored_only() -> None:
    """One card of a finished deal read as ``??``: the play is not exact as read, it is right as far
    as named, and exact as scored (the engine's ``resolved`` names it from the deck's inventory). A
    card read wrong stays wrong as scored."""
    truth = parse_deal_log(simulate_deal("national-2deck", 5))
    t2 = truth.tricks[2]
    hidden = Play(t2.plays[1].seat, (parse_any("??"), *t2.plays[1].cards[1:]))
    read = replace(
        truth, tricks=(*truth.tricks[:2], Trick((t2.plays[0], hidden, *t2.plays[2:])), *truth.tricks[3:])
    )
    c = compare_deals(read, truth)
    assert c.refused is None
    assert (c.plays_exact, c.plays_consistent, c.plays_scored) == (c.plays - 1, c.plays, c.plays)
    same = compare_deals(truth, truth)
    assert same.plays_scored == same.plays
    t0 = truth.tricks[0].plays[0]
    other = "2C" if str(t0.cards[0]) != "2C" else "3C"
    wrong = Play(t0.seat, (parse_any(other), *t0.cards[1:]))
    misread = replace(truth, tricks=(Trick((wrong, *truth.tricks[0].plays[1:])), *truth.tricks[1:]))
    m = compare_deals(misread, truth)
    assert m.plays_scored == m.plays_exact


# ------------------------------------------------------------------ unknown cards (issue 39)


@needs_aisleriot
@pytest.mark.parametrize("rules", ["national-2deck", "national-3deck"])
def test_a_joker_the_reader_never_names_costs_nothing(rules: str) -> None:
    """A filmed deal whose jokers the reader sees but never names (``??`` in every reading): the
    plays keep their length, the log the engine accepts names them from the inventory, and the
    score is the one that was played."""
    from engine import score_log

    log = simulate_deal(rules, 3)
    table = Table(900.0, 880.0)
    film = plan_deal(log, np.random.default_rng(3), "guyenne-classic", table)
    tracker = TrickTracker(inertia=2)
    for kf in film.keyframes:
        cards = [
            card_at("??" if p.card in ("BJ", "SJ") else p.card, p.x, p.y) for p in film_face_up(kf.placements)
        ]
        for _ in range(max(1, round(kf.hold * 2))):
            tracker.update(table_state(cards, mm_geometry(table)))
    deal = build_deal(
        tracker.tricks(), tracker.loose(), DealInfo(rules, log["level"], log["trump"], log["dealer"])
    )
    assert deal.problem is None
    unread = sum(c == "??" for t in deal.log.to_json()["tricks"] for _, cs, *_ in t["plays"] for c in cs)
    unread += sum(c == "??" for c in deal.log.to_json()["bottom"])
    assert unread == 2 * {"national-2deck": 2, "national-3deck": 3}[rules]  # every joker, as seen
    got, want = score_log(deal.log.to_json()), score_log(log)
    # Which '??' is the big joker and which the small one the order of leaders may settle or not;
    # jokers hold no points, so every value is known all the same.
    assert got["unknown"] + len(got.get("resolved", [])) == unread
    assert {r["card"] for r in got.get("resolved", [])} <= {"BJ", "SJ"}
    for key in ("captured", "defender_total", "outcome", "bottom"):
        assert got[key] == want[key], key


def test_a_card_named_in_some_readings_names_the_unknown_one() -> None:
    t = TrickTracker(inertia=1)
    for cards in (["AH", "??"], ["AH", "KH"], ["AH", "??"], ["AH", "KH"]):
        t.update(state(N=cards))
    (play,) = t.tricks()[0].plays
    assert names(play.cards) == ("AH", "KH") and (play.readings, play.agreeing) == (4, 4)


def test_a_card_named_once_among_unknown_readings_stays_unknown() -> None:
    """One reading is no evidence: an alert must rest on cards read across several readings."""
    t = TrickTracker(inertia=1)
    for cards in (["??"], ["??"], ["QH"], ["??"]):
        t.update(state(E=cards))
    assert names(t.tricks()[0].plays[0].cards) == ("??",)


def test_a_play_the_camera_never_saw_is_there_unnamed() -> None:
    """Issue 39: N's joker is never seen, not even as a box: trick 1 shows S, E and W only. N played
    (every seat plays in a cleared trick): ['??'], and the engine names it from the inventory."""
    from engine import score_log

    p = lambda seat, *cards: TrackedPlay(seat, tuple(cards), 3, 3, 0)  # noqa: E731
    tricks = [
        TrackedTrick((p("S", "AS"), p("E", "3S"), p("W", "4S")), True),
        TrackedTrick((p("N", "5D"), p("S", "7D")), False),
    ]
    deal = build_deal(tricks, (), DealInfo("national-2deck", "2", "H", "S"))
    assert deal.log.to_json()["tricks"][0]["plays"] == [
        ["S", ["AS"]],
        ["E", ["3S"]],
        ["N", ["??"]],
        ["W", ["4S"]],
    ]
    # N leads trick 2, so N's unseen card took trick 1 (a trump); W, between N and S, played too
    assert deal.log.to_json()["tricks"][1]["plays"] == [["N", ["5D"]], ["W", ["??"]], ["S", ["7D"]]]
    assert deal.problem is None and score_log(deal.log.to_json())["tricks"][0]["winner"] == "N"


@needs_aisleriot
def test_a_filmed_deal_whose_jokers_are_never_seen_still_counts() -> None:
    """The localiser misses every joker (no box at all): missing plays and short plays are filled
    with '??' of the lead's length, and the finished deal scores as played."""
    from engine import score_log

    rules = "national-2deck"
    log = simulate_deal(rules, 3)
    table = Table(900.0, 880.0)
    film = plan_deal(log, np.random.default_rng(3), "guyenne-classic", table)
    tracker = TrickTracker(inertia=2)
    for kf in film.keyframes:
        cards = [card_at(p.card, p.x, p.y) for p in film_face_up(kf.placements) if p.card not in ("BJ", "SJ")]
        for _ in range(max(1, round(kf.hold * 2))):
            tracker.update(table_state(cards, mm_geometry(table)))
    deal = build_deal(
        tracker.tricks(), tracker.loose(), DealInfo(rules, log["level"], log["trump"], log["dealer"])
    )
    got, want = score_log(deal.log.to_json()), score_log(log)
    for key in ("captured", "defender_total", "outcome"):
        assert got[key] == want[key], (key, deal.problem)


def test_the_decoding_marks_the_tricks_it_questions() -> None:
    """A missing play (filled) and a trick whose expected leader did not settle first (the trick
    before may have been misread) are doubtful; a trick read as laid is not."""
    p = lambda seat, *cards: TrackedPlay(seat, tuple(cards), 3, 3, 0)  # noqa: E731
    tricks = [
        TrackedTrick((p("S", "AS"), p("E", "3S"), p("N", "4S"), p("W", "5S")), True),
        TrackedTrick((p("S", "AH"), p("E", "3H"), p("W", "5H")), True),  # N unseen
        TrackedTrick((p("E", "4D"), p("S", "AD"), p("N", "5D"), p("W", "6D")), True),  # S should lead
    ]
    deal = build_deal(tricks, (), DealInfo("national-2deck", "2", "C", "S"))
    assert deal.doubtful == frozenset({2, 3})


def test_an_extra_card_found_out_by_the_inventory_leaves_the_play() -> None:
    """N's pair read with a third card, 10S; later both real 10S show up: N's 10S was the extra."""
    p = lambda seat, *cards: TrackedPlay(seat, tuple(cards), 3, 2 if seat == "N" else 3, 0)  # noqa: E731
    tricks = [
        TrackedTrick(
            (p("S", "JS", "JS"), p("E", "4S", "7S"), p("N", "10S", "KS", "KS"), p("W", "3S", "4S")), True
        ),
        TrackedTrick((p("S", "10S"), p("E", "10S"), p("N", "2S"), p("W", "5S")), True),
    ]
    deal = build_deal(tricks, (), DealInfo("national-2deck", "2", "H", "S"))
    assert deal.log.to_json()["tricks"][0]["plays"][2] == ["N", ["KS", "KS"]]
    assert 1 in deal.doubtful


def test_a_misread_twin_is_found_where_the_engine_can_take_it() -> None:
    """Deal seed 0: S leads AH to trick 1 and wins it; at trick 5 N's QH is misread as AH, so AH is
    read three times in two decks. The inventory first makes the least sure AH unknown (S's lead,
    whose readings agreed least): the unknown must then be the missing QH, S cannot have won trick
    1, and the engine refuses the log. The decoding tries the unknown at AH's other places and keeps
    the one the engine takes: N's card at trick 5."""
    from engine.score import score_log

    log = {k: v for k, v in simulate_deal("national-2deck", 0).items() if k not in ("hands", "injected")}
    assert log["tricks"][0]["plays"][0] == ["S", ["AH"]] and log["tricks"][4]["plays"][2] == ["N", ["QH"]]
    tricks = []
    for k, trick in enumerate(log["tricks"]):
        plays = []
        for seat, cards in trick["plays"]:
            read = ["AH"] if (k, seat) == (4, "N") else cards
            plays.append(TrackedPlay(seat, tuple(sorted(read)), 5, 2 if (k, seat) == (0, "S") else 5, 0))
        tricks.append(TrackedTrick(tuple(plays), True))
    deal = build_deal(
        tricks, tuple(log["bottom"]), DealInfo("national-2deck", log["level"], log["trump"], "S")
    )
    assert deal.problem is None, deal.problem
    assert deal.log.to_json()["tricks"][0]["plays"][0] == ["S", ["AH"]]
    assert deal.log.to_json()["tricks"][4]["plays"][2] == ["N", ["??"]]
    assert {1, 5} <= deal.doubtful
    result = score_log(deal.log.to_json())
    assert result["outcome"] == score_log(log)["outcome"] and result["violations"] == []


def test_a_bottom_cleared_before_the_next_deal_is_the_bottom_not_a_trick() -> None:
    """The deal was not seen finished while its bottom lay on the table (a card misread then), and
    the next deal ended it: the bottom, turned up in the dealer's zone and cleared, is a cleared
    "trick" after every hand was played out; it is the bottom, and the deal is whole."""
    log = {k: v for k, v in simulate_deal("national-2deck", 0).items() if k not in ("hands", "injected")}
    tricks = [
        TrackedTrick(tuple(TrackedPlay(s, tuple(sorted(c)), 3, 3, 0) for s, c in t["plays"]), True)
        for t in log["tricks"]
    ]
    bottom = TrackedTrick((TrackedPlay(log["dealer"], tuple(sorted(log["bottom"])), 3, 3, 0),), True)
    deal = build_deal(
        [*tricks, bottom], (), DealInfo("national-2deck", log["level"], log["trump"], log["dealer"])
    )
    assert deal.problem is None and deal.log.to_json()["finished"]
    assert len(deal.log.to_json()["tricks"]) == len(log["tricks"]) and sorted(
        deal.log.to_json()["bottom"]
    ) == sorted(log["bottom"])


def test_a_lead_read_short_takes_the_length_two_followers_agree_on() -> None:
    t = TrackedTrick((tp("S", "BJ"), tp("E", "4C", "8C"), tp("N", "5S", "QS"), tp("W", "3S", "8S")), True)
    deal = build_deal([t], (), DealInfo("national-2deck", "4", "NT", "S"))
    assert deal.log.to_json()["tricks"][0]["plays"][0] == ["S", ["BJ", "??"]] and 1 in deal.doubtful


def test_a_follow_read_short_is_filled_with_what_its_longer_readings_knew() -> None:
    """W's K♣ lies under its J♣: most readings see the J♣ alone, two see a club index they cannot
    rank (``?C``). The tracker keeps the J♣ alone and what those readings knew (``beyond``); the
    decoder fills the play up to the lead's length with ``?C`` before ``??``, and the deck's
    inventory can then settle it."""
    tracker_votes = Counter({parsed("JC"): 9, parsed("??", "JC"): 1, parsed("?C", "JC"): 2})
    w = _decide_with_unknown("W", tracker_votes, 30)
    assert names(w.cards) == ("JC",) and names(w.beyond) == ("?C",)
    t = TrackedTrick((tp("S", "3C", "3C"), tp("E", "QC", "QC"), tp("N", "JC", "KC"), w), True)
    deal = build_deal([t], (), DealInfo("national-2deck", "4", "H", "S"))
    assert deal.log.to_json()["tricks"][0]["plays"][3] == ["W", ["JC", "?C"]]
    bare = replace(w, beyond=())
    deal = build_deal([replace(t, plays=(*t.plays[:3], bare))], (), DealInfo("national-2deck", "4", "H", "S"))
    assert deal.log.to_json()["tricks"][0]["plays"][3] == ["W", ["JC", "??"]]


def test_a_lead_a_later_reading_saw_short_keeps_the_card_its_first_readings_named() -> None:
    """E leads three 8♥ fanned; the area's first reading names all three, the readings after it
    pair the top card's index with the middle card's and see two. The tracker decides two and keeps
    the third 8♥ the longer readings named (``beyond``); the follows are three cards, so the decoder
    fills the lead with it, not ``??``, and questions the trick (no alert rests on it)."""
    play = _Open("E", 1005)
    for frame in range(1005, 1010):
        play.add(frame, parsed("8H", "8H", "8H"))
    for frame in range(1010, 1050):
        play.add(frame, parsed("8H", "8H"))
    e = play.decide()
    assert names(e.cards) == ("8H", "8H") and names(e.beyond) == ("8H",)
    t = TrackedTrick(
        (e, tp("N", "AH", "AH", "AH"), tp("W", "10H", "10H", "JH"), tp("S", "3H", "3H", "AS")), True
    )
    deal = build_deal([t], (), DealInfo("zhku-3deck", "4", "S", "E"))
    assert deal.log.to_json()["tricks"][0]["plays"][0] == ["E", ["8H", "8H", "8H"]]
    assert 1 in deal.doubtful
    once = _Open("E", 1005)  # one reading alone names nothing beyond
    once.add(1005, parsed("8H", "8H", "8H"))
    for frame in range(1006, 1050):
        once.add(frame, parsed("8H", "8H"))
    assert once.decide().beyond == ()


def test_a_leader_among_the_possible_winners_seen_laying_first_alone_is_no_guess() -> None:
    """Trick 1's unknown card leaves S or E its winner; at trick 2 E's play lay alone before any
    other: E led, and trick 2 is not questioned. Had S's and E's plays settled in one reading, the
    leader would be a guess."""

    def at(seat: str, card: str, frame: int) -> TrackedPlay:
        return TrackedPlay(seat, (card,), 3, 3, frame)

    first = TrackedTrick((at("S", "AS", 0), at("E", "??", 5), at("N", "3S", 10), at("W", "4S", 15)), True)
    alone = TrackedTrick((at("E", "5D", 20), at("N", "6D", 25), at("W", "7D", 30), at("S", "8D", 35)), True)
    info = DealInfo("national-2deck", "2", "H", "S")
    deal = build_deal([first, alone], (), info)
    assert deal.log.to_json()["tricks"][1]["plays"][0] == ["E", ["5D"]] and 2 not in deal.doubtful
    together = TrackedTrick(
        (at("E", "5D", 20), at("S", "8D", 20), at("N", "6D", 25), at("W", "7D", 30)), True
    )
    assert 2 in build_deal([first, together], (), info).doubtful


def test_a_leader_guessed_from_the_order_of_settling_is_set_right_by_the_whole_deal() -> None:
    """A trick's winner led a card the camera never named (``??``): until the deal is read whole,
    any seat may have won it, and the next trick's leader is guessed from the order its plays
    settled in. Here the winner's next lead settles last, so the guess is another seat; once the
    deal is read, the inventory names the ``??`` and rules that seat out. The deal is decoded again
    with the other possible leader and is the deal as played."""
    from engine import score_log

    log = simulate_deal("national-1deck", 5)
    rounds = [[(s, tuple(c)) for s, c, *_ in t["plays"]] for t in log["tricks"]]
    result = score_log(log)
    winners = [t["winner"] for t in result["tricks"]]
    k = next(
        k
        for k in range(len(rounds) - 1)
        if len(rounds[k][0][1]) == 1 and winners[k] == rounds[k][0][0] and rounds[k + 1][0][0] == winners[k]
    )
    tricks = []
    for i, plays in enumerate(rounds):
        seen = [tp(s, *("??",) * len(c) if i == k and s == winners[k] else c) for s, c in plays]
        if i == k + 1:
            seen = seen[1:] + seen[:1]  # the leader's play settles last
        tricks.append(TrackedTrick(tuple(seen), True))
    deal = build_deal(
        tricks, log["bottom"], DealInfo("national-1deck", log["level"], log["trump"], log["dealer"])
    )
    assert deal.problem is None
    assert truth_plays(deal.log.to_json())[k + 1] == truth_plays(log)[k + 1]
    assert score_log(deal.log.to_json())["outcome"] == result["outcome"]
    assert {k + 1, k + 2} <= deal.doubtful  # no alert rests on the guessed tricks


def _tracked_from_log(log: dict, drop: int | None = None) -> list[TrackedTrick]:
    """The truth's tricks as a perfect tracker holds them, a trick every 40 frames; ``drop`` (0-based)
    never seen."""
    out = []
    for k, t in enumerate(log["tricks"]):
        if k != drop:
            plays = tuple(
                TrackedPlay(s, tuple(sorted(c)), 3, 3, 40 * k + i) for i, (s, c, *_) in enumerate(t["plays"])
            )
            out.append(TrackedTrick(plays, True))
    return out


@pytest.mark.parametrize(("rules", "seed", "drop"), [("national-1deck", 3, 4), ("national-2deck", 5, 11)])
def test_a_trick_the_camera_never_saw_is_put_in_as_unknown_cards_where_the_time_says(
    rules: str, seed: int, drop: int
) -> None:
    log = simulate_deal(rules, seed)
    info = DealInfo(rules, log["level"], log["trump"], log["dealer"])
    tricks = _tracked_from_log(log, drop)
    deal = build_deal(tricks, log["bottom"], info)
    assert deal.problem is None and deal.refusal is None and deal.unseen == (drop + 1,)
    got = deal.log.to_json()["tricks"]
    assert len(got) == len(log["tricks"]) and got[drop]["plays"][0][0] == log["tricks"][drop]["plays"][0][0]
    size = len(log["tricks"][drop]["plays"][0][1])
    assert [c for _, c, *_ in got[drop]["plays"]] == [["??"] * size] * 4
    others = [t for k, t in enumerate(log["tricks"]) if k != drop]
    assert truth_plays({"tricks": [t for k, t in enumerate(got) if k != drop]}) == truth_plays(
        {"tricks": others}
    )
    assert {drop, drop + 1, drop + 2} <= deal.doubtful  # no alert rests on it or the tricks beside it
    # the tracker's tricks after it are the log's one further on (their crops, their agreement)
    assert deal.log_trick(drop) == drop and deal.log_trick(drop + 1) == drop + 2
    assert all(t != drop + 1 for t, _, _ in deal.agreement)
    # the whole log, nothing dropped: the same deal read with every trick needs no repair
    assert build_deal(_tracked_from_log(log), log["bottom"], info).unseen == ()


def test_a_single_hand_short_is_not_an_unseen_trick() -> None:
    log = simulate_deal("national-1deck", 3)
    info = DealInfo("national-1deck", log["level"], log["trump"], log["dealer"])
    tricks = _tracked_from_log(log)
    last = tricks[-1]
    tricks[-1] = TrackedTrick(last.plays[:3], True)  # one play of the last trick unseen: not a trick
    short = TrackedTrick(
        tuple(replace(p, cards=p.cards[:-1]) if i == 0 else p for i, p in enumerate(tricks[2].plays)), True
    )
    tricks[2] = short
    deal = build_deal(tricks, log["bottom"], info)
    assert deal.unseen == ()


@pytest.mark.slow
def test_a_leader_the_inventory_rules_out_is_replaced_where_the_engine_names_it() -> None:
    """d6 as the general reader read it (guyenne-classic, whose court corners print no rank): S's
    lead of two kings in trick 6 was never seen, so E's play settled first and the decoder guessed E
    leads; only the whole deal's inventory shows that trick 5's unknown cards (S's and W's) cannot
    let E win it. The engine names trick 6; its other seats are tried there first (the guesses of
    the latest tricks alone did not reach it), and the log is accepted with S leading."""
    data = json.loads((Path(__file__).parent / "data" / "d6_tracked.json").read_text())
    tricks = [
        TrackedTrick(tuple(TrackedPlay(s, tuple(c), r, a, f) for s, c, r, a, f in t["plays"]), t["complete"])
        for t in data["tricks"]
    ]
    deal = build_deal(tricks, data["loose"], DealInfo(**data["info"]))
    assert deal.problem is None and deal.refusal is None
    leaders = [t["plays"][0][0] for t in deal.log.to_json()["tricks"]]
    assert len(leaders) == len(data["truth_leaders"]) == 30
    assert leaders[5] == data["truth_leaders"][5] == "S"
    assert {5, 6} <= deal.doubtful  # no alert rests on a lead the decoding chose


def _run(states: list[dict[str, list[str]]]) -> list[list[tuple[str, tuple[str, ...]]]]:
    tracker = TrickTracker(inertia=2)
    for frame, zones in enumerate(states):
        tracker.update(TableState(zones={s: tuple(sorted(zones.get(s, ()))) for s in SEATS}, frame=frame))
    return [[(p.seat, names(p.cards)) for p in t.plays] for t in tracker.tricks()]


def test_a_clear_hidden_by_a_misread_zone_still_ends_the_trick() -> None:
    """The table was cleared, but a misread kept N's zone from ever reading empty (filmed deal p2,
    enrolled plastic deck): W's and S's zones emptied together, then W laid a card none of its
    play's, so a new trick began where the zones emptied; N's new card is its play in it."""
    trick1 = (
        [{"W": ["JC"]}] * 3
        + [{"W": ["JC"], "S": ["2C"]}] * 3
        + [{"W": ["JC"], "S": ["2C"], "N": ["KC", "KH"]}] * 3
    )
    gap = [{"N": ["KH"]}] * 3  # the clear: only a misread left in N's zone
    trick2 = (
        [{"N": ["2S"]}] * 3 + [{"N": ["2S"], "W": ["AD"]}] * 3 + [{"N": ["2S"], "W": ["AD"], "S": ["JS"]}] * 3
    )
    tricks = _run(trick1 + gap + trick2)
    assert tricks == [
        [("W", ("JC",)), ("S", ("2C",)), ("N", ("KC", "KH"))],
        [("N", ("2S",)), ("W", ("AD",)), ("S", ("JS",))],
    ]


def test_a_zone_emptied_alone_or_showing_its_card_again_is_the_same_play() -> None:
    # an arm over W's zone for a few readings, then the same card: one play
    same = (
        [{"W": ["JC"]}] * 2
        + [{"W": ["JC"], "S": ["2C"]}] * 3
        + [{"S": ["2C"]}] * 3
        + [{"W": ["JC"], "S": ["2C"]}] * 3
    )
    assert _run(same) == [[("W", ("JC",)), ("S", ("2C",))]]
    # W's zone alone read empty, then another card: a misread of the same play, not a new trick
    alone = (
        [{"W": ["JC"]}] * 2
        + [{"W": ["JC"], "S": ["2C"]}] * 4
        + [{"S": ["2C"]}] * 3
        + [{"W": ["JS"], "S": ["2C"]}] * 2
    )
    assert _run(alone) == [[("W", ("JC",)), ("S", ("2C",))]]


def test_a_lead_read_longer_than_every_follow_is_cut_to_their_length() -> None:
    """Filmed deal p1 (enrolled plastic): S's lead of one card read as two, the three follows one
    card each. Three follows each missing a card are far less likely than a card read into the lead,
    so the trick is one card a seat; which of the lead's two cards was there is left open."""
    from edge_app.deal import _listed, decode_tricks

    head = parse_deal_log({"rules": "national-2deck", "level": "5", "trump": "H", "dealer": "S"})
    p = lambda seat, *cards: TrackedPlay(seat, tuple(cards), 3, 3, 0)  # noqa: E731
    trick = TrackedTrick((p("S", "7H", "KH"), p("E", "2C"), p("N", "6S"), p("W", "10D")), True)
    doubtful: set[int] = set()
    plays: set[tuple[int, str]] = set()
    assert _listed(decode_tricks([trick], head, doubtful, doubtful_plays=plays)) == [
        [("S", ["??"]), ("E", ["2C"]), ("N", ["6S"]), ("W", ["10D"])]
    ]
    assert doubtful == {1} and plays == {(1, "S")}
    # one follow read short is still a card the camera missed, not a lead read long: that play alone
    # is questioned
    short = TrackedTrick((p("S", "7H", "KH"), p("E", "2C", "3C"), p("N", "6S"), p("W", "10D", "JD")), True)
    doubtful, plays = set(), set()
    assert _listed(decode_tricks([short], head, doubtful, doubtful_plays=plays))[0][2] == ("N", ["6S", "??"])
    assert doubtful == {1} and plays == {(1, "N")}


def test_a_captured_card_put_down_in_a_play_zone_is_no_play() -> None:
    """Filmed deal p60 (enrolled plastic, 3 decks): at a clear the defenders' captured 10♠ (N's)
    was put down face up in E's play zone and lay there for the rest of the deal. E's zone never
    read empty, so E's next play was read as the 10♠ with the Q♦ over it. Cards of the trick just
    cleared that lie in a zone until the next lead are set aside: E's play is the Q♦, and the next
    clear is an empty table again."""
    trick1 = (
        [{"S": ["4S"]}] * 3
        + [{"S": ["4S"], "E": ["KS"]}] * 3
        + [{"S": ["4S"], "E": ["KS"], "N": ["10S"]}] * 3
        + [{"S": ["4S"], "E": ["KS"], "N": ["10S"], "W": ["2S"]}] * 3
    )
    clear = [{"E": ["10S"]}] * 3
    trick2 = (
        [{"S": ["QH"], "E": ["10S"]}] * 3
        + [{"S": ["QH"], "E": ["10S", "QD"]}] * 2
        + [{"S": ["QH"], "E": ["10?", "QD"]}] * 2  # the 10♠ read without its suit
        + [{"S": ["QH"], "E": ["10S", "QD"]}] * 2
        + [{"S": ["QH"], "E": ["10S", "QD"], "N": ["3H"]}] * 3
        + [{"S": ["QH"], "E": ["10S", "QD"], "N": ["3H"], "W": ["5H"]}] * 3
    )
    trick3 = [{"E": ["10S"], "W": ["AC"]}] * 3 + [{"E": ["10S", "KC"], "W": ["AC"]}] * 3
    assert _run(trick1 + clear + trick2 + clear + trick3) == [
        [("S", ("4S",)), ("E", ("KS",)), ("N", ("10S",)), ("W", ("2S",))],
        [("S", ("QH",)), ("E", ("QD",)), ("N", ("3H",)), ("W", ("5H",))],
        [("W", ("AC",)), ("E", ("KC",))],
    ]


def test_a_winner_leading_beside_a_card_left_from_the_last_trick_leads_only_the_new_cards() -> None:
    """E won the trick; its own 10♠ was left lying (captured, put down where it lay) and E led the
    Q♦ beside it before anyone else played: E's lead is the Q♦."""
    trick1 = (
        [{"S": ["4S"]}] * 3
        + [{"S": ["4S"], "E": ["10S"]}] * 3
        + [{"S": ["4S"], "E": ["10S"], "N": ["2S"]}] * 3
    )
    clear = [{"E": ["10S"]}] * 3
    trick2 = [{"E": ["10S", "QD"]}] * 3 + [{"E": ["10S", "QD"], "S": ["3D"]}] * 3
    assert _run(trick1 + clear + trick2) == [
        [("S", ("4S",)), ("E", ("10S",)), ("N", ("2S",))],
        [("E", ("QD",)), ("S", ("3D",))],
    ]


def test_a_card_set_aside_counts_again_once_its_zone_has_been_empty() -> None:
    """The 10♠ left in E's zone is picked up (the zone reads empty); a later 10♠ there (another
    deck's) is a play again. A card lying through a clear that was no card of that trick (a new
    lead laid at once) is never set aside."""
    trick1 = [{"S": ["4S"]}] * 3 + [{"S": ["4S"], "N": ["10S"]}] * 3
    clear = [{"E": ["10S"]}] * 3
    trick2 = [{"S": ["QH"], "E": ["10S"]}] * 3 + [{"S": ["QH"], "E": ["10S", "QD"]}] * 3
    gone = [{}] * 3
    trick3 = [{"E": ["10S"]}] * 3 + [{"E": ["10S"], "S": ["3S"]}] * 3
    tracker = TrickTracker(inertia=2)
    for frame, zones in enumerate(trick1 + clear + trick2 + gone + trick3):
        tracker.update(TableState(zones={s: tuple(sorted(zones.get(s, ()))) for s in SEATS}, frame=frame))
    assert plays(tracker) == [
        [("S", ("4S",)), ("N", ("10S",))],
        [("S", ("QH",)), ("E", ("QD",))],
        [("E", ("10S",)), ("S", ("3S",))],
    ]
    assert names(tracker.in_play(state(E=["10S"])).zones["E"]) == ("10S",)
