"""A bridge board filmed from above (``tractorcam synth deal --game bridge``): ``video.mp4``,
``truth.json`` (the board's log, :func:`bridge.sim.simulate_board`), ``table.json`` and
``timeline.json``, like a Shengji deal's film (:mod:`models.synth.deal`).

Filming follows a duplicate table:

* each player holds their hand at their edge (seen from the back);
* a card played is laid face up in front of its player (an arm reaches in with it);
* after the opening lead, dummy lays its 13 cards face up in front of itself, a column per suit
  (trumps first), each column running from dummy's edge towards declarer, its cards overlapping so
  each card's top index shows, turned to be read by declarer; a card dummy plays is taken out of
  its column (the column closes up) and laid face up nearer the centre, declarer's arm reaching
  over;
* when the trick is complete, each player turns their card face down in front of themselves, in a
  row beside their seat (law 65): lengthwise towards their partner for a trick their side won,
  crosswise for one it lost.

>>> film = plan_board(simulate_board(5, board=1), np.random.default_rng(5), "proc0")
>>> [kf.event["kind"] for kf in film.keyframes[:5]]
['start', 'play', 'play', 'dummy', 'dummy']
>>> sum(kf.event.get("kind") == "cleared" for kf in film.keyframes)
13
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from bridge.sim import simulate_board
from models.synth.deal import DealError, DealFilm, DealResult, Keyframe, film_setting, write_film
from models.synth.hands import random_arm
from models.synth.layout import CARD_H_MM, SEAT_ANGLE, Placement, Table, held_fan, lay

SEATS = ("N", "E", "S", "W")
#: How far each card of dummy's columns lies below the one before it (mm): its top index shows.
COLUMN_STEP_MM = 16.0
#: The share of the table's depth from dummy's edge that its columns keep within, as the table's
#: set-up asks (the table service's ``edge_app.bridge.DUMMY_LINE``).
COLUMNS_WITHIN = 0.27
#: Dummy's played card, as a share of the table's depth from dummy's edge: beyond that line,
#: towards the centre.
DUMMY_PLAY_DEPTH = 0.36


def _axes(table: Table, seat: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The seat's edge point, the unit vector from it towards the centre, and the one to its
    right-hand side as the player sees it."""
    edge = table.seat_edge(seat)
    inward = np.array([table.width / 2, table.height / 2]) - edge
    inward = inward / np.linalg.norm(inward)
    side = np.array([-inward[1], inward[0]])
    return edge, inward, side


def _partner(seat: str) -> str:
    return SEATS[(SEATS.index(seat) + 2) % 4]


def _suit_columns(cards: list[str], trump: str | None) -> list[list[str]]:
    """Dummy's cards by suit (trumps first, then S H D C), each column high to low."""
    order = ([trump] if trump else []) + [s for s in "SHDC" if s != trump]
    rank = {r: i for i, r in enumerate(["A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2"])}
    return [
        sorted((c for c in cards if c[-1] == s), key=lambda c: rank[c[:-1]])
        for s in order
        if any(c[-1] == s for c in cards)
    ]


def dummy_layout(
    rng: np.random.Generator,
    table: Table,
    dummy: str,
    cards: list[str],
    trump: str | None,
    design: str,
    cw: float,
) -> list[Placement]:
    """Dummy's cards laid face up in front of it (see the module docstring); a column's cards in the
    order they are drawn (each over the one before)."""
    edge, inward, side = _axes(table, dummy)
    columns = _suit_columns(cards, trump)
    across = table.height if dummy in ("N", "S") else table.width
    first = 45 + CARD_H_MM / 2
    room = COLUMNS_WITHIN * across - CARD_H_MM / 2 - first  # the last card's middle, a card inside the line
    pitch = cw + 9.0
    angle = SEAT_ANGLE[_partner(dummy)]  # read by declarer, across the table
    out: list[Placement] = []
    for i, column in enumerate(columns):
        # declarer's left first: declarer faces dummy, so its left is dummy's right (+side)
        offset = (len(columns) - 1) / 2 * pitch - i * pitch
        step = min(COLUMN_STEP_MM, room / max(1, len(column) - 1))  # a long suit closes up
        for k, card in enumerate(column):
            p = edge + inward * (first + k * step) + side * offset + rng.normal(0, 0.8, 2)
            out.append(
                Placement(
                    card,
                    True,
                    float(p[0]),
                    float(p[1]),
                    angle + float(rng.normal(0, 1.5)),
                    design,
                    "dummy",
                    dummy,
                )
            )
    return out


def _trick_winners(log: dict[str, Any]) -> list[str]:
    from bridge.play import score_log

    return [
        t["winner"]
        for t in score_log({k: v for k, v in log.items() if k not in ("hands", "injected")})["tricks"]
    ]


