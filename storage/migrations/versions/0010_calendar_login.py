"""A card's calendar entries outlive its login: `calendar_kept` holds them after the login
expired or was refused, until the card logs in again or 30 days pass.

Search buttons now keep their words sealed; the ones made before kept them in plain text, so
they are deleted (a tap on one says the button is no longer valid; they lived 24 hours).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "calendar_kept",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("card", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("unique_hash", sa.String(length=64), nullable=True),
        sa.Column("label", sa.String(length=32), nullable=True),
        sa.Column("entries", sa.Text(), nullable=True),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lost_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("chat_id", "card"),
    )
    op.create_index("ix_calendar_kept_lost_at", "calendar_kept", ["lost_at"])
    op.execute("DELETE FROM callback_ref WHERE action = 'find'")


def downgrade() -> None:
    op.drop_index("ix_calendar_kept_lost_at", table_name="calendar_kept")
    op.drop_table("calendar_kept")
