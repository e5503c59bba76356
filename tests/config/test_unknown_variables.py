"""Variables that look meant for the bot but are none of its settings: one warning each."""

from __future__ import annotations

import pytest

from bot.config.settings import (
    known_variables,
    one_typo_apart,
    setting_prefixes,
    unknown_variables,
)


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("METRICS_ADRESS", "METRICS_ADDRESS"),  # a letter dropped
        ("WEBHOOK_SECERT", "WEBHOOK_SECRET"),  # two neighbours swapped
        ("TOKEN_KEY", "TOKEN_KEYS"),
        ("PORTT", "PORT"),  # a letter added
        ("HOTS", "HOST"),
        ("BOT_TIMEZONA", "BOT_TIMEZONE"),  # a letter changed
    ],
)
def test_one_typo_apart(typed: str, meant: str) -> None:
    assert one_typo_apart(typed, meant) and one_typo_apart(meant, typed)


@pytest.mark.parametrize(
    ("first", "second"),
    [("PORT", "PORT"), ("HOME", "HOST"), ("PATH", "PORT"), ("ABCD", "BADC"), ("AB", "ABCD")],
)
def test_more_than_one_typo_apart(first: str, second: str) -> None:
    assert not one_typo_apart(first, second)


def test_the_prefixes_are_our_settings_first_words() -> None:
    prefixes = setting_prefixes()
    assert {"TELEGRAM_", "DATABASE_", "WEBHOOK_", "METRICS_", "REMINDER_", "LOG_"} <= prefixes
    assert not {"HTTP_", "HTTPS_", "ALL_", "NO_"} & prefixes  # the proxies' names are curl's
    assert {"https_proxy", "HTTPS_PROXY", "TOKEN_KEYS_FILE", "DATABASE_URL_FILE"} <= (
        known_variables()
    )


def test_each_unknown_variable_of_ours_is_one_warning() -> None:
    environ = {
        "METRICS_ADRESS": "127.0.0.1:9100",
        "database_url": "sqlite:///x.db",  # only the case is wrong
        "TELEGRAM_BOT_TOKEN_FILE": "/run/secrets/token",
        "http_proxy": "http://proxy:3128",
        "PLATFORM_KEY": "k",
        "PATH": "/usr/bin",
        "HOSTNAME": "bot-1",
        "TELEGRAM_BOT_API_SERVICE_HOST": "10.0.0.9",
        "TELEGRAM_BOT_API_PORT_8081_TCP_ADDR": "10.0.0.9",
        "TELEGRAM_BOT_API_PORT": "tcp://10.0.0.9:8081",
        "METRICS_PORT": "9100",  # looks like a service link's, but holds no address
    }
    assert list(unknown_variables(environ, {"LOG_LEVLE": "DEBUG", "PATH": None})) == [
        "LOG_LEVLE (in .env) is not a setting of library-bot and is ignored: "
        "did you mean LOG_LEVEL?",
        "METRICS_ADRESS is not a setting of library-bot and is ignored: "
        "did you mean METRICS_ADDRESS?",
        "METRICS_PORT is not a setting of library-bot and is ignored "
        "(see Configuration in the README)",
        "PLATFORM_KEY is not a setting of library-bot and is ignored "
        "(see Configuration in the README)",
        "database_url is not a setting of library-bot and is ignored: did you mean DATABASE_URL?",
    ]
