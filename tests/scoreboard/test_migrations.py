"""The Alembic migrations build exactly the schema of the models, and re-running them is a no-op."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from scoreboard.db import make_engine, migrate
from scoreboard.models import Base


def test_migrations_match_models(db_url):
    engine = make_engine(db_url)
    migrate(engine)
    migrate(engine)  # idempotent
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        assert diff == []
        tables = set(inspect(conn).get_table_names())
    assert set(Base.metadata.tables) <= tables
    assert "alembic_version" in tables
    engine.dispose()
