"""Several library cards in one chat: `account` is keyed by (chat, card), and what belongs to a
card moves onto its row (label, library, pick-up branch, whether its fees are known, the
watched orders' check day, its calendar entries). Refusals and notice memory gain the card in
their key.

Every existing account becomes card 1 and keeps its state. Tables whose key changes are
rebuilt (renamed aside, created, copied, dropped), the one way both SQLite and PostgreSQL take.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ACCOUNT_COLUMNS = (
    "chat_id, token, key_id, token_expires_at, unique_id, municipality, connected_at, "
    "expiry_warned, swept_on, lease_owner, lease_until, next_check"
)


def _time(name: str, *, nullable: bool) -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _card() -> sa.Column:  # type: ignore[type-arg]
    return sa.Column(
        "card", sa.Integer(), autoincrement=False, server_default=sa.text("1"), nullable=False
    )


def _account(*, cards: bool) -> None:
    per_card = (
        [
            _card(),
            sa.Column("label", sa.String(length=32), nullable=True),
            sa.Column("agency", sa.String(length=16), nullable=True),
            sa.Column("pickup_branch", sa.String(length=64), nullable=True),
            sa.Column("fees_known", sa.Boolean(), server_default=sa.false(), nullable=False),
            sa.Column("order_check", sa.Date(), nullable=True),
            sa.Column("feed_entries", sa.Text(), nullable=True),
            _time("feed_seen_at", nullable=True),
        ]
        if cards
        else []
    )
    op.create_table(
        "account",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("token", sa.Text(), nullable=False),
        sa.Column("key_id", sa.String(length=16), nullable=False),
        _time("token_expires_at", nullable=True),
        sa.Column("unique_id", sa.String(length=200), nullable=True),
        sa.Column("municipality", sa.String(length=16), nullable=True),
        _time("connected_at", nullable=False),
        sa.Column("expiry_warned", sa.Boolean(), nullable=False),
        sa.Column("swept_on", sa.Date(), nullable=True),
        sa.Column("lease_owner", sa.String(length=200), nullable=True),
        _time("lease_until", nullable=True),
        sa.Column("next_check", sa.Date(), nullable=True),
        *per_card,
        sa.PrimaryKeyConstraint("chat_id", "card") if cards else sa.PrimaryKeyConstraint("chat_id"),
    )
    op.create_index("ix_account_token_expires_at", "account", ["token_expires_at"])


def _aside(table: str) -> None:
    op.rename_table(table, f"{table}_old")
    if op.get_bind().dialect.name == "postgresql":
        # The key's index keeps its name through a rename; the new table's key needs it.
        op.execute(f"ALTER INDEX {table}_pkey RENAME TO {table}_old_pkey")


def upgrade() -> None:
    op.drop_index("ix_account_token_expires_at", table_name="account")
    _aside("account")
    _account(cards=True)
    op.execute(
        f"INSERT INTO account ({ACCOUNT_COLUMNS}, card, pickup_branch, fees_known, order_check, "  # noqa: S608 - fixed names
        "feed_entries, feed_seen_at) "
        f"SELECT {', '.join('a.' + c.strip() for c in ACCOUNT_COLUMNS.split(','))}, 1, "
        "c.pickup_branch, COALESCE(c.fees_known, false), c.order_check, f.entries, f.seen_at "
        "FROM account_old a LEFT JOIN chat c ON c.chat_id = a.chat_id "
        "LEFT JOIN calendar_feed f ON f.chat_id = a.chat_id"
    )
    op.drop_table("account_old")

    _aside("renewal_refusal")
    op.create_table(
        "renewal_refusal",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        _card(),
        sa.Column("loan_id", sa.String(length=300), nullable=False),
        sa.Column("due", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.String(length=200), nullable=False),
        _time("refused_at", nullable=False),
        sa.PrimaryKeyConstraint("chat_id", "card", "loan_id"),
    )
    op.execute(
        "INSERT INTO renewal_refusal (chat_id, card, loan_id, due, reason, refused_at) "
        "SELECT chat_id, 1, loan_id, due, reason, refused_at FROM renewal_refusal_old"
    )
    op.drop_table("renewal_refusal_old")

    _aside("notice_seen")
    op.create_table(
        "notice_seen",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        _card(),
        sa.Column("item", sa.String(length=300), nullable=False),
        sa.Column("value", sa.String(length=16), nullable=True),
        sa.PrimaryKeyConstraint("chat_id", "card", "item"),
    )
    op.execute(
        "INSERT INTO notice_seen (chat_id, card, item, value) "
        "SELECT chat_id, 1, item, value FROM notice_seen_old"
    )
    op.drop_table("notice_seen_old")

    with op.batch_alter_table("chat") as batch:
        batch.drop_column("pickup_branch")
        batch.drop_column("fees_known")
        batch.drop_column("order_check")
    with op.batch_alter_table("calendar_feed") as batch:
        batch.drop_column("entries")
        batch.drop_column("seen_at")


def downgrade() -> None:
    """Back to one card per chat: card 1 of each chat is kept, the other cards are dropped
    (their tokens stay valid at the access service until they expire)."""
    with op.batch_alter_table("calendar_feed") as batch:
        batch.add_column(sa.Column("entries", sa.Text(), nullable=True))
        batch.add_column(_time("seen_at", nullable=True))
    with op.batch_alter_table("chat") as batch:
        batch.add_column(sa.Column("pickup_branch", sa.String(length=64), nullable=True))
        batch.add_column(
            sa.Column("fees_known", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch.add_column(sa.Column("order_check", sa.Date(), nullable=True))
    first = "(SELECT {column} FROM account a WHERE a.chat_id = {table}.chat_id AND a.card = 1)"
    for column in ("pickup_branch", "fees_known", "order_check"):
        value = first.format(column=column, table="chat")
        if column == "fees_known":
            value = f"COALESCE({value}, false)"
        op.execute(f"UPDATE chat SET {column} = {value}")  # noqa: S608 - fixed names
    for column, source in (("entries", "feed_entries"), ("seen_at", "feed_seen_at")):
        value = first.format(column=source, table="calendar_feed")
        op.execute(f"UPDATE calendar_feed SET {column} = {value}")  # noqa: S608 - fixed names

    _aside("notice_seen")
    op.create_table(
        "notice_seen",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("item", sa.String(length=300), nullable=False),
        sa.Column("value", sa.String(length=16), nullable=True),
        sa.PrimaryKeyConstraint("chat_id", "item"),
    )
    op.execute(
        "INSERT INTO notice_seen (chat_id, item, value) "
        "SELECT chat_id, item, value FROM notice_seen_old WHERE card = 1"
    )
    op.drop_table("notice_seen_old")

    _aside("renewal_refusal")
    op.create_table(
        "renewal_refusal",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("loan_id", sa.String(length=300), nullable=False),
        sa.Column("due", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.String(length=200), nullable=False),
        _time("refused_at", nullable=False),
        sa.PrimaryKeyConstraint("chat_id", "loan_id"),
    )
    op.execute(
        "INSERT INTO renewal_refusal (chat_id, loan_id, due, reason, refused_at) "
        "SELECT chat_id, loan_id, due, reason, refused_at FROM renewal_refusal_old WHERE card = 1"
    )
    op.drop_table("renewal_refusal_old")

    op.drop_index("ix_account_token_expires_at", table_name="account")
    _aside("account")
    _account(cards=False)
    op.execute(
        f"INSERT INTO account ({ACCOUNT_COLUMNS}) "  # noqa: S608 - fixed names
        f"SELECT {ACCOUNT_COLUMNS} FROM account_old WHERE card = 1"
    )
    op.drop_table("account_old")
