"""A whole simulated deal filmed from above: ``video.mp4``, ``truth.json`` and ``table.json``
(plus ``timeline.json``: which frames show which event and every card's label in them).

The deal comes from the engine's simulator (:func:`engine.sim.simulate_deal`). Filming follows
how a table plays: for each play a hand reaches into the player's zone and the cards land there;
the trick stays until it is complete; then every player turns their cards face down onto a pile
near their seat, except that point cards won by the defenders go face up to the centre. At the
start the buried bottom lies face down near the dealer; at the end it is turned up.

The film is a list of :class:`Keyframe` (placements + arms + how long it is held); each keyframe is
rendered once and written as many times as its duration asks, so a deal renders in about a minute.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from calibration.markers import marker_corners_mm
from calibration.table import TableGeometry
from engine.seats import SEAT_NAMES
from models.synth.designs import HELDOUT
from models.synth.layout import CARD_H_MM, SEAT_ANGLE, Placement, Table, held_fan, lay
from models.synth.markers import draw_table_markers
from models.synth.scene import Arm, Look, Renderer, available_designs, camera_homography, random_arm

SEATS = SEAT_NAMES
POINT_RANKS = ("5", "10", "K")


class DealError(ValueError):
    """Bad input for a deal film (unknown rule set, no simulator)."""


@dataclass
class Keyframe:
    """One distinct picture of the film."""

    placements: list[Placement]
    arms: list[Arm]
    hold: float  # seconds
    event: dict[str, Any] = field(default_factory=dict)  # what just happened (trick/play indices)
    static: int = 0  # leading placements unchanged since the last keyframe that had them (render cache)


@dataclass
class DealFilm:
    """Everything needed to render a deal: the log, the table, the keyframes."""

    log: dict[str, Any]
    table: Table
    design: str
    keyframes: list[Keyframe]


@dataclass
class DealResult:
    """Paths and counts of a rendered deal."""

    video: Path
    truth: Path
    table: Path
    frames: int
    tricks: int
    seconds: float
    timeline: Path | None = None


def _winners(log: dict[str, Any]) -> list[str | None]:
    from engine.score import score_log

    result = score_log({k: v for k, v in log.items() if k not in ("hands", "injected")})
    return [t.get("winner") for t in result["tricks"]]


def _partner(seat: str) -> str:
    return SEATS[(SEATS.index(seat) + 2) % 4]


def plan_deal(
    log: dict[str, Any],
    rng: np.random.Generator,
    design: str,
    table: Table | None = None,
    declare: tuple[str, list[str]] | None = None,
) -> DealFilm:
    """Turn a finished deal log into keyframes (table mm placements, arms, durations).
    ``declare`` (seat, cards): before the first lead that seat shows those cards face up in its
    zone to declare trump (亮主), then takes them back."""
    from models.synth.faces import load_faces

    table = table or Table(900.0, 900.0)
    fs = load_faces(design)
    cw = CARD_H_MM * fs.size[0] / fs.size[1]
    dealer = log["dealer"]
    dealer_side = {dealer, _partner(dealer)}
    winners = _winners(log)
    piles: dict[str, list[Placement]] = {s: [] for s in SEATS}
    centre: list[Placement] = []
    pile_spot: dict[str, Any] = {}
    for s in SEATS:
        edge = table.seat_edge(s)
        zc = table.zone_centre(s)
        side = np.array([-(edge - zc)[1], (edge - zc)[0]])
        side /= np.linalg.norm(side)
        pile_spot[s] = zc + (edge - zc) * 0.55 + side * 170
    _, centre_poly = table.zones()
    c0 = np.array(centre_poly[0]) + [cw * 0.6, CARD_H_MM * 0.6]
    bottom_spot = (
        table.zone_centre(dealer)
        + (table.seat_edge(dealer) - table.zone_centre(dealer)) * 0.5
        - np.array(
            [
                -(table.seat_edge(dealer) - table.zone_centre(dealer))[1],
                (table.seat_edge(dealer) - table.zone_centre(dealer))[0],
            ]
        )
        / np.linalg.norm(table.seat_edge(dealer) - table.zone_centre(dealer))
        * 170
    )
    bottom = lay(
        rng,
        list(log.get("bottom", [])),
        bottom_spot,
        float(rng.uniform(0, 360)),
        "pile",
        design,
        cw,
        face_up=False,
        role="bottom",
        seat=dealer,
    )

    def static() -> list[Placement]:
        return [*bottom, *(p for s in SEATS for p in piles[s]), *centre]

    # each player's remaining hand, held at their edge; the fan is redrawn only when it shrinks
    remaining = {s: list(log.get("hands", {}).get(s, [])) for s in SEATS}
    held_cache: dict[tuple[str, int], list[Placement]] = {}
    seat_rng = {s: int(rng.integers(1 << 30)) for s in SEATS}

    def held() -> list[Placement]:
        out: list[Placement] = []
        for s in SEATS:
            n = len(remaining[s])
            if n == 0:
                continue
            key = (s, n)
            if key not in held_cache:
                r = np.random.default_rng([seat_rng[s], n])
                edge = table.seat_edge(s)
                inward = np.array([table.width / 2, table.height / 2]) - edge
                inward /= np.linalg.norm(inward)
                anchor = edge + inward * 55 + np.array([-inward[1], inward[0]]) * 40
                held_cache[key] = held_fan(r, table, s, remaining[s], design, cw, anchor)
            out += held_cache[key]
        return out

    frames: list[Keyframe] = [Keyframe(static() + held(), [], 1.5, {"kind": "start"})]
    if declare is not None:
        seat, cards = declare
        spot = table.zone_centre(seat) + rng.normal(0, 20, 2)
        shown = lay(
            rng,
            cards,
            spot,
            SEAT_ANGLE[seat] + float(rng.normal(0, 8)),
            "fan",
            design,
            cw,
            role="declare",
            seat=seat,
        )
        arm = random_arm(rng, table, seat, spot + (table.seat_edge(seat) - spot) * 0.25)
        ev: dict[str, Any] = {"kind": "declare", "seat": seat, "cards": cards}
        frames.append(Keyframe(static() + shown + held(), [arm], 0.5, ev, len(static())))
        frames.append(Keyframe(static() + shown + held(), [], 2.0, ev, len(static())))
        frames.append(Keyframe(static() + held(), [], 1.0, {"kind": "declared", "seat": seat}))
    for t, trick in enumerate(log["tricks"]):
        on_table: list[Placement] = []
        for j, play in enumerate(trick["plays"]):
            seat, cards = play[0], list(play[1])
            kind = "single" if len(cards) == 1 else str(rng.choice(["fan", "fan", "row"]))
            spot = table.zone_centre(seat) + rng.normal(0, 20, 2)
            angle = SEAT_ANGLE[seat] + float(rng.normal(0, 8))
            laid = lay(rng, cards, spot, angle, kind, design, cw, role="play", seat=seat)
            arm = random_arm(rng, table, seat, spot + (table.seat_edge(seat) - spot) * 0.25)
            on_table += laid
            for c in cards:
                if c in remaining[seat]:
                    remaining[seat].remove(c)
            ev = {"kind": "play", "trick": t, "play": j, "seat": seat}
            still = static()
            frames.append(Keyframe(still + on_table + held(), [arm], 0.5, ev, len(still)))
            frames.append(Keyframe(still + on_table + held(), [], 0.5 if j < 3 else 1.2, ev, len(still)))
        # clear the trick
        win = winners[t] if t < len(winners) else None
        defenders_won = win is not None and win not in dealer_side
        for p in on_table:
            if defenders_won and p.card[:-1] in POINT_RANKS:
                k = len(centre)
                col, row = k % 10, k // 10
                x = c0[0] + col * cw * 0.42 + rng.normal(0, 1.5)
                y = c0[1] + row * CARD_H_MM * 0.45 + rng.normal(0, 1.5)
                centre.append(
                    Placement(
                        p.card, True, float(x), float(y), float(rng.normal(0, 3)), design, "captured", win
                    )
                )
            else:
                base = pile_spot[p.seat or "S"]
                off = rng.normal(0, 6, 2)
                piles[p.seat or "S"].append(
                    Placement(
                        p.card,
                        False,
                        float(base[0] + off[0]),
                        float(base[1] + off[1]),
                        float(SEAT_ANGLE[p.seat or "S"] + rng.normal(0, 10)),
                        design,
                        "pile",
                        p.seat,
                    )
                )
        frames.append(Keyframe(static() + held(), [], 0.5, {"kind": "cleared", "trick": t}))
    if not log.get("finished", True):
        return DealFilm(log, table, design, frames)  # a deal cut short: its bottom stays buried
    # the bottom turned up at the end
    spot = (
        np.array([table.width / 2, table.height / 2])
        + (table.seat_edge(dealer) - [table.width / 2, table.height / 2]) * 0.45
    )
    bottom = lay(
        rng,
        list(log.get("bottom", [])),
        spot,
        SEAT_ANGLE[dealer],
        "row",
        design,
        cw,
        role="bottom",
        seat=dealer,
    )
    frames.append(Keyframe(static(), [], 3.0, {"kind": "bottom"}))
    return DealFilm(log, table, design, frames)


def table_geometry(renderer: Renderer, card_w_mm: float) -> TableGeometry:
    """The calibration (``table.json``) of a renderer's camera."""
    zones, centre = renderer.table.zones()
    return TableGeometry(
        image_width=renderer.width,
        image_height=renderer.height,
        image_to_table=np.linalg.inv(renderer.view).tolist(),
        table_to_image=renderer.view.tolist(),
        table_width_mm=renderer.table.width,
        table_height_mm=renderer.table.height,
        zones=zones,
        centre=centre,
        card_width_mm=round(card_w_mm, 2),
        card_height_mm=CARD_H_MM,
        distortion=renderer.distortion,
    )


