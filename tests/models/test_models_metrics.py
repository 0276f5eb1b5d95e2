from collections import Counter

import pytest

from models.metrics import RealBox, RealPrediction, RealReport, SceneReport, Tally, card_rank, multiset_tally


def test_tally_ratios():
    t = Tally(tp=8, fp=2, fn=0)
    assert (t.precision, t.recall) == (0.8, 1.0)
    assert t.f1 == pytest.approx(2 * 0.8 / 1.8)
    assert Tally().precision == 1.0 and Tally().recall == 1.0


def test_multiset_counts_duplicates():
    pred = Counter({"7H": 1, "KS": 2, "BJ": 1})
    truth = Counter({"7H": 2, "KS": 2, "SJ": 1})
    t = multiset_tally(pred, truth)
    assert (t.tp, t.fp, t.fn) == (3, 1, 2)
    j = multiset_tally(pred, truth, frozenset({"SJ", "BJ"}))
    assert (j.tp, j.fp, j.fn) == (0, 1, 1)


def test_scene_report_exact_match_needs_equal_counts():
    r = SceneReport()
    r.add(Counter({"7H": 2}), Counter({"7H": 2}))
    r.add(Counter({"7H": 1}), Counter({"7H": 2}))
    r.add(Counter(), Counter())
    assert r.plays == 3 and r.exact_plays == 2
    assert r.per_class["7H"].fn == 1 and r.cards.tp == 3


def test_card_rank():
    assert [card_rank(c) for c in ("10H", "AS", "9D", "BJ")] == ["10", "A", "9", "BJ"]


def test_real_photo_matching_needs_rank_and_centre_inside():
    truth = [RealBox("K", (0, 0, 100, 140)), RealBox("9", (200, 0, 300, 140))]
    preds = [
        RealPrediction("K", 0.9, (5, 5, 25, 45)),  # inside the king box: TP
        RealPrediction("K", 0.8, (205, 5, 225, 45)),  # inside the nine box but wrong rank: FP
        RealPrediction("9", 0.7, (400, 5, 420, 45)),  # right rank, outside: FP
    ]
    from models.metrics import real_photo_tally

    t = real_photo_tally(preds, truth)
    assert (t.tp, t.fp, t.fn) == (1, 2, 1)
    rep = RealReport()
    rep.add(t)
    rep.add(Tally(tp=2))
    assert rep.photos == 2 and rep.perfect_photos == 1
    assert rep.mean_photo_precision == pytest.approx((1 / 3 + 1) / 2)
