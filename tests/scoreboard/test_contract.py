"""The scoreboard serves the edge–scoreboard contract (``contract/``) the table service posts to:
its paths, its idempotency header and its bodies, in the API's schema."""

from __future__ import annotations

from contract.deals import DealLogIn
from contract.events import AlertIn, DealStart, Health, Play, TrickResult
from contract.paths import DEALS_PATH, EVENTS_PATH, IDEMPOTENCY_KEY, TABLE_PATH
from scoreboard.app import create_app
from scoreboard.settings import Settings
from tests.scoreboard.conftest import ADMIN


def test_the_api_serves_the_contract(sqlite_url: str) -> None:
    schema = create_app(Settings(db_url=sqlite_url, admin_token=ADMIN)).openapi()
    paths = schema["paths"]
    assert "get" in paths[TABLE_PATH]
    for path in (EVENTS_PATH, DEALS_PATH):
        post = paths[path]["post"]
        assert IDEMPOTENCY_KEY in {p["name"] for p in post.get("parameters", []) if p["in"] == "header"}
    bodies = schema["components"]["schemas"]
    for model in (DealLogIn, DealStart, Play, TrickResult, AlertIn, Health):
        assert model.__name__ in bodies
    events = paths[EVENTS_PATH]["post"]["requestBody"]["content"]["application/json"]["schema"]
    named = {ref["$ref"].rsplit("/", 1)[-1] for ref in events.get("oneOf", [])}
    assert named == {"DealStart", "Play", "TrickResult", "AlertIn", "Health"}
