"""table start levels, team names, alert data

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26 02:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tables", schema=None) as batch_op:
        batch_op.add_column(sa.Column("start", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("teams", sa.JSON(), nullable=True))
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("data", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.drop_column("data")
    with op.batch_alter_table("tables", schema=None) as batch_op:
        batch_op.drop_column("teams")
        batch_op.drop_column("start")
