"""Layer 4, storage: tables, migrations, encrypted tokens and the `Store` API."""
