"""PBN 2.1 export and import (``tractorcam bridge pbn|log``), checked against endplay, a well-kept
bridge library: what tractorcam writes endplay reads as the same board, play, result and score, and
what endplay writes tractorcam reads back to the same log."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from endplay.parsers import pbn as endplay_pbn
from endplay.types import Board, Deal, Player, Vul
from endplay.types import Card as EpCard
from endplay.types import Contract as EpContract
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bridge import parse_bridge_log, score_log
from bridge.pbn import PbnError, read_pbn, to_pbn
from tests.bridge.helpers import CLOCKWISE, as_log, log, play, random_boards

SEAT = {"N": Player.north, "E": Player.east, "S": Player.south, "W": Player.west}
VUL = {"none": Vul.none, "NS": Vul.ns, "EW": Vul.ew, "both": Vul.both}


def _ep_card(name: str) -> str:
    """``10H`` → endplay's ``HT``."""
    rank = "T" if name[:-1] == "10" else name[:-1]
    return name[-1] + rank


def _hands(tricks: list[list[tuple[str, str]]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {s: set() for s in CLOCKWISE}
    for trick in tricks:
        for seat, card in trick:
            out[seat].add(_ep_card(card))
    return out


def _hand(cards: set[str]) -> str:
    """endplay's cards (``HT``) as a PBN hand, spades.hearts.diamonds.clubs."""
    return ".".join(
        "".join(sorted((c[1] for c in cards if c[0] == suit), key="AKQJT98765432".index)) for suit in "SHDC"
    )


def _with_dummy(data: dict[str, Any], tricks: list[list[tuple[str, str]]]) -> dict[str, Any]:
    dummy = CLOCKWISE[(CLOCKWISE.index(data["declarer"]) + 2) % 4]
    laid = [card for trick in tricks for seat, card in trick if seat == dummy]
    return {**data, "dummy": laid}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**random_boards(48))
def test_endplay_reads_our_pbn_as_the_same_board_play_result_and_score(
    seed: int, level: int, strain: str, doubled: str, declarer: str, board: int
) -> None:
    contract = f"{level}{strain}{doubled}"
    tricks, _, _ = play(random.Random(seed), contract, declarer)
    data = _with_dummy(as_log(contract, declarer, tricks, board), tricks)
    ours = score_log(data)
    (got,) = endplay_pbn.loads(to_pbn([parse_bridge_log(data)]))
    assert got.board_num == board
    assert got.vul == VUL[ours["vulnerable"]]
    assert got.dealer == SEAT[ours["dealer"]]
    assert got.contract.level == level and got.contract.declarer == SEAT[declarer]
    assert got.contract.denom == EpContract(contract).denom
    assert got.contract.penalty.name == {"": "passed", "X": "doubled", "XX": "redoubled"}[doubled]
    assert [str(c) for c in got.play] == [str(EpCard(_ep_card(card))) for t in tricks for _, card in t]
    for seat, cards in _hands(tricks).items():
        assert {str(c) for c in got.deal[SEAT[seat]]} == {str(EpCard(c)) for c in cards}
    # endplay's own trick count and law 77 score agree with ours
    assert got.contract.result == ours["result"]
    side_score = ours["score"]["NS" if declarer in "NS" else "EW"]
    assert got.contract.score(got.vul) == side_score


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    level=st.integers(1, 7),
    strain=st.sampled_from(["C", "D", "H", "S", "NT"]),
    declarer=st.sampled_from(list(CLOCKWISE)),
    board=st.integers(1, 48),
)
def test_we_read_endplays_pbn_back_to_the_log(
    seed: int, level: int, strain: str, declarer: str, board: int
) -> None:
    contract = f"{level}{strain}"
    tricks, winners, _ = play(random.Random(seed), contract, declarer)
    side = {declarer, CLOCKWISE[(CLOCKWISE.index(declarer) + 2) % 4]}
    taken = sum(w in side for w in winners)
    hands = _hands(tricks)
    deal = Deal("N:" + " ".join(_hand(hands[s]) for s in CLOCKWISE))
    ep = Board(deal=deal, board_num=board)
    ep.contract = EpContract(contract)
    ep.contract.declarer = SEAT[declarer]
    ep.contract.result = taken - 6 - level
    empty = parse_bridge_log(as_log(contract, declarer, [], board) | {"finished": False})
    ep.vul, ep.dealer = VUL[empty.vulnerable], SEAT[empty.dealer.name]
    ep.play = [EpCard(_ep_card(card)) for t in tricks for _, card in t]
    (got,) = read_pbn(endplay_pbn.dumps([ep]))
    want = parse_bridge_log(_with_dummy(as_log(contract, declarer, tricks, board), tricks))
    assert got.tricks == want.tricks
    assert (got.board, str(got.contract), got.declarer, got.finished) == (
        board,
        contract,
        want.declarer,
        True,
    )
    assert set(got.dummy or ()) == set(want.dummy or ())


