"""Shelf watches: a card's wish to hear when a title is on the shelf at a branch.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "shelf_watch",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column(
            "card", sa.Integer(), server_default=sa.text("1"), autoincrement=False, nullable=False
        ),
        sa.Column("pid", sa.String(length=100), nullable=False),
        sa.Column("branch", sa.String(length=200), nullable=False),
        sa.Column("agency", sa.String(length=16), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("chat_id", "card", "pid", "branch"),
    )


def downgrade() -> None:
    op.drop_table("shelf_watch")
