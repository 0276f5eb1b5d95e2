"""Fixtures for the scoreboard tests: an app on SQLite (a temp file) or on the PostgreSQL server that
``scripts/postgres`` starts (``TRACTORCAM_TEST_POSTGRES_URL``; required when ``CI=true``)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from scoreboard.app import create_app
from scoreboard.models import Base
from scoreboard.settings import Settings
from tests.conftest import need

ADMIN = "admin-secret-for-tests"
ADMIN_HEADERS = {"Authorization": f"Bearer {ADMIN}"}


def postgres_url() -> str:
    url = os.environ.get("TRACTORCAM_TEST_POSTGRES_URL")
    need(bool(url), "PostgreSQL (TRACTORCAM_TEST_POSTGRES_URL, set when scripts/test starts a server)")
    assert url is not None
    return url


_PG_READY: set[str] = set()


def reset_postgres(url: str) -> None:
    """An empty, migrated database: the schema is rebuilt once per session, then emptied per test."""
    from scoreboard.db import make_engine, migrate

    engine = create_engine(url)
    with engine.begin() as conn:
        if url in _PG_READY:
            names = ", ".join(Base.metadata.tables)
            conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
        else:
            conn.execute(text("DROP SCHEMA public CASCADE"))
            conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    if url not in _PG_READY:
        migrated = make_engine(url)
        migrate(migrated)
        migrated.dispose()
        _PG_READY.add(url)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated empty SQLite database, copied for each test (migrating each time is slower)."""
    from scoreboard.db import make_engine, migrate

    path = tmp_path_factory.mktemp("template") / "scoreboard.db"
    engine = make_engine(f"sqlite:///{path}")
    migrate(engine)
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()
    return path


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path, sqlite_template: Path) -> str:
    if request.param == "sqlite":
        shutil.copy(sqlite_template, tmp_path / "scoreboard.db")
        return f"sqlite:///{tmp_path / 'scoreboard.db'}"
    url = postgres_url()
    reset_postgres(url)
    return url


@pytest.fixture
def sqlite_url(tmp_path: Path, sqlite_template: Path) -> str:
    shutil.copy(sqlite_template, tmp_path / "scoreboard.db")
    return f"sqlite:///{tmp_path / 'scoreboard.db'}"


@pytest.fixture
def client(db_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(db_url=db_url, admin_token=ADMIN))) as c:
        yield c


class Table:
    def __init__(
        self, client: TestClient, name: str, rules: str | None = None, plays: str | None = None
    ) -> None:
        body: dict[str, Any] = {"name": name}
        if plays is not None:
            body["plays"] = plays
        if rules is not None:
            body["rules"] = rules
        r = client.post("/api/tables", json=body, headers=ADMIN_HEADERS)
        assert r.status_code == 201, r.text
        self.client = client
        self.id: str = r.json()["id"]
        self.token: str = r.json()["token"]

    def headers(self, key: str | None = None) -> dict[str, str]:
        h = {"Authorization": f"Bearer {self.token}"}
        if key is not None:
            h["Idempotency-Key"] = key
        return h

    def post_deal(self, log: Any, key: str) -> Any:
        return self.client.post(f"/api/tables/{self.id}/deals", json=log, headers=self.headers(key))

    def post_board(self, log: Any, key: str) -> Any:
        return self.client.post(f"/api/tables/{self.id}/boards", json=log, headers=self.headers(key))

    def post_event(self, event: Any, key: str) -> Any:
        return self.client.post(f"/api/tables/{self.id}/events", json=event, headers=self.headers(key))

    def state(self) -> dict[str, Any]:
        r = self.client.get(f"/api/tables/{self.id}")
        assert r.status_code == 200, r.text
        return r.json()  # type: ignore[no-any-return]


@pytest.fixture
def make_table(client: TestClient) -> Any:
    counter = iter(range(1, 10_000))

    def make(rules: str | None = None) -> Table:
        return Table(client, f"T{next(counter)}", rules)

    return make


def referee_headers(client: TestClient, username: str = "ref", role: str = "referee") -> dict[str, str]:
    r = client.post(
        "/api/users",
        json={"username": username, "password": "correct horse", "role": role},
        headers=ADMIN_HEADERS,
    )
    assert r.status_code == 201, r.text
    r = client.post("/api/login", json={"username": username, "password": "correct horse"})
    assert r.status_code == 200, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


def row_counts(client: TestClient) -> dict[str, int]:
    """How many rows each table of the schema holds (to show that a refused request stored nothing)."""
    engine = client.app.state.board.db.engine  # type: ignore[attr-defined]
    with engine.connect() as conn:
        return {
            name: int(conn.execute(text(f"SELECT count(*) FROM {name}")).scalar() or 0)
            for name in Base.metadata.tables
        }


class LiveServer:
    """The app under uvicorn in a background thread, on a free loopback port."""

    def __init__(self, db_url: str) -> None:
        import socket
        import threading

        import uvicorn

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.app = create_app(Settings(db_url=db_url, admin_token=ADMIN))
        config = uvicorn.Config(
            self.app, host="127.0.0.1", port=self.port, log_level="warning", timeout_graceful_shutdown=1
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        import time

        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture
def live_server(db_url: str) -> Iterator[LiveServer]:
    with LiveServer(db_url) as server:
        yield server
