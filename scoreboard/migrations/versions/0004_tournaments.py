"""tournaments: entries, rounds, matches and results (issue 43)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26 12:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=True),
        sa.Column("format", sa.String(length=20), nullable=False),
        sa.Column("scoring", sa.String(length=20), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("rounds_planned", sa.Integer(), nullable=True),
        sa.Column("clock", sa.JSON(), nullable=False),
        sa.Column("tables", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "tourney_entries",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tournament_id", sa.String(length=32), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(length=100), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("unit", sa.String(length=200), nullable=True),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("group_name", sa.String(length=100), nullable=True),
        sa.Column("pairs", sa.JSON(), nullable=False),
        sa.Column("withdrawn", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tournament_id", "code", name="uq_tourney_entries_code"),
    )
    op.create_index("ix_tourney_entries_tournament_id", "tourney_entries", ["tournament_id"])
    op.create_table(
        "tourney_rounds",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tournament_id", sa.String(length=32), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("relaxed", sa.JSON(), nullable=False),
        sa.Column("clock_started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("clock_started_by", sa.String(length=100), nullable=True),
        sa.Column("call_sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tournament_id", "number", name="uq_tourney_rounds_number"),
    )
    op.create_index("ix_tourney_rounds_tournament_id", "tourney_rounds", ["tournament_id"])
    op.create_table(
        "tourney_matches",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("table_no", sa.Integer(), nullable=True),
        sa.Column("home", sa.String(length=100), nullable=True),
        sa.Column("away", sa.String(length=100), nullable=True),
        sa.Column("bye", sa.String(length=100), nullable=True),
        sa.Column("tables", sa.JSON(), nullable=False),
        sa.Column("home_side", sa.String(length=2), nullable=False),
        sa.Column("results", sa.JSON(), nullable=True),
        sa.Column("result_source", sa.String(length=10), nullable=True),
        sa.Column("result_by", sa.String(length=100), nullable=True),
        sa.Column("result_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("history", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["round_id"], ["tourney_rounds.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_tourney_matches_round_id", "tourney_matches", ["round_id"])


def downgrade() -> None:
    op.drop_index("ix_tourney_matches_round_id", table_name="tourney_matches")
    op.drop_table("tourney_matches")
    op.drop_index("ix_tourney_rounds_tournament_id", table_name="tourney_rounds")
    op.drop_table("tourney_rounds")
    op.drop_index("ix_tourney_entries_tournament_id", table_name="tourney_entries")
    op.drop_table("tourney_entries")
    op.drop_table("tournaments")
