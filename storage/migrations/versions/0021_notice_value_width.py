"""A renewal claim whose answer was lost keeps the due date it was sent at and when
(`notice_seen.value`, 30 characters), so another try waits until the library has surely
finished with the first: the column grows from 16 to 32 characters.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("notice_seen") as batch:
        batch.alter_column(
            "value", existing_type=sa.String(16), type_=sa.String(32), existing_nullable=True
        )


def downgrade() -> None:
    # A longer value (an unanswered renewal's claim, of one day) becomes a plain claim.
    op.execute(
        "UPDATE notice_seen SET value = substr(value, 1, 8) "
        "WHERE item LIKE 'renewed:%' AND length(value) > 16"
    )
    with op.batch_alter_table("notice_seen") as batch:
        batch.alter_column(
            "value", existing_type=sa.String(32), type_=sa.String(16), existing_nullable=True
        )
