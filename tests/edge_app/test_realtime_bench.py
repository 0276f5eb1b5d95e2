"""benchmarks/realtime.py's accounting of a film's timeline: each play's span and where its cards lie."""

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "realtime.py"


@pytest.fixture(scope="module")
def realtime():
    spec = importlib.util.spec_from_file_location("bench_realtime", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _card(card, role, seat, face_up, quad):
    return {"card": card, "role": role, "seat": seat, "face_up": face_up, "quad": quad}


SQUARE = [[0, 0], [10, 0], [10, 20], [0, 20]]
FAR = [[100, 100], [110, 100], [110, 120], [100, 120]]
TIMELINE = {
    "fps": 10,
    "frames": 60,
    "keyframes": [
        {"frame": 0, "event": {"kind": "start"}, "cards": []},
        {
            "frame": 5,
            "event": {"kind": "play", "trick": 0, "play": 0, "seat": "N"},
            "cards": [_card("5S", "play", "N", True, SQUARE), _card("7H", "hand", "N", False, FAR)],
        },
        {
            "frame": 12,
            "event": {"kind": "play", "trick": 0, "play": 1, "seat": "E"},
            "cards": [
                _card("5S", "play", "N", True, SQUARE),
                _card("9S", "play", "E", True, FAR),
                _card("9S", "play", "E", True, SQUARE),
            ],
        },
        {"frame": 30, "event": {"kind": "cleared", "trick": 0}, "cards": []},
    ],
}


def test_play_spans_run_from_landing_to_the_clear(realtime):
    assert realtime.play_spans(TIMELINE) == [(0, "N", 5, 30), (0, "E", 12, 30)]


def test_play_middles_are_the_seat_s_face_up_played_cards_only(realtime):
    middles = realtime.play_middles(TIMELINE)
    assert middles[(0, "N")] == [(5.0, 10.0)]  # not the hand card of N
    assert sorted(middles[(0, "E")]) == [(5.0, 10.0), (105.0, 110.0)]