def plan_board(
    log: dict[str, Any], rng: np.random.Generator, design: str, table: Table | None = None
) -> DealFilm:
    """A finished bridge log (with ``"hands"``) as keyframes: placements in table mm, arms, holds."""
    from models.synth.faces import load_faces

    table = table or Table(900.0, 900.0)
    fs = load_faces(design)
    cw = CARD_H_MM * fs.size[0] / fs.size[1]
    declarer = log["declarer"]
    dummy = _partner(declarer)
    contract = log["contract"].rstrip("X")
    trump = None if contract.endswith("NT") else contract[1:]
    winners = _trick_winners(log)
    remaining = {s: list(log["hands"][s]) for s in SEATS}
    seat_rng = {s: int(rng.integers(1 << 30)) for s in SEATS}
    fans: dict[tuple[str, int], list[Placement]] = {}
    layout: list[Placement] = []
    turned: dict[str, list[Placement]] = {s: [] for s in SEATS}
    row_side = {s: float(rng.uniform(150, 175)) for s in SEATS}
    frames: list[Keyframe] = []

    def held() -> list[Placement]:
        out: list[Placement] = []
        for s in SEATS:
            if (s == dummy and layout) or not remaining[s]:
                continue
            key = (s, len(remaining[s]))
            if key not in fans:
                edge, inward, side = _axes(table, s)
                anchor = edge + inward * 55 + side * -60
                fans[key] = held_fan(
                    np.random.default_rng([seat_rng[s], key[1]]), table, s, remaining[s], design, cw, anchor
                )
            out += fans[key]
        return out

    def static() -> list[Placement]:
        return [p for s in SEATS for p in turned[s]]

    def frame(on_table: list[Placement], arms: list[Any], hold: float, event: dict[str, Any]) -> None:
        still = static()
        frames.append(Keyframe(still + layout + on_table + held(), arms, hold, event, len(still)))

    frame([], [], 1.5, {"kind": "start"})
    for t, trick in enumerate(log["tricks"]):
        on_table: list[Placement] = []
        for j, (seat, card) in enumerate(trick["plays"]):
            edge, inward, side = _axes(table, seat)
            if seat == dummy and layout:
                across = table.height if seat in ("N", "S") else table.width
                depth = DUMMY_PLAY_DEPTH * across
                spot = edge + inward * depth + side * rng.normal(0, 15) + inward * rng.normal(0, 5)
                angle = SEAT_ANGLE[_partner(seat)] + float(rng.normal(0, 8))
                reacher = declarer  # declarer takes the card from dummy's columns
            else:
                spot = table.zone_centre(seat) + rng.normal(0, 15, 2)
                angle = SEAT_ANGLE[seat] + float(rng.normal(0, 8))
                reacher = seat
            on_table += lay(rng, [card], spot, angle, "single", design, cw, role="play", seat=seat)
            remaining[seat].remove(card)
            if seat == dummy and layout:
                layout = dummy_layout(rng, table, dummy, remaining[dummy], trump, design, cw)
            arm = random_arm(rng, table, reacher, spot + (table.seat_edge(reacher) - spot) * 0.2)
            event = {"kind": "play", "trick": t, "play": j, "seat": seat}
            frame(on_table, [arm], 0.5, event)
            frame(on_table, [], 0.6 if j < 3 else 1.2, event)
            if t == 0 and j == 0:  # the opening lead made, dummy's hand goes down
                layout = dummy_layout(rng, table, dummy, remaining[dummy], trump, design, cw)
                near = table.seat_edge(dummy)
                arm = random_arm(rng, table, dummy, near + (table.zone_centre(dummy) - near) * 0.5)
                frame(on_table, [arm], 0.8, {"kind": "dummy", "seat": dummy})
                frame(on_table, [], 1.5, {"kind": "dummy", "seat": dummy})
        winner = winners[t]
        for p in on_table:  # each turns their card face down in front of themselves (law 65)
            s = p.seat or "S"
            edge, inward, side = _axes(table, s)
            k = len(turned[s])
            at = edge + inward * 115 + side * (row_side[s] + 12 * k) + rng.normal(0, 1.5, 2)
            won = winner in (s, _partner(s))
            angle = SEAT_ANGLE[s] + (0.0 if won else 90.0) + float(rng.normal(0, 4))
            turned[s].append(Placement(p.card, False, float(at[0]), float(at[1]), angle, design, "turned", s))
        frame([], [], 0.8, {"kind": "cleared", "trick": t, "winner": winner})
    return DealFilm(log, table, design, frames)


def render_board(
    seed: int,
    out: Path,
    *,
    rules: str | None = None,
    inject_revoke: bool = False,
    inject_failed_throw: bool = False,
    fps: int = 10,
    width: int = 1920,
    height: int = 1440,
    design: str | None = None,
    deals: int = 1,
    markers: float | None = None,
) -> DealResult:
    """Simulate a bridge board (:func:`bridge.sim.simulate_board`), film it and write ``video.mp4``,
    ``truth.json``, ``table.json`` and ``timeline.json`` to ``out``. ``rules`` is Shengji's (a
    board has none); a failed throw and more than one board a film are refused (:class:`DealError`)."""
    if inject_failed_throw:
        raise DealError("bridge has no throws to fail")
    if deals != 1:
        raise DealError("a bridge film holds one board")
    start = time.perf_counter()
    log = simulate_board(seed, inject_revoke=inject_revoke)
    rng = np.random.default_rng(seed)
    design, table = film_setting(rng, design)
    film = plan_board(log, rng, design, table)
    video, frames, timeline, geometry = write_film(
        out, [film], rng, table, design, fps=fps, width=width, height=height, markers=markers, numbered=False
    )
    truth = Path(out) / "truth.json"
    truth.write_text(json.dumps(log, indent=1))
    return DealResult(
        video, truth, geometry, frames, len(log["tricks"]), time.perf_counter() - start, timeline
    )
