"""A button's last tap that was answered with a new message (`callback_ref.tapped_at`), so that
a double tap of a button that asks gives one question, not two.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("callback_ref") as batch:
        batch.add_column(sa.Column("tapped_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("callback_ref") as batch:
        batch.drop_column("tapped_at")
