"""Each chat's updates taken by the processes of one bot, so they are handled one at a time
and in `update_id` order on any process (storage.turns).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chat_turn",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("update_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("worker", sa.String(length=200), nullable=False),
        sa.Column("held_until", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("chat_id", "update_id"),
    )
    op.create_index("ix_chat_turn_worker", "chat_turn", ["worker"])


def downgrade() -> None:
    op.drop_index("ix_chat_turn_worker", table_name="chat_turn")
    op.drop_table("chat_turn")