def _claimed(**extra: Any) -> dict[str, Any]:
    return log(
        "3NT", "S",
        "W:2C N:AC E:3C S:4C",
        "N:AH E:2H S:3H W:4H",
        board=5, claim={"declarer_tricks": 9, "after_trick": 2}, finished=True, **extra,
    )  # fmt: skip


def test_a_claim_is_written_as_its_result_and_read_back() -> None:
    original = parse_bridge_log(_claimed())
    text = to_pbn([original])
    # columns from the opening leader W: W N E S, whoever led
    assert '[Result "9"]' in text and "\nC2 CA C3 C4\nH4 HA H2 H3\n*" in text
    (ep,) = endplay_pbn.loads(text)
    assert ep.claimed and ep.contract.result == 0 and len(ep.play) == 8
    assert read_pbn(text) == [original]


def test_a_revoke_is_written_with_its_transfer_in_the_result_and_read_back_to_the_same_log() -> None:
    # E fails to follow to the first club (discarding a heart) and plays a club later: one trick to declarer
    data = log(
        "1NT", "S",
        "W:2C N:3C E:2H S:4C",
        "S:AC W:5C N:6C E:7C",
        board=1, claim={"declarer_tricks": 9, "after_trick": 2}, finished=True,
    )  # fmt: skip
    scored = score_log(data)
    assert scored["violations"][0]["transferred"] == 1 and scored["adjusted_tricks"] == 10
    text = to_pbn([parse_bridge_log(data)])
    assert '[Result "10"]' in text
    assert read_pbn(text) == [parse_bridge_log(data)]


def test_an_unfinished_and_a_passed_out_board_round_trip() -> None:
    unfinished = parse_bridge_log(log("4S", "N", "E:2C S:3C W:4C", board=9))
    passed = parse_bridge_log({"game": "bridge", "board": 4, "contract": "PASS", "finished": True})
    text = to_pbn([unfinished, passed])
    assert '[Result "?"]' in text and "C2 C3 C4 -" in text and '[Contract "Pass"]' in text
    assert read_pbn(text) == [unfinished, passed]


def test_a_log_with_an_unknown_card_is_refused_for_pbn() -> None:
    with pytest.raises(PbnError, match=r"trick 1, play 3: \?S is not named"):
        to_pbn([parse_bridge_log(log("4S", "N", "E:2C S:3C W:?S", board=9))])


