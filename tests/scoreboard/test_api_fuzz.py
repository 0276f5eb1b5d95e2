"""Issue 38's bar: no input makes a server error. Schemathesis generates requests for every operation
of the API from its own OpenAPI schema, valid ones and deliberately invalid ones (wrong types,
missing fields, out-of-range numbers, odd strings), sent as nobody, the admin, a table and a
referee, against real ids half the time so they reach the database. Not one may answer 5xx, on
SQLite and on PostgreSQL. Each database takes at least ``MIN_REQUESTS`` requests."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from bridge.sim import simulate_board
from gomoku.sim import simulate_game
from tests.scoreboard.conftest import ADMIN_HEADERS, Table, referee_headers
from tests.scoreboard.deals import DEALER_SWEEP, DEFENDERS_WIN

MIN_REQUESTS = 2000
EXAMPLES = 60  # per operation and generation mode; fewer come for operations with small inputs


@pytest.mark.slow
def test_no_generated_request_makes_a_server_error(client, make_table):
    t = make_table()
    assert t.post_deal(DEALER_SWEEP, "seed").status_code == 201  # a deal, a revoke alert
    refused = t.post_deal(dict(DEFENDERS_WIN, tricks=[]), "refused").json()["alert"]
    ref = referee_headers(client)
    event = {
        "format": "swiss",
        "scoring": "zhku",
        "seed": 1,
        "entries": [{"id": "A", "name": "红队"}, {"id": "B", "name": "蓝队"}],
        "rounds": [{"round": 1, "matches": [{"table": 1, "home": "A", "away": "B"}]}],
    }
    r = client.post("/api/tourneys", json={"event": event, "tables": [t.id]}, headers=ADMIN_HEADERS)
    assert r.status_code == 201, r.text  # round 1 in play at the table: its games and results are real
    # a bridge table in a bridge event's first round, with a board posted (a revoke alerted)
    b = Table(client, "Bridge", plays="bridge")
    others = [Table(client, f"Bridge {i}", plays="bridge") for i in (2, 3)]
    r = client.post(
        "/api/bridge/events",
        json={"name": "Pairs", "kind": "pairs", "tables": [b.id] + [o.id for o in others]},
        headers=ADMIN_HEADERS,
    )
    assert r.status_code == 201, r.text
    bridge_id = r.json()["id"]
    assert (
        client.post(f"/api/bridge/events/{bridge_id}/rounds", json={"round": 1}, headers=ref).status_code
        == 200
    )
    assert b.post_board({**simulate_board(2, inject_revoke=True), "board": 1}, "board").status_code == 201
    g = Table(client, "Gomoku", plays="gomoku")
    assert (
        client.post(
            f"/api/tables/{g.id}/gomoku", json=simulate_game(5), headers=g.headers("game")
        ).status_code
        == 201
    )
    real = {
        "bridge_id": bridge_id,
        "board": 1,
        "table_id": t.id,
        "seq": 1,
        "alert_id": refused,
        "image_id": 1,
        "event_id": r.json()["id"],
        "number": 1,
        "table": 1,
        "entry": "A",
    }
    callers = [{}, ADMIN_HEADERS, t.headers(), ref, b.headers(), g.headers()]
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", client.app)
    sent: Counter[str] = Counter()
    errors: list[str] = []

    def run(op: Any, mode: GenerationMode) -> None:
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(
            case=op.as_strategy(generation_mode=mode),
            who=st.sampled_from(range(len(callers))),
            use_real=st.booleans(),
        )
        def check(case: Any, who: int, use_real: bool) -> None:
            if use_real and case.path_parameters:
                case.path_parameters = {k: real.get(k, v) for k, v in case.path_parameters.items()}
            if op.path == "/api/stream":
                case.query = {**(case.query or {}), "timeout": "0"}  # a stream would never end
            headers = {**(case.headers or {}), **callers[who]}
            response = case.call(headers=headers)
            sent[f"{op.method.upper()} {op.path}"] += 1
            if response.status_code >= 500:
                errors.append(
                    f"{case.method} {case.formatted_path} {response.status_code}: {response.text[:200]}"
                )

        try:
            check()
        except Unsatisfiable:
            assert mode is GenerationMode.NEGATIVE, op.path  # nothing invalid to send (no inputs)

    for result in schema.get_all_operations():
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            run(result.ok(), mode)
    total = sum(sent.values())
    print(f"{total} generated requests over {len(sent)} operations")
    assert errors == [], f"{len(errors)} server errors of {total} requests, e.g. {errors[:3]}"
    assert total >= MIN_REQUESTS, sent
    assert len(sent) >= 45  # every operation was exercised


@pytest.fixture(autouse=True)
def _quiet_throttle(client):
    """Thousands of generated logins from one address would only test the throttle's waiting."""
    client.app.state.throttle.free = 10**9
