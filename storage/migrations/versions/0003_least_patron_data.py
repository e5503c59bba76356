"""Keep only uniqueId and municipality of a patron: drop the userinfo attributes JSON.

Earlier versions stored every userinfo attribute but `cpr` in `account.attributes` and
`pending_link.attributes`, which can hold civil registration numbers under other names
(`userId`, `agencies[].userId`). This revision copies `uniqueId` and `municipality` into
their own columns and drops both JSON columns. `storage.migrate` then compacts the database
(`SCRUB_TABLES`), so the dropped values leave no trace in the files either.

Also indexes `reminder_log.created_at`, which the hourly purge of old history filters on.

Revision ID: 0003
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Read by storage.migrate: tables to compact after this revision removed data from them.
SCRUB_TABLES = ("account", "pending_link")


def _text(attributes: Any, name: str, limit: int) -> str | None:
    if isinstance(attributes, str):
        try:
            attributes = json.loads(attributes)
        except ValueError:
            return None
    value = attributes.get(name) if isinstance(attributes, dict) else None
    return value if isinstance(value, str) and 0 < len(value) <= limit else None


def _copy_identity(table: str, key: str) -> None:
    """uniqueId and municipality out of the JSON, where the row has none of its own yet."""
    bind = op.get_bind()
    rows = bind.execute(sa.text(f"SELECT {key}, attributes FROM {table}")).all()  # noqa: S608
    update = sa.text(
        f"UPDATE {table} SET unique_id = COALESCE(unique_id, :unique_id), "  # noqa: S608
        f"municipality = COALESCE(municipality, :municipality) WHERE {key} = :key"
    )
    for row_key, attributes in rows:
        bind.execute(
            update,
            {
                "key": row_key,
                "unique_id": _text(attributes, "uniqueId", 200),
                "municipality": _text(attributes, "municipality", 16),
            },
        )


def upgrade() -> None:
    with op.batch_alter_table("pending_link") as batch:
        batch.add_column(sa.Column("unique_id", sa.String(length=200), nullable=True))
        batch.add_column(sa.Column("municipality", sa.String(length=16), nullable=True))
    _copy_identity("pending_link", "code_hash")
    _copy_identity("account", "chat_id")
    for table in SCRUB_TABLES:
        # Emptied before the drop: PostgreSQL keeps a dropped column's values in the rows.
        op.execute(sa.text(f"UPDATE {table} SET attributes = '{{}}'"))  # noqa: S608
        with op.batch_alter_table(table) as batch:
            batch.drop_column("attributes")
    op.create_index("ix_reminder_log_created_at", "reminder_log", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_reminder_log_created_at", table_name="reminder_log")
    for table in SCRUB_TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(
                sa.Column("attributes", sa.JSON(), nullable=False, server_default=sa.text("'{}'"))
            )
    with op.batch_alter_table("pending_link") as batch:
        batch.drop_column("municipality")
        batch.drop_column("unique_id")
