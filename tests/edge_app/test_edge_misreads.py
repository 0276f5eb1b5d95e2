"""Issue 39: a card misread in every frame raises no false alert. Simulated deals (with and without
an injected revoke or failed throw) read with one card swapped for another card of the deck go
through the table service's decoding and alerts as it runs live (tests/edge_app/misreads.py);
benchmarks/misreads.py measures more deals and more misreads."""

from __future__ import annotations

import pytest

from tests.edge_app.misreads import read_deal


@pytest.mark.parametrize("rules", ["national-1deck", "national-2deck"])
@pytest.mark.slow
def test_one_confident_misread_raises_no_false_alert(rules: str) -> None:
    deals = [read_deal(rules, seed, 1) for seed in range(30)]
    assert [(d.seed, d.misread, sorted(d.false_alerts)) for d in deals if d.false_alerts] == []
    # the misreads do not hide the deals' real violations wholesale
    truth = sum(len(d.truth) for d in deals)
    found = sum(len(d.truth & d.alerted) for d in deals)
    assert truth >= 15 and 2 * found >= truth, (found, truth)


def test_a_misread_the_rules_place_leaves_the_revoke_alerted() -> None:
    """One-deck deal 4: N revokes at trick 7, and the fourth play of trick 4 is read as the small
    joker, so the deal holds two. Read at the other place, the joker would make the players break
    the rules more often: the rules settle which reading was wrong, and N's revoke is alerted (it
    is not when the decoding leaves both places in doubt)."""
    d = read_deal("national-1deck", 4, 1)
    assert d.misread == {(3, 3, 0): "SJ"}
    assert d.truth == {("revoke", "N", 7)} and d.alerted == d.truth and d.refused is None