def video_look(rng: np.random.Generator, brightness: float = 0.8) -> Look:
    """A camera's look for a film: moderate blur and noise, no JPEG, a slight lens, at least
    ``brightness``."""
    look = Look.random(rng)
    look.blur = min(look.blur, 0.6)
    look.jpeg = 0
    look.noise = min(look.noise, 3.0)
    look.k1 = float(np.clip(look.k1, -0.03, 0.03))
    look.brightness = max(look.brightness, brightness)
    return look


def make_renderer(rng: np.random.Generator, table: Table, width: int, height: int) -> Renderer:
    """A fixed overhead camera with a moderate, video-like look."""
    look = video_look(rng)
    view = camera_homography(rng, table, width, height, fill=float(rng.uniform(0.9, 1.0)), tilt=0.02)
    return Renderer(rng, width, height, table, view, look)


def render_deal(
    seed: int,
    out: Path,
    *,
    rules: str = "national-2deck",
    inject_revoke: bool = False,
    inject_failed_throw: bool = False,
    fps: int = 10,
    width: int = 1920,
    height: int = 1440,
    design: str | None = None,
    max_tricks: int | None = None,
    deals: int = 1,
    markers: float | None = None,
) -> DealResult:
    """Simulate a deal, film it and write ``video.mp4``, ``truth.json`` and ``table.json`` to ``out``.

    ``deals`` > 1 films a match at one table, deal after deal (:func:`match_logs`): each deal
    starts from a cleared table with its trump declared (亮主), and ``truth.json`` is the list of
    the deals' logs. ``markers``: the corner markers' side in mm, laid on the table as the sheet
    says (:mod:`models.synth.markers`), so that ``run`` can calibrate the film itself; the truth's
    ``table.json`` then records where they lie."""
    import time

    if deals < 1:
        raise DealError(f"deals must be at least 1, got {deals}")
    try:
        logs = match_logs(
            rules, seed, deals, inject_revoke=inject_revoke, inject_failed_throw=inject_failed_throw
        )
    except (KeyError, ValueError) as exc:
        raise DealError(str(exc)) from exc
    if max_tricks is not None:
        log = logs[0]
        logs = [{**log, "tricks": log["tricks"][:max_tricks], "finished": max_tricks >= len(log["tricks"])}]
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    design, table = film_setting(rng, design)
    films = [plan_deal(log, rng, design, table, declaration(log, rng) if deals > 1 else None) for log in logs]
    video, frames, tl, tj = write_film(
        out,
        films,
        rng,
        table,
        design,
        fps=fps,
        width=width,
        height=height,
        markers=markers,
        numbered=deals > 1,
    )
    truth = Path(out) / "truth.json"
    truth.write_text(json.dumps(logs[0] if deals == 1 else logs, indent=1))
    tricks = sum(len(log["tricks"]) for log in logs)
    return DealResult(video, truth, tj, frames, tricks, time.perf_counter() - start, tl)


