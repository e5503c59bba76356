"""Each card gets an identity that is never given again (`account.card_id`): a card's number is
reused after a logout, so buttons name the card by this instead.

Existing cards get a random one each; buttons stored before carry none and act on no card.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("account") as batch:
        batch.add_column(sa.Column("card_id", sa.String(length=16), nullable=True))
    bind = op.get_bind()
    account = sa.table(
        "account",
        sa.column("chat_id", sa.BigInteger()),
        sa.column("card", sa.Integer()),
        sa.column("card_id", sa.String()),
    )
    for chat_id, card in bind.execute(sa.select(account.c.chat_id, account.c.card)).all():
        bind.execute(
            sa.update(account)
            .where(account.c.chat_id == chat_id, account.c.card == card)
            .values(card_id=secrets.token_urlsafe(9))
        )


def downgrade() -> None:
    with op.batch_alter_table("account") as batch:
        batch.drop_column("card_id")
