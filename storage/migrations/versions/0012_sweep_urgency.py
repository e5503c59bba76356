"""What the sweep knew of a card at its last check, so a pass sends the most urgent first:
its first loan due date and whether a hold was ready for pick-up.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("account") as batch:
        batch.add_column(sa.Column("first_due", sa.Date(), nullable=True))
        batch.add_column(
            sa.Column("hold_ready", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("account") as batch:
        batch.drop_column("hold_ready")
        batch.drop_column("first_due")