def film_setting(rng: np.random.Generator, design: str | None) -> tuple[str, Table]:
    """A film's card design (``design``, else one of the held-out ones drawn) and its table."""
    names = available_designs(HELDOUT)
    design = design or names[int(rng.integers(len(names)))]
    return design, Table(float(rng.uniform(850, 950)), float(rng.uniform(850, 950)))


def write_film(
    out: Path,
    films: list[DealFilm],
    rng: np.random.Generator,
    table: Table,
    design: str,
    *,
    fps: int,
    width: int,
    height: int,
    markers: float | None,
    numbered: bool,
) -> tuple[Path, int, Path, Path]:
    """Film ``films`` one after the other with a fixed overhead camera (:func:`make_renderer`) and
    write ``video.mp4``, ``timeline.json`` (each keyframe's deal index when ``numbered``) and
    ``table.json`` (with the corner markers' places when ``markers``) to ``out``: their paths
    and the frame count."""
    import cv2

    from models.synth.faces import load_faces

    renderer = make_renderer(rng, table, width, height)
    if markers is not None:
        draw_table_markers(
            renderer.base, renderer.view, (table.width, table.height), markers, renderer.px_per_mm
        )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    video = out / "video.mp4"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter.fourcc(*"mp4v"), fps, (width, height))
    if not writer.isOpened():
        raise RuntimeError(f"cannot write {video}")
    frames = 0
    timeline: list[dict[str, Any]] = []
    try:
        for k, film in enumerate(films):
            for kf in film.keyframes:
                scene = renderer.render(kf.placements, kf.arms, rng, jpeg=False, static=kf.static)
                n = max(1, int(round(kf.hold * fps)))
                timeline.append(_timeline_entry(frames, n, kf, scene, k if numbered else None))
                for _ in range(n):
                    writer.write(scene.image)
                frames += n
    finally:
        writer.release()
    tl = out / "timeline.json"
    tl.write_text(json.dumps({"fps": fps, "frames": frames, "design": design, "keyframes": timeline}))
    fs = load_faces(design)
    tj = out / "table.json"
    geometry = table_geometry(renderer, CARD_H_MM * fs.size[0] / fs.size[1])
    if markers is not None:
        corners = marker_corners_mm(table.width, table.height, markers)
        geometry = geometry.model_copy(
            update={
                "markers": {
                    str(i): [(float(x), float(y)) for x, y in geometry.table_to_pixel(c)]
                    for i, c in corners.items()
                }
            }
        )
    geometry.save(tj)
    return video, frames, tl, tj


