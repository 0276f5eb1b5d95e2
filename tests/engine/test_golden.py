"""Golden files: hand-worked deal logs (the reasoning is in each ``_why``) and their expected
``score`` results. Only the contract's fields are compared; extra fields may be added."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import DealLogError, score_log
from tests.fill import complete

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(p.name.removesuffix(".log.json") for p in GOLDEN.glob("*.log.json"))
VIOLATION_KEYS = ("kind", "seat", "trick", "proven_at")


def contract_view(result: dict) -> dict:
    out = {k: result[k] for k in ("tricks", "captured", "defender_total", "bottom", "outcome") if k in result}
    if "outcome" in out:
        out["outcome"] = {k: out["outcome"][k] for k in ("side", "levels", "next_dealer")}
    out["violations"] = [{k: v[k] for k in VIOLATION_KEYS} for v in result["violations"]]
    return out


def test_there_are_golden_cases() -> None:
    assert len(CASES) >= 3


def renumbered(view: dict, skip: int) -> dict:
    """The view of the hand-written tricks alone, numbered from 1 as in the golden file."""
    out = dict(view, tricks=[{**t, "trick": t["trick"] - skip} for t in view["tricks"][skip:]])
    out["violations"] = [
        {**v, "trick": v["trick"] - skip, "proven_at": v["proven_at"] - skip} for v in view["violations"]
    ]
    return out


@pytest.mark.parametrize("name", CASES)
def test_golden(name: str) -> None:
    """A finished golden log holds the last tricks of a deal: the rest are filler tricks
    (``tests/fill.py``) that the dealer wins, the last of them won by the next leader."""
    log = json.loads((GOLDEN / f"{name}.log.json").read_text(encoding="utf-8"))
    expected = json.loads((GOLDEN / f"{name}.expected.json").read_text(encoding="utf-8"))
    expected.pop("_why", None)
    skip = 0
    if log.get("finished"):
        whole = complete(log)
        skip = len(whole["tricks"]) - len(log["tricks"])
        view = contract_view(score_log(whole))
        winners = [t["winner"] for t in view["tricks"][:skip]]
        assert winners == [log["dealer"]] * (skip - 1) + [log["tricks"][0]["plays"][0][0]]
    else:
        view = contract_view(score_log(log))
    assert renumbered(view, skip) == expected


def test_a_finished_log_that_misses_cards_is_refused() -> None:
    """deal-log.md: a finished log accounts for the whole deal, or ``score`` names what is missing."""
    log = json.loads((GOLDEN / "challenge_bottom_ruling.log.json").read_text(encoding="utf-8"))
    with pytest.raises(DealLogError, match="dealer's lead"):
        score_log(log)
    whole = complete(log)
    short_bottom = dict(whole, bottom=whole["bottom"][:3])
    with pytest.raises(
        DealLogError, match=r"the bottom has 3 of 8 cards; 5 card\(s\) of the decks never appear"
    ):
        score_log(short_bottom)
    cut = dict(whole, tricks=whole["tricks"][:5])
    with pytest.raises(DealLogError, match="each hand has 25 cards, but S played 5, E played 5"):
        score_log(cut)
    assert score_log(whole)["outcome"] is not None
