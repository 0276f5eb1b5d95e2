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


def test_downgrade_and_upgrade_again(db_url):
    from alembic import command
    from alembic.config import Config

    from scoreboard.db import MIGRATIONS

    engine = make_engine(db_url)
    migrate(engine)
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.downgrade(cfg, "0001")
    with engine.connect() as conn:
        assert "fold" not in {c["name"] for c in inspect(conn).get_columns("deals")}
    migrate(engine)
    with engine.connect() as conn:
        assert "fold" in {c["name"] for c in inspect(conn).get_columns("deals")}
    engine.dispose()


def test_deals_from_before_the_fold_column_still_fold(client, make_table):
    """Deals stored by revision 0001 have no fold inputs; the next fold reads their versions."""
    from sqlalchemy import text

    from tests.scoreboard.deals import DEFENDERS_WIN, dealt_by

    t = make_table()
    assert t.post_deal(DEFENDERS_WIN, "a").status_code == 201  # EW 2 -> 3, E deals
    with client.app.state.board.db.engine.begin() as conn:
        conn.execute(text("UPDATE deals SET fold = NULL"))
    assert t.post_deal(dealt_by(DEFENDERS_WIN, "E", "3"), "b").status_code == 201  # NS 2 -> 3, N deals
    state = t.state()
    assert (state["levels"], state["dealer"]) == ({"NS": "3", "EW": "3"}, "N")
