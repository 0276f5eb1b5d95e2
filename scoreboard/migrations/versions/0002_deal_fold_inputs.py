"""deal fold inputs

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 00:10:59.779151
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Existing deals keep fold NULL; the service fills it from the current version when it next
    # folds the table's state.
    with op.batch_alter_table("deals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("fold", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("deals", schema=None) as batch_op:
        batch_op.drop_column("fold")
