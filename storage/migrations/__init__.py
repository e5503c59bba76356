"""Alembic migrations of the store; run them with `storage.migrate.upgrade`."""
