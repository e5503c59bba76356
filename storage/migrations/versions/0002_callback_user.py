"""Buttons belong to the user who was shown them: callback_ref.user_id. No account in a group.

Existing buttons of private chats (positive chat ids) belong to the chat's user, whose id is
the chat id; buttons shown in groups have no known user and are dropped (they are at most a
day old and only good for "try the command again").

Accounts are served in private chats only: an account, link or login state that an earlier
version kept for a group or channel (negative chat id) is deleted, so that no reminder or
notice about a patron goes to a group again. Their tokens are not revoked here (a migration
does not call the access service); they lapse within 30 days.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    for table in ("account", "pending_link", "login_state", "reminder_log"):
        op.execute(f"DELETE FROM {table} WHERE chat_id < 0")  # noqa: S608 - fixed names
    op.add_column("callback_ref", sa.Column("user_id", sa.BigInteger(), nullable=True))
    op.execute("DELETE FROM callback_ref WHERE chat_id < 0")
    op.execute("UPDATE callback_ref SET user_id = chat_id")
    with op.batch_alter_table("callback_ref") as batch:
        batch.alter_column("user_id", existing_type=sa.BigInteger(), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("callback_ref") as batch:
        batch.drop_column("user_id")
