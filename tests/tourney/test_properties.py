"""Property tests (hypothesis) over whole simulated events: up to 64 entries, 6 rounds, 2–8 units.

* Swiss: never a rematch, never two entries of one unit, never a second bye, while a pairing
  without it exists. Up to 10 entries, brute force over every pairing gives the fewest breaks
  there are, which the pairing must meet, and the lowest-placed entry that can take the bye at
  that cost. Above 10, any break is checked by a maximum matching of the rule-keeping pairs: when
  the pairing relaxes a rule, that matching must fall short of pairing everyone.
* ``relaxed`` lists exactly the breaks the pairing makes.
* Standings: a total order, consistent with each tie-break of the scoring, with points and
  opponents' points as recomputed here from the results.
* Round robin: everyone in a group meets everyone else once, at most one bye each. Knockout: each
  round halves the field until one is left.
"""

from __future__ import annotations

import random
from functools import cache
from typing import Any

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tourney.event import parse_event
from tourney.pairing import PairingError, pair_next
from tourney.standings import standings

LEVELS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
POINTS = {"zhku": (2, 1, 0), "national": (2, 1, 0), "challenge": (3, 1, 0)}
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def fields(draw: Any, low: int, high: int) -> dict[str, Any]:
    """An empty event: entries with units (skewed at times), a scoring, team or pair entries."""
    n = draw(st.integers(low, high))
    units = draw(st.integers(2, 8))
    assignment = draw(st.lists(st.integers(0, units - 1), min_size=n, max_size=n))
    team = draw(st.booleans()) and n <= 24
    entries = []
    for k, u in enumerate(assignment):
        entry: dict[str, Any] = {"id": f"E{k:02d}", "unit": f"U{u}"}
        if team:
            entry["pairs"] = [f"E{k:02d}a", f"E{k:02d}b"]
        entries.append(entry)
    return {
        "format": "swiss",
        "scoring": draw(st.sampled_from(sorted(POINTS))),
        "seed": draw(st.integers(0, 2**31)),
        "entries": entries,
        "rounds": [],
    }


def results(data: dict[str, Any], out: dict[str, Any], rng: random.Random) -> None:
    """Play the paired round with random results (some draws, forfeits, violations)."""
    boards = len(data["entries"][0].get("pairs", ())) or 1
    items = []
    for m in out["matches"]:
        if "table" in m:
            board = []
            for _ in range(boards):
                roll = rng.random()
                if roll < 0.05:
                    board.append({"forfeit": rng.choice(["home", "away"])})
                    continue
                level = rng.choice(LEVELS)
                r: dict[str, Any] = {
                    "home_level": level,
                    "away_level": level if roll < 0.25 else rng.choice(LEVELS),
                }
                if roll > 0.9:
                    r["violations"] = {"home": rng.randrange(3), "away": rng.randrange(3)}
                board.append(r)
            m = dict(m, result=board[0] if boards == 1 else board)
        items.append(m)
    data["rounds"].append({"round": out["round"], "matches": items})


def breaks_of(data: dict[str, Any], a: str, b: str | None) -> list[str]:
    """The rules pairing ``a`` with ``b`` (``None``: the bye) breaks, from the file alone."""
    rounds = data["rounds"]
    if b is None:
        return ["second_bye"] if any(m.get("bye") == a for r in rounds for m in r["matches"]) else []
    units = {e["id"]: e["unit"] for e in data["entries"]}
    met = any({m.get("home"), m.get("away")} == {a, b} for r in rounds for m in r["matches"])
    return ["rematch"] * met + ["same_unit"] * (units[a] == units[b])


def brute_force(data: dict[str, Any], ids: list[str]) -> tuple[int, set[str]]:
    """The fewest breaks of any pairing of ``ids`` (with a bye when odd), and who can have the bye
    at that cost."""
    nodes = [*ids, *([None] if len(ids) % 2 else [])]
    cost = {
        (i, j): len(breaks_of(data, nodes[i], nodes[j]) if nodes[i] is not None else [])
        for i in range(len(nodes))
        for j in range(i + 1, len(nodes))
    }

    @cache
    def best(mask: int) -> int:
        if not mask:
            return 0
        i = (mask & -mask).bit_length() - 1
        rest = mask & ~(1 << i)
        return min(cost[i, j] + best(rest & ~(1 << j)) for j in range(i + 1, len(nodes)) if rest >> j & 1)

    full = (1 << len(nodes)) - 1
    fewest = best(full)
    if len(ids) % 2 == 0:
        return fewest, set()
    dummy = len(nodes) - 1
    can = {
        nodes[i]
        for i in range(dummy)
        if cost[i, dummy] + best(full & ~(1 << i) & ~(1 << dummy)) == fewest  # type: ignore[misc]
    }
    return fewest, can  # type: ignore[return-value]