def match_logs(
    rules: str, seed: int, deals: int, *, inject_revoke: bool = False, inject_failed_throw: bool = False
) -> list[dict[str, Any]]:
    """``deals`` simulated deals of one match: the first at the seed's level, trump and dealer, each
    later one dealt by the seat the outcome names, at that side's level, with a trump drawn from
    the seed (a suit, or no trump one time in nine).

    >>> logs = match_logs("national-2deck", 3, 2)
    >>> from engine.score import score_log
    >>> nxt = score_log({k: v for k, v in logs[0].items() if k not in ("hands", "injected")})["outcome"]
    >>> logs[1]["dealer"] == nxt["next_dealer"]
    True
    """
    import random

    from engine.match import MatchState
    from engine.score import score_log
    from engine.seats import parse_seat
    from engine.sim import simulate_deal

    rng = random.Random(seed)
    logs: list[dict[str, Any]] = []
    match: MatchState | None = None
    for k in range(deals):
        kw: dict[str, Any] = {}
        if match is not None:
            assert match.dealer is not None
            side = parse_seat(match.dealer).side
            kw = {
                "dealer": parse_seat(match.dealer),
                "level": match.level_of(side),
                "trump": rng.choice(["S", "H", "D", "C"] * 2 + ["NT"]),
            }
        log = simulate_deal(
            rules,
            seed if k == 0 else seed * 1000 + k,
            inject_revoke=inject_revoke,
            inject_failed_throw=inject_failed_throw,
            **kw,
        )
        plain = {key: v for key, v in log.items() if key not in ("hands", "injected")}
        if match is None:
            side = parse_seat(log["dealer"]).side
            match = MatchState.new(rules, {side: log["level"]}, log["dealer"])
        match = match.after_deal(plain, score_log(plain))
        logs.append(log)
    return logs


def declaration(log: dict[str, Any], rng: np.random.Generator) -> tuple[str, list[str]] | None:
    """Who shows which cards to declare the deal's trump: one or two level cards of the trump suit
    from a hand that holds them (a pair of jokers for no trump); None when no hand can (the trump
    then comes from the bottom, which the film does not show)."""
    level, trump = log["level"], log["trump"]
    hands = log.get("hands", {})
    wanted = [["BJ", "BJ"], ["SJ", "SJ"]] if trump == "NT" else [[level + trump] * 2, [level + trump]]
    order = [str(s) for s in rng.permutation(list(SEATS))]
    for cards in wanted:
        for seat in order:
            held = list(hands.get(seat, []))
            if all(held.count(c) >= cards.count(c) for c in set(cards)):
                if len(cards) == 2 and trump != "NT" and rng.random() < 0.5:
                    return seat, cards[:1]
                return seat, cards
    return None


def _timeline_entry(first: int, n: int, kf: Keyframe, scene: Any, deal: int | None = None) -> dict[str, Any]:
    """What frames ``first`` … ``first + n - 1`` show: the event (with its deal's index in a match
    film) and every card with its label."""
    return {
        "frame": first,
        "frames": n,
        "event": kf.event if deal is None else {**kf.event, "deal": deal},
        "arms": len(kf.arms),
        "cards": [
            {
                "card": c.card,
                "face_up": c.face_up,
                "role": c.role,
                "seat": c.seat,
                "visible": c.visible,
                "corners_visible": [ix.visible for ix in c.corners],
                "quad": [[round(x, 1), round(y, 1)] for x, y in c.quad],
            }
            for c in scene.cards
        ],
    }
