"""Telegram's language per chat, why an account ended, a fresh login after logout, and refused
renewals remembered per chat and loan.

Revision ID: 0004
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("chat") as batch:
        batch.add_column(sa.Column("telegram_language", sa.String(length=16), nullable=True))
        batch.add_column(
            sa.Column("fresh_login", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("account_ended", sa.String(length=16), nullable=True))

    op.create_table(
        "renewal_refusal",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("loan_id", sa.String(length=300), nullable=False),
        sa.Column("due", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.String(length=200), nullable=False),
        sa.Column("refused_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("chat_id", "loan_id"),
    )


def downgrade() -> None:
    op.drop_table("renewal_refusal")
    with op.batch_alter_table("chat") as batch:
        batch.drop_column("account_ended")
        batch.drop_column("fresh_login")
        batch.drop_column("telegram_language")
