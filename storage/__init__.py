"""Layer: storage: tables, migrations, encrypted tokens and the `Store` API."""
