"""bridge events: a pair event or a team match at bridge tables, and a table game's event round

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-05 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bridge_events",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("boards_per_round", sa.Integer(), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("tables", sa.JSON(), nullable=False),
        sa.Column("entries", sa.JSON(), nullable=False),
        sa.Column("current_round", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("table_games", schema=None) as batch_op:
        batch_op.add_column(sa.Column("bridge_event_id", sa.String(length=32), nullable=True))
        batch_op.create_index("ix_table_games_bridge_event_id", ["bridge_event_id"], unique=False)
        batch_op.create_foreign_key(
            "fk_table_games_bridge_event_id_bridge_events",
            "bridge_events",
            ["bridge_event_id"],
            ["id"],
            ondelete="SET NULL",
        )


def downgrade() -> None:
    with op.batch_alter_table("table_games", schema=None) as batch_op:
        batch_op.drop_constraint("fk_table_games_bridge_event_id_bridge_events", type_="foreignkey")
        batch_op.drop_index("ix_table_games_bridge_event_id")
        batch_op.drop_column("bridge_event_id")
    op.drop_table("bridge_events")
