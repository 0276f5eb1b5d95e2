"""Bridge's scores worked by hand (law 77 of the 1997 Laws), boards' dealer and vulnerability (law 2),
IMPs (law 78) and match points, each against figures written here, not computed by the code."""

import pytest

from bridge import (
    ContractError,
    board_dealer,
    board_vulnerability,
    duplicate_score,
    imps,
    matchpoints,
    parse_contract,
)

# contract, vulnerable, tricks taken by declarer's side, score from declarer's side (by hand)
HAND_WORKED = [
    ("1C", False, 7, 70),  # 20 + 50 part score
    ("1C", False, 9, 110),  # + 2 overtricks at 20
    ("2H", False, 8, 110),  # 60 + 50
    ("2S", True, 10, 170),  # 60 + 50 + 2 × 30
    ("1NT", False, 7, 90),  # 40 + 50
    ("2NT", True, 8, 120),  # 70 + 50
    ("3NT", False, 9, 400),  # 100 + 300
    ("3NT", True, 9, 600),  # 100 + 500
    ("3NT", False, 10, 430),
    ("4H", False, 10, 420),  # 120 + 300
    ("4S", True, 11, 650),  # 120 + 500 + 30
    ("5C", False, 11, 400),  # 100 + 300
    ("5D", True, 11, 600),
    ("6H", False, 12, 980),  # 180 + 300 + 500
    ("6S", True, 13, 1460),  # 180 + 500 + 750 + 30
    ("6NT", False, 12, 990),  # 190 + 300 + 500
    ("7NT", True, 13, 2220),  # 220 + 500 + 1500
    ("7C", False, 13, 1440),  # 140 + 300 + 1000
    ("1CX", False, 7, 140),  # 40 + 50 + 50 (the insult)
    ("2DX", False, 8, 180),  # 80 + 50 + 50
    ("2HX", False, 8, 470),  # 120: a game; + 300 + 50
    ("2HX", True, 9, 870),  # 120 + 500 + 50 + 200
    ("1NTX", False, 8, 280),  # 80 + 50 + 50 + 100
    ("4SX", True, 10, 790),  # 240 + 500 + 50
    ("1CXX", False, 7, 230),  # 80 + 50 + 100
    ("1CXX", True, 8, 630),  # 80 + 50 + 100 + 400
    ("2SXX", False, 8, 640),  # 240 + 300 + 100
    ("7NTXX", True, 13, 2980),  # 880 + 500 + 1500 + 100
    # down, undoubled
    ("4H", False, 9, -50),
    ("4H", True, 7, -300),
    ("7NT", False, 0, -650),
    # down, doubled, not vulnerable: 100, 300, 500, 800, 1100, …
    ("3NTX", False, 8, -100),
    ("3NTX", False, 7, -300),
    ("3NTX", False, 6, -500),
    ("3NTX", False, 5, -800),
    ("3NTX", False, 4, -1100),
    ("7CX", False, 0, -3500),  # 13 down: 100 + 200 + 200 + 10 × 300
    # down, doubled, vulnerable: 200, 500, 800, 1100, …
    ("4SX", True, 9, -200),
    ("4SX", True, 8, -500),
    ("4SX", True, 7, -800),
    ("4SX", True, 6, -1100),
    # redoubled: twice the doubled
    ("2HXX", False, 7, -200),
    ("2HXX", False, 5, -1000),
    ("2HXX", True, 7, -400),
    ("2HXX", True, 6, -1000),
]


@pytest.mark.parametrize(("contract", "vulnerable", "tricks", "expected"), HAND_WORKED)
def test_law_77_scores_worked_by_hand(contract: str, vulnerable: bool, tricks: int, expected: int) -> None:
    assert duplicate_score(parse_contract(contract), vulnerable, tricks) == expected


def test_a_board_passed_out_scores_nothing() -> None:
    assert duplicate_score(parse_contract("PASS"), True, 0) == 0


@pytest.mark.parametrize("text", ["8H", "0NT", "4Z", "4HXXX", "NT", "", "4 H", "PASSX", 4])
def test_what_is_not_a_contract_is_refused(text: object) -> None:
    with pytest.raises(ContractError):
        parse_contract(text)


def test_each_boards_dealer_and_vulnerability_follow_law_2() -> None:
    dealers = "NESW" * 4
    vulnerable = {
        "none": {1, 8, 11, 14},
        "NS": {2, 5, 12, 15},
        "EW": {3, 6, 9, 16},
        "both": {4, 7, 10, 13},
    }
    for board in range(1, 65):
        pattern = (board - 1) % 16 + 1
        assert board_dealer(board).name == dealers[pattern - 1]
        assert pattern in vulnerable[board_vulnerability(board)]


# law 78's scale, both ends of every band (games.md)
IMP_BANDS = [
    (0, 10, 0), (20, 40, 1), (50, 80, 2), (90, 120, 3), (130, 160, 4), (170, 210, 5), (220, 260, 6),
    (270, 310, 7), (320, 360, 8), (370, 420, 9), (430, 490, 10), (500, 590, 11), (600, 740, 12),
    (750, 890, 13), (900, 1090, 14), (1100, 1290, 15), (1300, 1490, 16), (1500, 1740, 17),
    (1750, 1990, 18), (2000, 2240, 19), (2250, 2490, 20), (2500, 2990, 21), (3000, 3490, 22),
    (3500, 3990, 23), (4000, 7600, 24),
]  # fmt: skip


@pytest.mark.parametrize(("lo", "hi", "value"), IMP_BANDS)
def test_imps_follow_law_78s_scale(lo: int, hi: int, value: int) -> None:
    assert imps(lo) == imps(hi) == value
    assert imps(-lo) == imps(-hi) == -value


def test_match_points_of_a_traveller() -> None:
    # five tables: 2 for each score beaten, 1 for each tie; top 8
    assert matchpoints([620, 170, 620, -100, 650]) == ([5, 2, 5, 0, 8], [3, 6, 3, 8, 0])
    assert matchpoints([50]) == ([0], [0])
    assert matchpoints([]) == ([], [])
