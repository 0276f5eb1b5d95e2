"""Alembic environment: runs on the connection handed over by ``scoreboard.db.migrate``."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from scoreboard.models import Base

config = context.config
target_metadata = Base.metadata


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is None:  # plain `alembic` invocation with sqlalchemy.url set
        engine = create_engine(config.get_main_option("sqlalchemy.url") or "sqlite:///scoreboard.db")
        with engine.begin() as conn:
            context.configure(connection=conn, target_metadata=target_metadata, render_as_batch=True)
            context.run_migrations()
        return
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run()