GOOD = """[Board "7"]
[Dealer "S"]
[Vulnerable "All"]
[Declarer "S"]
[Contract "4HX"]
[Result "?"]
[Play "W"]
DK D2 D5 DA
*
"""


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "no game in the file"),
        ('[Board "x"]\n[Contract "1S"]', "a board number is needed"),
        (GOOD.replace('[Dealer "S"]', '[Dealer "E"]'), "law 2 has S deal board 7"),
        (GOOD.replace('"All"', '"Most"'), "vulnerability is one of"),
        (GOOD.replace('[Contract "4HX"]', '[Contract "8H"]'), "level is 1 to 7"),
        (GOOD.replace('[Contract "4HX"]\n', ""), "a contract is needed"),
        (GOOD.replace('[Declarer "S"]', '[Declarer "Q"]'), "declarer is N, E, S or W"),
        (GOOD.replace('[Play "W"]', '[Play "N"]'), "W, leads"),
        (GOOD.replace("DK D2 D5 DA", "DK D2 D5"), "a trick is a line of four"),
        (GOOD.replace("DK D2 D5 DA", "DK D2 D5 D1"), "is not a card"),
        (GOOD.replace("DK D2 D5 DA", "DK D2 D5 DK"), "KD again"),
        (GOOD.replace("DK D2 D5 DA", "DK - D5 DA"), "a card follows a seat that has not played"),
        (GOOD.replace('[Result "?"]', '[Result "15"]'), "0 to 13"),
        (
            GOOD.replace('[Result "?"]', '[Result "0"]'),
            "the claim gives declarer's side 0 tricks; it has already won 1",
        ),
        (GOOD + '[Deal "S:AK... A... - -"]', "the deal gives AS to S and W"),
        (GOOD + '[Deal "S:AK.. - - -"]', "a hand is spades.hearts.diamonds.clubs"),
        (GOOD + '[Deal "S:..K. - - -"]', "W plays KD, which the deal gives to S"),
        (GOOD + '[Deal "W:AKQJT98765432... - - -"]', "W plays KD, not in W's hand of the deal"),
        (GOOD.replace("*", "* {open comment"), "never closed"),
        ("DK D2\n", "neither a tag nor in a section"),
    ],
)
def test_a_bad_pbn_file_is_refused_with_one_line_naming_it(text: str, said: str) -> None:
    with pytest.raises(PbnError) as caught:
        read_pbn(text)
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_comments_notes_and_inherited_tags_are_read() -> None:
    text = (
        "% PBN 2.1\n; a line comment\n"
        + GOOD.replace("DK D2 D5 DA", "DK =1= D2 {a note} D5! DA $3")
        + '\n[Board "8"]\n[Dealer "W"]\n[Vulnerable "None"]\n[Declarer "#"]\n[Contract "3NT"]\n[Result "?"]\n'
    )
    first, second = read_pbn(text)
    assert [str(p.card) for p in first.tricks[0]] == ["KD", "2D", "5D", "AD"]
    assert second.declarer is not None and second.declarer.name == "S" and str(second.contract) == "3NT"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tractorcam_cli", *args], capture_output=True, text=True, timeout=120
    )


def test_tractorcam_bridge_pbn_and_log(tmp_path: Path) -> None:
    data = _claimed()
    (tmp_path / "b.json").write_text(json.dumps(data))
    written = _cli("bridge", "pbn", str(tmp_path / "b.json"))
    assert written.returncode == 0, written.stderr
    (tmp_path / "b.pbn").write_text(written.stdout)
    back = _cli("bridge", "log", str(tmp_path / "b.pbn"))
    assert back.returncode == 0, back.stderr
    assert parse_bridge_log(json.loads(back.stdout)) == parse_bridge_log(data)
    (tmp_path / "bad.pbn").write_text(GOOD.replace('[Dealer "S"]', '[Dealer "E"]'))
    bad = _cli("bridge", "log", str(tmp_path / "bad.pbn"))
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and bad.stderr.count("\n") == 1
    (tmp_path / "bad.json").write_text('{"game": "bridge", "board": 0}')
    bad = _cli("bridge", "pbn", str(tmp_path / "bad.json"))
    assert bad.returncode == 2 and '"board" must be a whole number 1 to 999' in bad.stderr
    missing = _cli("bridge", "log", str(tmp_path / "nothing.pbn"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr
