"""Tests of storage/: the Store API, crypto, engine, migrations and commands."""
