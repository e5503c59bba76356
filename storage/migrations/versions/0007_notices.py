"""Notices: the toggles per chat, whether its fees are known, when an order placed through the
bot is next checked, and what the notices compare against (queue positions last seen, the
digests of the fees known, the orders placed through the bot not yet shown).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("chat") as batch:
        batch.add_column(sa.Column("notices", sa.String(length=100), nullable=True))
        batch.add_column(
            sa.Column("fees_known", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch.add_column(sa.Column("order_check", sa.Date(), nullable=True))
    op.create_table(
        "notice_seen",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("item", sa.String(length=300), nullable=False),
        sa.Column("value", sa.String(length=16), nullable=True),
        sa.PrimaryKeyConstraint("chat_id", "item"),
    )


def downgrade() -> None:
    op.drop_table("notice_seen")
    with op.batch_alter_table("chat") as batch:
        batch.drop_column("order_check")
        batch.drop_column("fees_known")
        batch.drop_column("notices")