def valid_pairing_exists(data: dict[str, Any], ids: list[str]) -> bool:
    """Whether the rule-keeping pairs (and byes) hold a perfect matching."""
    graph = nx.Graph()
    nodes = [*ids, *(["<bye>"] if len(ids) % 2 else [])]
    graph.add_nodes_from(nodes)
    for x, a in enumerate(nodes):
        for b in nodes[x + 1 :]:
            first, second = (b, None) if a == "<bye>" else (a, None if b == "<bye>" else b)
            if not breaks_of(data, first, second):
                graph.add_edge(a, b)
    return 2 * len(nx.max_weight_matching(graph, maxcardinality=True, weight=None)) == len(nodes)


def check_pairing(data: dict[str, Any], out: dict[str, Any]) -> None:
    ids = [e["id"] for e in data["entries"]]
    matches = [(m["home"], m["away"]) for m in out["matches"] if "table" in m]
    bye = [m["bye"] for m in out["matches"] if "bye" in m]
    seen = [e for p in matches for e in p] + bye
    assert sorted(seen) == sorted(ids), "every entry exactly once"
    assert len(bye) == len(ids) % 2
    assert [m["table"] for m in out["matches"] if "table" in m] == list(range(1, len(matches) + 1))
    made = sorted(
        [(rule, frozenset(p)) for p in matches for rule in breaks_of(data, *p)]
        + [(rule, frozenset(bye)) for rule in breaks_of(data, bye[0], None)]
        if bye
        else [(rule, frozenset(p)) for p in matches for rule in breaks_of(data, *p)],
        key=repr,
    )
    listed = sorted(((r["rule"], frozenset(r["entries"])) for r in out["relaxed"]), key=repr)
    assert listed == made, "relaxed lists exactly the breaks made"
    if len(ids) <= 10:
        fewest, can_bye = brute_force(data, ids)
        assert len(made) == fewest, f"{len(made)} breaks where {fewest} would do"
        if bye and data["rounds"]:
            place = {r["id"]: k for k, r in enumerate(standings(parse_event(data)).to_json()["standings"])}
            assert bye[0] == max(can_bye, key=lambda e: place[e]), "the lowest-placed possible bye"
    elif made:
        assert not valid_pairing_exists(data, ids), "a rule was relaxed though a valid pairing exists"


def check_standings(data: dict[str, Any]) -> None:
    out = standings(parse_event(data)).to_json()
    rows = out["standings"]
    scoring = data["scoring"]
    win, draw, loss = POINTS[scoring]
    points = {e["id"]: 0 for e in data["entries"]}
    opponents: dict[str, list[str]] = {e["id"]: [] for e in data["entries"]}
    for rnd in data["rounds"]:
        for m in rnd["matches"]:
            if "bye" in m:
                points[m["bye"]] += win * (len(data["entries"][0].get("pairs", ())) or 1)
                continue
            opponents[m["home"]].append(m["away"])
            opponents[m["away"]].append(m["home"])
            for r in m["result"] if isinstance(m["result"], list) else [m["result"]]:
                if "forfeit" in r:
                    points[m["away"] if r["forfeit"] == "home" else m["home"]] += win
                    continue
                h, a = LEVELS.index(r["home_level"]), LEVELS.index(r["away_level"])
                points[m["home"]] += win if h > a else draw if h == a else loss
                points[m["away"]] += win if a > h else draw if h == a else loss
    assert {r["id"]: r["points"] for r in rows} == points
    for r in rows:
        assert r["opponents_points"] == sum(points[o] for o in opponents[r["id"]])
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    keys = [k for k in out["order"]]
    assert keys[0] == "points" and keys[-1] == "lot"
    signed = [[(r[k] if k in ("violations", "lot") else -r[k]) for k in keys] for r in rows]
    assert all(a < b for a, b in zip(signed, signed[1:], strict=False)), "a strict order by each tie-break"
    assert sorted(r["lot"] for r in rows) == list(range(1, len(rows) + 1))


def run_swiss(data: dict[str, Any], rounds: int, rng_seed: int) -> None:
    rng = random.Random(rng_seed)
    for _ in range(rounds):
        out = pair_next(parse_event(data)).to_json()
        check_pairing(data, out)
        results(data, out, rng)
        check_standings(data)


