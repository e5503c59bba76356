"""Fixtures live per part in tests/fixtures/; this file only loads them."""

pytest_plugins = [
    "tests.fixtures.library",
    "tests.fixtures.telegram",
    "tests.fixtures.database",
    "tests.fixtures.bot",
    "tests.fixtures.browser",
    "tests.fixtures.logs",
    "tests.fixtures.proxy",
    "tests.fixtures.loop",
]
