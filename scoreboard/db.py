"""Database engine, sessions, the SQLite write lock and migrations (Alembic, inside this package)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def normalise_url(url: str) -> str:
    """Use psycopg 3 for plain ``postgresql://`` URLs (psycopg2 is not a dependency)."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def make_engine(url: str) -> Engine:
    url = normalise_url(url)
    kwargs: dict[str, Any] = {}
    if url.startswith("sqlite"):
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
    else:
        kwargs.update(pool_size=10, max_overflow=20, pool_recycle=1800)
    engine = create_engine(url, **kwargs)
    if engine.dialect.name == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            if engine.url.database not in (None, "", ":memory:"):
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

    return engine


def migrate(engine: Engine, revision: str = "head", *, down: bool = False) -> None:
    """Bring the schema to ``revision`` (the newest by default; idempotent), or back down to it.

    On SQLite a migration that changes a table's columns rebuilds the table (Alembic's batch mode:
    copy, drop, rename). With foreign keys enforced, dropping the old table would delete the rows
    of every table that refers to it ``ON DELETE CASCADE`` (a table's deals, a deal's versions), so
    enforcement is off while migrating and the foreign keys are checked once it is done."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.connect() as conn:
        sqlite = engine.dialect.name == "sqlite"
        if sqlite:  # outside a transaction: SQLite ignores this pragma inside one
            conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
            conn.commit()
        try:
            with conn.begin():
                cfg.attributes["connection"] = conn
                (command.downgrade if down else command.upgrade)(cfg, revision)
                if sqlite:
                    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise RuntimeError(
                            f"the migration left rows whose foreign keys point nowhere: {broken[:5]}"
                        )
        finally:
            if sqlite:
                conn.rollback()
                conn.exec_driver_sql("PRAGMA foreign_keys=ON")
                conn.commit()


class Database:
    """Session factory plus the write discipline of the dialect.

    SQLite allows one writer at a time: writes take a process-wide lock instead of spinning on
    ``database is locked``. PostgreSQL writers serialise only the moment they append to the event
    feed (an advisory transaction lock), so feed ids become visible in increasing order and a
    cursor never skips an event that commits late.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.sessions = sessionmaker(engine, expire_on_commit=False)
        self.is_sqlite = engine.dialect.name == "sqlite"
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def write(self) -> Iterator[Session]:
        lock = self._lock if self.is_sqlite else contextlib.nullcontext()
        with lock, self.sessions() as session, session.begin():
            yield session

    @contextlib.contextmanager
    def read(self) -> Iterator[Session]:
        with self.sessions() as session:
            yield session

    def lock_feed(self, session: Session) -> None:
        """Called right before appending events in a write transaction."""
        if not self.is_sqlite:
            session.execute(text("SELECT pg_advisory_xact_lock(4242001)"))

    def lock_table_row(self, session: Session, table_id: str) -> None:
        if not self.is_sqlite:
            session.execute(text("SELECT id FROM tables WHERE id = :id FOR UPDATE"), {"id": table_id})
