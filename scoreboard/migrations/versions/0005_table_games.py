"""table games (a table plays one game per round), deal status and history, event archive

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04 16:40:00

Each table gets game 1, holding what the table row held (its start, team names and state), and every
deal becomes that game's: the scoreboard behaves as before until an event publishes a round.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "table_games",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("table_id", sa.String(length=32), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("start", sa.JSON(), nullable=True),
        sa.Column("teams", sa.JSON(), nullable=True),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("deals", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=True),
        sa.Column("board", sa.Integer(), nullable=True),
        sa.Column("tournament_id", sa.String(length=32), nullable=True),
        sa.Column("round_no", sa.Integer(), nullable=True),
        sa.Column("table_no", sa.Integer(), nullable=True),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("closed_by", sa.String(length=100), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["table_id"], ["tables.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["match_id"], ["tourney_matches.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("table_id", "number", name="uq_table_games_table_number"),
    )
    op.create_index("ix_table_games_table_id", "table_games", ["table_id"], unique=False)
    op.create_index("ix_table_games_match_id", "table_games", ["match_id"], unique=False)
    with op.batch_alter_table("tables", schema=None) as batch_op:
        batch_op.add_column(sa.Column("game", sa.String(length=20), nullable=False, server_default="shengji"))
        batch_op.add_column(sa.Column("game_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("deals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("game_id", sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column("status", sa.String(length=10), nullable=False, server_default="counted")
        )
        batch_op.add_column(sa.Column("history", sa.JSON(), nullable=True))
        batch_op.create_index("ix_deals_game_id", ["game_id"], unique=False)
        batch_op.create_foreign_key(
            "fk_deals_game_id_table_games", "table_games", ["game_id"], ["id"], ondelete="SET NULL"
        )

    conn = op.get_bind()
    tables = sa.table(
        "tables",
        sa.column("id", sa.String),
        sa.column("start", sa.JSON),
        sa.column("teams", sa.JSON),
        sa.column("state", sa.JSON),
        sa.column("deal_count", sa.Integer),
        sa.column("created_at", sa.DateTime(timezone=True)),
        sa.column("game_id", sa.Integer),
    )
    games = sa.table(
        "table_games",
        sa.column("id", sa.Integer),
        sa.column("table_id", sa.String),
        sa.column("number", sa.Integer),
        sa.column("status", sa.String),
        sa.column("start", sa.JSON),
        sa.column("teams", sa.JSON),
        sa.column("state", sa.JSON),
        sa.column("deals", sa.Integer),
        sa.column("opened_at", sa.DateTime(timezone=True)),
        sa.column("note", sa.Text),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    deals = sa.table(
        "deals",
        sa.column("table_id", sa.String),
        sa.column("game_id", sa.Integer),
        sa.column("history", sa.JSON),
    )
    now = datetime.now(UTC)
    for row in conn.execute(sa.select(tables)).mappings().all():
        game_id = conn.execute(
            sa.insert(games)
            .values(
                table_id=row["id"],
                number=1,
                status="open",
                start=row["start"],
                teams=row["teams"],
                state=row["state"] or {},
                deals=row["deal_count"] or 0,
                opened_at=row["created_at"] or now,
                note="",
                created_at=now,
            )
            .returning(games.c.id)
        ).scalar_one()
        conn.execute(sa.update(tables).where(tables.c.id == row["id"]).values(game_id=game_id))
        conn.execute(sa.update(deals).where(deals.c.table_id == row["id"]).values(game_id=game_id))
    conn.execute(sa.update(deals).values(history=[]))
    with op.batch_alter_table("deals", schema=None) as batch_op:
        batch_op.alter_column("history", existing_type=sa.JSON(), nullable=False)
    with op.batch_alter_table("tables", schema=None) as batch_op:
        batch_op.drop_column("teams")
        batch_op.drop_column("start")

    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("source_hash", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index("ix_tournaments_source_hash", ["source_hash"], unique=False)
    with op.batch_alter_table("tourney_rounds", schema=None) as batch_op:
        batch_op.add_column(sa.Column("clock_paused_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("clock_paused_s", sa.Integer(), nullable=False, server_default="0"))
    with op.batch_alter_table("tourney_matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("result_note", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("tourney_matches", schema=None) as batch_op:
        batch_op.drop_column("result_note")
    with op.batch_alter_table("tourney_rounds", schema=None) as batch_op:
        batch_op.drop_column("clock_paused_s")
        batch_op.drop_column("clock_paused_at")
    with op.batch_alter_table("tournaments", schema=None) as batch_op:
        batch_op.drop_index("ix_tournaments_source_hash")
        batch_op.drop_column("archived_at")
        batch_op.drop_column("source_hash")
    with op.batch_alter_table("tables", schema=None) as batch_op:
        batch_op.add_column(sa.Column("start", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("teams", sa.JSON(), nullable=True))
    conn = op.get_bind()
    # The table keeps its current game's start, team names and state.
    tables = sa.table(
        "tables",
        sa.column("id", sa.String),
        sa.column("game_id", sa.Integer),
        sa.column("start", sa.JSON),
        sa.column("teams", sa.JSON),
    )
    games = sa.table(
        "table_games", sa.column("id", sa.Integer), sa.column("start", sa.JSON), sa.column("teams", sa.JSON)
    )
    rows = conn.execute(
        sa.select(tables.c.id, games.c.start, games.c.teams).join(games, games.c.id == tables.c.game_id)
    ).all()
    for table_id, start, teams in rows:
        conn.execute(sa.update(tables).where(tables.c.id == table_id).values(start=start, teams=teams))
    with op.batch_alter_table("deals", schema=None) as batch_op:
        batch_op.drop_constraint("fk_deals_game_id_table_games", type_="foreignkey")
        batch_op.drop_index("ix_deals_game_id")
        batch_op.drop_column("history")
        batch_op.drop_column("status")
        batch_op.drop_column("game_id")
    with op.batch_alter_table("tables", schema=None) as batch_op:
        batch_op.drop_column("archived_at")
        batch_op.drop_column("game_id")
        batch_op.drop_column("game")
    op.drop_index("ix_table_games_match_id", table_name="table_games")
    op.drop_index("ix_table_games_table_id", table_name="table_games")
    op.drop_table("table_games")
