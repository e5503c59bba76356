"""The polling plan: account.next_check, the first day the sweep must check the card again.

Revision ID: 0005
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Nullable: existing cards have no plan yet, so the next sweep checks them (and plans them).
    with op.batch_alter_table("account") as batch:
        batch.add_column(sa.Column("next_check", sa.Date(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("account") as batch:
        batch.drop_column("next_check")
