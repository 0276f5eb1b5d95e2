"""Trump declaration (seed 002 art. 8/21, seed 001 art. 8/10, seed 004 (7)), match state, rulings."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import engine
from engine.cards import parse_cards
from engine.declare import Declaration, DeclarationError, resolve_trump
from engine.match import MatchState, MatchStateError
from engine.rulings import default_ruling
from engine.seats import Seat


def d(seat: str, cards: str) -> Declaration:
    return Declaration(Seat[seat], parse_cards(cards.split()))


def test_national_more_level_cards_override_seed002_art21() -> None:
    r = resolve_trump(
        "national-3deck", 7, [d("S", "7H"), d("E", "7S 7S"), d("N", "7D 7D 7D")], first_deal=True
    )
    assert (r.trump, r.dealer, r.accepted) == ("D", Seat.N, (True, True, True))


def test_national_equal_count_does_not_override_and_no_self_override() -> None:
    r = resolve_trump("national-2deck", 7, [d("S", "7H"), d("E", "7S"), d("S", "7C 7C")], first_deal=True)
    assert (r.trump, r.accepted) == ("H", (True, False, False))


def test_reinforcement_by_the_declarer_seed002_art21_防反() -> None:
    r = resolve_trump(
        "national-2deck", 7, [d("S", "7H"), d("S", "7H"), d("E", "7S 7S")], first_deal=False, dealer=Seat.W
    )
    assert (r.trump, r.dealer, r.accepted) == ("H", Seat.W, (True, True, False))


def test_wrong_rank_is_not_a_declaration() -> None:
    r = resolve_trump(
        "national-2deck", 7, [d("S", "8H"), d("E", "7S")], first_deal=False, dealer=Seat.S, bottom=[]
    )
    assert (r.trump, r.accepted) == ("S", (False, True))


def test_national_no_declaration_flips_bottom_skipping_jokers_seed002_art21() -> None:
    r = resolve_trump(
        "national-2deck", 7, [], first_deal=False, dealer=Seat.E, bottom=parse_cards(["BJ", "SJ", "4C"])
    )
    assert (r.trump, r.dealer) == ("C", Seat.E)


def test_national_first_deal_without_declaration_is_redealt_seed002_art8() -> None:
    assert resolve_trump("national-2deck", 2, [], first_deal=True).redeal


def test_zhku_nobody_declares_first_drawer_deals_and_names_trump_seed001_art8() -> None:
    r = resolve_trump("zhku-3deck", 2, [], first_deal=True, first_drawer=Seat.W, named_trump="S")
    assert (r.trump, r.dealer) == ("S", Seat.W)
    with pytest.raises(DeclarationError):
        resolve_trump("zhku-3deck", 2, [], first_deal=True, first_drawer=Seat.W)


def test_challenge_pairs_override_and_joker_pair_makes_no_trump_seed004_7() -> None:
    r = resolve_trump("challenge-2deck", 4, [d("S", "4H"), d("E", "4S 4S"), d("N", "BJ BJ")], first_deal=True)
    assert (r.trump, r.dealer, r.accepted) == ("NT", Seat.N, (True, True, True))
    # a joker pair cannot open; a big-joker pair does not override a small-joker pair
    r = resolve_trump(
        "challenge-2deck",
        4,
        [d("S", "SJ SJ"), d("E", "4D"), d("S", "SJ SJ"), d("W", "BJ BJ")],
        first_deal=True,
    )
    assert (r.trump, r.accepted) == ("NT", (False, True, True, False))
    # no declaration → no-trump
    assert resolve_trump("challenge-2deck", 4, [], first_deal=False, dealer=Seat.S).trump == "NT"


def test_match_levels_dealer_and_game_won_past_ace() -> None:
    m = MatchState.new("national-2deck")
    m = m.after_deal({"dealer": "S"}, {"outcome": {"side": "defenders", "levels": 2, "next_dealer": "E"}})
    assert (m.levels, m.dealer, m.winner) == ({"NS": "2", "EW": "4"}, "E", None)
    m = MatchState(rules="national-2deck", levels={"NS": "K", "EW": "A"}, dealer="E")
    m = m.after_deal({"dealer": "E"}, {"outcome": {"side": "dealer", "levels": 1, "next_dealer": "W"}})
    assert m.winner == "EW"
    with pytest.raises(MatchStateError):
        m.after_deal({"dealer": "E"}, {"tricks": []})


def test_match_applies_ruling_levels() -> None:
    m = MatchState.new("zhku-3deck").after_deal(
        {"dealer": "S"},
        {"outcome": {"side": "dealer", "levels": 1, "next_dealer": "E", "ruling_levels": {"EW": 1}}},
    )
    assert m.levels == {"NS": "3", "EW": "3"}


def test_default_rulings_per_rule_set() -> None:
    assert default_ruling("national-2deck", "revoke", "E")["points"] == 20  # table 4 level 2
    assert default_ruling("national-3deck", "revoke", "E")["points"] == 30
    assert default_ruling("challenge-2deck", "revoke", "E")["points"] == 80
    assert default_ruling("zhku-3deck", "failed_throw", "E")["points"] == 20


def test_engine_doctests() -> None:
    """Every runnable docstring example in the engine."""
    failures = 0
    for info in pkgutil.iter_modules(engine.__path__):
        module = importlib.import_module(f"engine.{info.name}")
        failures += doctest.testmod(module).failed
    assert failures == 0


def test_engine_imports_only_the_standard_library() -> None:
    root = Path(engine.__file__).parent
    for path in root.glob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith(("import ", "from ")):
                top = line.split()[1].split(".")[0]
                assert top in sys.stdlib_module_names or top in ("engine", "__future__"), (path.name, line)


def test_engine_is_mypy_strict() -> None:
    mypy = Path(sys.executable).with_name("mypy")
    proc = subprocess.run(
        [str(mypy), "--strict", "engine"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(engine.__file__).parent.parent,
    )
    assert proc.returncode == 0, proc.stdout
