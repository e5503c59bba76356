"""Initial schema: chat, login_state, pending_link, account, callback_ref, reminder_log.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _time(name: str, *, nullable: bool) -> sa.Column:  # type: ignore[type-arg]
    # Stored as UTC; storage.tables.UTCDateTime makes them aware again on the way out.
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "chat",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("language", sa.String(length=8), nullable=True),
        sa.Column("reminders_enabled", sa.Boolean(), nullable=False),
        sa.Column("reminder_days", sa.String(length=200), nullable=True),
        sa.Column("pickup_branch", sa.String(length=64), nullable=True),
        sa.Column("active", sa.Boolean(), nullable=False),
        _time("created_at", nullable=False),
        _time("updated_at", nullable=False),
        sa.PrimaryKeyConstraint("chat_id"),
    )

    op.create_table(
        "login_state",
        sa.Column("state_hash", sa.String(length=64), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        _time("expires_at", nullable=False),
        sa.PrimaryKeyConstraint("state_hash"),
    )
    op.create_index("ix_login_state_chat_id", "login_state", ["chat_id"])
    op.create_index("ix_login_state_expires_at", "login_state", ["expires_at"])

    op.create_table(
        "pending_link",
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("token", sa.Text(), nullable=False),
        _time("token_expires_at", nullable=True),
        sa.Column("attributes", sa.JSON(), nullable=False),
        _time("expires_at", nullable=False),
        sa.PrimaryKeyConstraint("code_hash"),
    )
    op.create_index("ix_pending_link_chat_id", "pending_link", ["chat_id"])
    op.create_index("ix_pending_link_expires_at", "pending_link", ["expires_at"])

    op.create_table(
        "account",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("token", sa.Text(), nullable=False),
        sa.Column("key_id", sa.String(length=16), nullable=False),
        _time("token_expires_at", nullable=True),
        sa.Column("unique_id", sa.String(length=200), nullable=True),
        sa.Column("municipality", sa.String(length=16), nullable=True),
        sa.Column("attributes", sa.JSON(), nullable=False),
        _time("connected_at", nullable=False),
        sa.Column("expiry_warned", sa.Boolean(), nullable=False),
        sa.Column("swept_on", sa.Date(), nullable=True),
        sa.Column("lease_owner", sa.String(length=200), nullable=True),
        _time("lease_until", nullable=True),
        sa.PrimaryKeyConstraint("chat_id"),
    )
    op.create_index("ix_account_token_expires_at", "account", ["token_expires_at"])

    op.create_table(
        "callback_ref",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        _time("created_at", nullable=False),
        _time("used_at", nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_callback_ref_chat_id", "callback_ref", ["chat_id"])
    op.create_index("ix_callback_ref_created_at", "callback_ref", ["created_at"])

    op.create_table(
        "reminder_log",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("key", sa.String(length=300), nullable=False),
        sa.Column("state", sa.String(length=8), nullable=False),
        _time("created_at", nullable=False),
        _time("sent_at", nullable=True),
        sa.PrimaryKeyConstraint("chat_id", "key"),
    )


def downgrade() -> None:
    for table in ("reminder_log", "callback_ref", "account", "pending_link", "login_state", "chat"):
        op.drop_table(table)