@settings(max_examples=150, **SETTINGS)
@given(fields(2, 10), st.integers(1, 6), st.integers(0, 2**16))
def test_small_swiss_events_break_no_rule_that_brute_force_keeps(
    data: dict[str, Any], rounds: int, rng: int
) -> None:
    run_swiss(data, rounds, rng)


@pytest.mark.slow
@settings(max_examples=60, **SETTINGS)
@given(fields(11, 64), st.integers(1, 6), st.integers(0, 2**16))
def test_large_swiss_events_relax_only_when_no_valid_pairing_exists(
    data: dict[str, Any], rounds: int, rng: int
) -> None:
    run_swiss(data, rounds, rng)


@settings(max_examples=25, **SETTINGS)
@given(
    st.lists(st.integers(2, 7), min_size=1, max_size=4),
    st.integers(0, 2**16),
    st.sampled_from(sorted(POINTS)),
)
def test_round_robin_meets_everyone_once(sizes: list[int], seed: int, scoring: str) -> None:
    entries = [{"id": f"G{g}-{k}", "group": f"G{g}"} for g, size in enumerate(sizes) for k in range(size)]
    data = {"format": "round-robin", "scoring": scoring, "seed": seed, "entries": entries, "rounds": []}
    rng = random.Random(seed)
    while True:
        try:
            out = pair_next(parse_event(data)).to_json()
        except PairingError:
            break
        assert out["relaxed"] == []
        results(data, out, rng)
    met: dict[frozenset[str], int] = {}
    byes: dict[str, int] = {}
    for rnd in data["rounds"]:
        for m in rnd["matches"]:
            if "bye" in m:
                byes[m["bye"]] = byes.get(m["bye"], 0) + 1
            else:
                assert m["home"].split("-")[0] == m["away"].split("-")[0], "within a group"
                key = frozenset((m["home"], m["away"]))
                met[key] = met.get(key, 0) + 1
    expected = {
        frozenset((a["id"], b["id"]))
        for a in entries
        for b in entries
        if a["group"] == b["group"] and a["id"] < b["id"]
    }
    assert set(met) == expected and set(met.values()) == {1} if expected else True
    assert all(n == 1 for n in byes.values())
    assert len(data["rounds"]) == max(s - 1 if s % 2 == 0 else s for s in sizes)
    check_standings_grouped(data)


def check_standings_grouped(data: dict[str, Any]) -> None:
    rows = standings(parse_event(data)).to_json()["standings"]
    assert sorted(r["id"] for r in rows) == sorted(e["id"] for e in data["entries"])
    by_group: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_group.setdefault(r["group"], []).append(r)
    order = standings(parse_event(data)).to_json()["order"]
    for group in by_group.values():
        assert [r["rank"] for r in group] == list(range(1, len(group) + 1))
        signed = [[(r[k] if k in ("violations", "lot") else -r[k]) for k in order] for r in group]
        assert all(a < b for a, b in zip(signed, signed[1:], strict=False))


@settings(max_examples=25, **SETTINGS)
@given(st.integers(2, 40), st.integers(0, 2**16), st.booleans())
def test_knockout_halves_the_field_to_one(n: int, seed: int, rated: bool) -> None:
    entries = [{"id": f"K{k:02d}", "rating": (n - k if rated else 0)} for k in range(n)]
    data = {"format": "knockout", "scoring": "zhku", "seed": seed, "entries": entries, "rounds": []}
    rng = random.Random(seed)
    alive = n
    while True:
        try:
            out = pair_next(parse_event(data)).to_json()
        except PairingError as exc:
            assert "complete" in str(exc)
            break
        in_round = [e for m in out["matches"] for e in ([m["bye"]] if "bye" in m else [m["home"], m["away"]])]
        assert len(in_round) == len(set(in_round)) == alive
        items = []
        for m in out["matches"]:
            if "table" in m:
                h, a = rng.choice(LEVELS), rng.choice(LEVELS)
                result = {"home_level": h, "away_level": a}
                if h == a:
                    result["winner"] = rng.choice(["home", "away"])
                m = dict(m, result=result)
            items.append(m)
        data["rounds"].append({"round": out["round"], "matches": items})
        alive = len(items)  # one goes through from each match and each bye
    assert alive == 1
    rows = standings(parse_event(data)).to_json()["standings"]
    rounds_needed = (n - 1).bit_length()
    assert rows[0]["knockout_rounds_won"] == rounds_needed and len(data["rounds"]) == rounds_needed
    progress = [r["knockout_rounds_won"] for r in rows]
    assert progress == sorted(progress, reverse=True)
