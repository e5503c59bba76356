"""The send budget shared by urgency: the most urgent of the sweep's digests a process holds,
so that the processes holding the most urgent send first (issue 36).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("sender") as batch:
        batch.add_column(sa.Column("rank", sa.SmallInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sender") as batch:
        batch.drop_column("rank")
