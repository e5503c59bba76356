"""One vocabulary (issue 34, part 5): the table of connected cards is `card` (was `account`), a
card's number in its chat is `number` (was `card`) in every table keyed by it, and why a
chat's last card ended is `chat.card_ended` (was `account_ended`). Only names change; every
row is kept.

Tables and columns are renamed in place; on SQLite, Alembic's batch mode rebuilds a table to
rename a column. PostgreSQL keeps a renamed table's key and index names, so those are renamed
to what a new database gets; SQLite has no index rename, so the index is made again.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Read by storage.migrate: a table an earlier revision scrubs is compacted by its new name.
RENAMED_TABLES = {"account": "card"}

# The tables keyed by (chat, the card's number in it), the cards' own first.
PER_CARD = ("card", "renewal_refusal", "calendar_kept", "notice_seen", "shelf_watch")


def _rename_table(old: str, new: str) -> None:
    op.drop_index(f"ix_{old}_token_expires_at", table_name=old)
    op.rename_table(old, new)
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE {new} RENAME CONSTRAINT {old}_pkey TO {new}_pkey")
    op.create_index(f"ix_{new}_token_expires_at", new, ["token_expires_at"])


def _renumber(table: str, old: str, new: str) -> None:
    with op.batch_alter_table(table) as batch:
        batch.alter_column(
            old, new_column_name=new, existing_type=sa.Integer(), existing_nullable=False
        )


def upgrade() -> None:
    _rename_table("account", "card")
    for table in PER_CARD:
        _renumber(table, "card", "number")
    with op.batch_alter_table("chat") as batch:
        batch.alter_column(
            "account_ended",
            new_column_name="card_ended",
            existing_type=sa.String(length=16),
            existing_nullable=True,
        )


def downgrade() -> None:
    with op.batch_alter_table("chat") as batch:
        batch.alter_column(
            "card_ended",
            new_column_name="account_ended",
            existing_type=sa.String(length=16),
            existing_nullable=True,
        )
    for table in PER_CARD:
        _renumber(table, "number", "card")
    _rename_table("card", "account")
