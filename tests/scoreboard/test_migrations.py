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
    engine = make_engine(db_url)
    migrate(engine)
    migrate(engine, "0001", down=True)
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


def test_tables_from_before_games_keep_their_start_teams_and_deals(db_url):
    """Revision 0005 gives each table game 1, holding the start, team names and state the table row
    held, and makes every deal that game's; on SQLite the tables it rebuilds lose no rows that refer
    to them (a deal's versions). Going back puts the start and names on the table again."""
    import json

    from sqlalchemy import text

    engine = make_engine(db_url)
    migrate(engine)
    migrate(engine, "0004", down=True)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO tables (id, name, token_hash, rules, state, deal_count, live, health, start, teams,"
                " created_at) VALUES ('t1', 'T1', 'x', 'national-2deck', :state, 1, '{}', '{}', :start, :teams,"
                " CURRENT_TIMESTAMP)"
            ),
            {
                "state": '{"levels": {"NS": "5", "EW": "3"}, "dealer": "N", "winner": null}',
                "start": '{"levels": {"NS": "4", "EW": "3"}, "dealer": "S"}',
                "teams": '{"NS": "红队", "EW": "蓝队"}',
            },
        )
        conn.execute(
            text(
                "INSERT INTO deals (id, table_id, seq, idempotency_key, current_version, state_after, created_at)"
                " VALUES (7, 't1', 1, 'k', 1, '{}', CURRENT_TIMESTAMP)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO deal_versions (deal_id, version, log, result, author, reason, created_at)"
                " VALUES (7, 1, '{}', '{}', 'table T1', '', CURRENT_TIMESTAMP)"
            )
        )
    migrate(engine)
    with engine.connect() as conn:
        game = conn.execute(
            text("SELECT id, number, status, start, teams, state, deals FROM table_games")
        ).one()
        table = conn.execute(text("SELECT game_id FROM tables WHERE id = 't1'")).one()
        deal = conn.execute(text("SELECT game_id, status FROM deals")).one()
        versions = conn.execute(text("SELECT count(*) FROM deal_versions")).scalar_one()
    as_json = [x if isinstance(x, dict) else json.loads(x) for x in (game.start, game.teams, game.state)]
    assert (game.number, game.status, game.deals) == (1, "open", 1)
    assert as_json == [
        {"levels": {"NS": "4", "EW": "3"}, "dealer": "S"},
        {"NS": "红队", "EW": "蓝队"},
        {"levels": {"NS": "5", "EW": "3"}, "dealer": "N", "winner": None},
    ]
    assert table.game_id == game.id and (deal.game_id, deal.status) == (game.id, "counted")
    assert versions == 1
    migrate(engine, "0004", down=True)
    with engine.connect() as conn:
        teams = conn.execute(text("SELECT teams FROM tables WHERE id = 't1'")).scalar_one()
        versions = conn.execute(text("SELECT count(*) FROM deal_versions")).scalar_one()
    assert (teams if isinstance(teams, dict) else json.loads(teams)) == {"NS": "红队", "EW": "蓝队"}
    assert versions == 1
    migrate(engine)  # the next test finds the newest schema
    engine.dispose()
