"""`bot.config.proxies` and the proxy settings: which proxy each URL gets, read in either
case."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config.proxies import Proxies
from bot.config.settings import Settings, SettingsError, load_settings

PROXY_VARIABLES = [
    f"{name}_proxy" if lower else f"{name.upper()}_PROXY"
    for name in ("http", "https", "all", "no")
    for lower in (True, False)
]


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_each_scheme_gets_its_own_proxy_and_all_proxy_fills_in() -> None:
    proxies = Proxies(http="http://h:1", https="http://s:2", all="http://a:3")
    assert proxies.for_url("http://platform.example/v3/user") == "http://h:1"
    assert proxies.for_url("https://api.telegram.org/bot1:x/getMe") == "http://s:2"
    only_all = Proxies(all="http://a:3")
    assert only_all.for_url("https://api.telegram.org/") == "http://a:3"
    assert only_all.for_url("http://platform.example/") == "http://a:3"
    assert Proxies(https="http://s:2").for_url("http://platform.example/") is None
    assert not Proxies() and Proxies().for_url("https://api.telegram.org/") is None


@pytest.mark.parametrize(
    ("url", "exempt"),
    [
        ("https://api.telegram.org/x", True),  # a domain covers its sub-domains
        ("https://telegram.org/x", True),
        ("https://nottelegram.org/x", False),
        ("http://login.bib.dk:8080/", True),  # a leading dot works the same
        ("http://10.20.30.40/", True),  # inside a network
        ("http://11.0.0.1/", False),
        ("http://127.0.0.1:9000/", True),  # only that port
        ("http://127.0.0.1:9001/", False),
        ("http://LOCALHOST/", True),  # case does not matter
    ],
)
def test_no_proxy_entries(url: str, exempt: bool) -> None:
    proxies = Proxies(
        all="http://proxy:3128",
        no_proxy=" telegram.org, .bib.dk,10.0.0.0/8 ,127.0.0.1:9000, localhost ,",
    )
    assert (proxies.for_url(url) is None) == exempt


def test_no_proxy_star_exempts_everything() -> None:
    assert Proxies(all="http://proxy:3128", no_proxy="*").for_url("https://x.example/") is None


def test_settings_read_either_case_lower_case_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://upper:1")
    monkeypatch.setenv("https_proxy", "http://lower:2")
    monkeypatch.setenv("HTTP_PROXY", "http://plain:3")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    proxies = Settings(_env_file=None).proxies  # type: ignore[call-arg]
    assert proxies == Proxies(https="http://lower:2", http="http://plain:3", no_proxy="127.0.0.1")


def test_settings_read_the_dotenv_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with open(".env", "w") as env:
        env.write("all_proxy=http://proxy.example.org:3128\nno_proxy=.internal\n")
    proxies = load_settings().proxies
    assert proxies.all == "http://proxy.example.org:3128" and proxies.no_proxy == ".internal"


@pytest.mark.parametrize(
    "value", ["socks5://proxy:1080", "proxy:3128", "http://", "http://p:99999"]
)
def test_a_proxy_that_cannot_be_used_stops_with_one_line(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("ALL_PROXY", value)
    with pytest.raises(SettingsError) as caught:
        load_settings(_env_file=None)
    assert str(caught.value).startswith("ALL_PROXY: ")
    assert "\n" not in str(caught.value)


def test_empty_values_mean_no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "")
    monkeypatch.setenv("NO_PROXY", "")
    assert not Settings(_env_file=None).proxies  # type: ignore[call-arg]


def test_proxy_passwords_are_known_for_redaction() -> None:
    proxies = Proxies(https="http://kommune:s3cret-pw@proxy:3128", http="http://proxy:3128")
    assert proxies.passwords() == ["s3cret-pw"]
