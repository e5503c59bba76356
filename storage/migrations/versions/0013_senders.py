"""The processes sending for the bot, so they share Telegram's send budget: each one's last
beat and how much it has to send.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sender",
        sa.Column("worker", sa.String(length=200), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("demand", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("worker"),
    )


def downgrade() -> None:
    op.drop_table("sender")
