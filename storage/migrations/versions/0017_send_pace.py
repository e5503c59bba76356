"""Telegram's per-chat and per-group limits shared by the processes of one bot: each chat's
next turn (`storage.pace`), and how much of a process's demand is replies to chats.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "send_pace",
        sa.Column("key", sa.String(length=100), nullable=False),
        sa.Column("tat", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    with op.batch_alter_table("sender") as batch:
        batch.add_column(
            sa.Column("urgent", sa.Float(), server_default=sa.text("0"), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("sender") as batch:
        batch.drop_column("urgent")
    op.drop_table("send_pace")
