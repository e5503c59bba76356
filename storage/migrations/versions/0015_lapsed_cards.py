"""Lapsed cards: a card whose login lapsed stays, without its token, marked by `lapsed_at`.

The token and its key id become nullable: a lapsed card keeps no token (the least is stored),
only its name, identity, calendar entries and settings, until the same person logs in again or
the patron ends it with /logout or /forget.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("account") as batch:
        batch.add_column(sa.Column("lapsed_at", sa.DateTime(timezone=True), nullable=True))
        batch.alter_column("token", existing_type=sa.Text(), nullable=True)
        batch.alter_column("key_id", existing_type=sa.String(length=16), nullable=True)


def downgrade() -> None:
    # A lapsed card has no token to keep: before 0015 such a card was forgotten.
    op.execute(sa.text("DELETE FROM account WHERE token IS NULL"))
    with op.batch_alter_table("account") as batch:
        batch.alter_column("key_id", existing_type=sa.String(length=16), nullable=False)
        batch.alter_column("token", existing_type=sa.Text(), nullable=False)
        batch.drop_column("lapsed_at")
