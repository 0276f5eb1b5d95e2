"""The scoreboard serves the edge–scoreboard contract (``contract/``) the table service posts to:
its paths, its idempotency header and its bodies, in the API's schema."""

from __future__ import annotations

from contract.boards import BoardLogIn, GomokuLogIn
from contract.deals import DealLogIn
from contract.events import (
    AlertIn,
    BoardStart,
    DealStart,
    GameStart,
    Health,
    LongThink,
    Play,
    Stone,
    TrickResult,
)
from contract.paths import BOARDS_PATH, DEALS_PATH, EVENTS_PATH, GOMOKU_PATH, IDEMPOTENCY_KEY, TABLE_PATH
from scoreboard.app import create_app
from scoreboard.settings import Settings
from tests.scoreboard.conftest import ADMIN


def test_the_api_serves_the_contract(sqlite_url: str) -> None:
    schema = create_app(Settings(db_url=sqlite_url, admin_token=ADMIN)).openapi()
    paths = schema["paths"]
    assert "get" in paths[TABLE_PATH]
    for path in (EVENTS_PATH, DEALS_PATH, BOARDS_PATH, GOMOKU_PATH):
        post = paths[path]["post"]
        assert IDEMPOTENCY_KEY in {p["name"] for p in post.get("parameters", []) if p["in"] == "header"}
    bodies = schema["components"]["schemas"]
    for model in (
        DealLogIn, BoardLogIn, GomokuLogIn, DealStart, BoardStart, GameStart, Stone, LongThink, Play, TrickResult,
        AlertIn, Health,
    ):  # fmt: skip
        assert model.__name__ in bodies
    events = paths[EVENTS_PATH]["post"]["requestBody"]["content"]["application/json"]["schema"]
    named = {ref["$ref"].rsplit("/", 1)[-1] for ref in events.get("oneOf", [])}
    assert named == {
        "DealStart", "BoardStart", "GameStart", "Stone", "LongThink", "Play", "TrickResult", "AlertIn", "Health"
    }  # fmt: skip


def _described(schema: dict[str, object]) -> bool:
    """A schema that names a model (``$ref``), or one of several, or lists its items' model."""
    if "$ref" in schema or "oneOf" in schema or "anyOf" in schema:
        return True
    items = schema.get("items")
    return isinstance(items, dict) and _described(items)


def test_every_body_of_the_api_is_described(sqlite_url: str) -> None:
    """``/docs`` describes every request and answer: a JSON body names its pydantic model (not a
    bare object), and the stream and the pictures say their media types."""
    schema = create_app(Settings(db_url=sqlite_url, admin_token=ADMIN)).openapi()
    vague = []
    for path, operations in schema["paths"].items():
        for method, op in operations.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None and not _described(body["schema"]):
                vague.append(f"{method.upper()} {path} request")
            for status, answer in op["responses"].items():
                if not status.startswith("2") or status == "204":
                    continue
                content = answer.get("content", {})
                if "application/json" in content:
                    if not _described(content["application/json"].get("schema", {})):
                        vague.append(f"{method.upper()} {path} {status}")
                elif not content:
                    vague.append(f"{method.upper()} {path} {status}: no media type")
    assert vague == []
    assert "text/event-stream" in schema["paths"]["/api/stream"]["get"]["responses"]["200"]["content"]
    deal = schema["paths"][DEALS_PATH]["post"]["responses"]
    assert deal["201"]["content"]["application/json"]["schema"]["$ref"].endswith("/DealScore")
    assert deal["422"]["content"]["application/json"]["schema"]["$ref"].endswith("/Refused")
