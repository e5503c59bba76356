"""Forward proxies for outgoing HTTP: `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`.

Read once at start-up (they are `Settings` fields, upper or lower case, lower case first as
curl and Python's `urllib` read them) and applied to the Bot API and the library services
alike. `NO_PROXY` is read as curl reads it: a comma-separated list of host names, where
`example.org` and `.example.org` also cover `www.example.org`; IP addresses or networks
(`10.0.0.0/8`); an entry may end in `:port` to exempt only that port; `*` exempts every host.
"""

from __future__ import annotations

import functools
import ipaddress
import ssl
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

__all__ = ["Proxies", "check_proxy_url", "tls_context"]


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The roots both clients trust for HTTPS: `SSL_CERT_FILE` / `SSL_CERT_DIR` if set, else
    certifi's (httpx's default), read once. A TLS-inspecting proxy's root goes there."""
    return httpx.create_ssl_context()


def check_proxy_url(value: str) -> str:
    """An `http://` or `https://` proxy URL with a host (credentials allowed); else ValueError."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            "must be an http:// or https:// proxy URL like http://proxy.example.org:3128 "
            "(SOCKS proxies are not supported)"
        )
    try:
        parts.port  # noqa: B018 (a port out of range raises here)
    except ValueError as exc:
        raise ValueError("has a port that is not a number from 0 to 65535") from exc
    return value.strip()


@dataclass(frozen=True)
class Proxies:
    """The proxy (if any) for each URL the bot calls."""

    http: str | None = None
    https: str | None = None
    all: str | None = None
    no_proxy: str = ""
    _exempt: tuple[tuple[str, int | None], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        exempt = []
        for raw in self.no_proxy.split(","):
            entry = raw.strip().lower()
            port: int | None = None
            name, colon, digits = entry.rpartition(":")
            if colon and digits.isdigit() and not name.endswith(":"):  # not a bare IPv6 address
                entry, port = name, int(digits)
            entry = entry.strip("[]").lstrip(".")
            if entry:
                exempt.append((entry, port))
        object.__setattr__(self, "_exempt", tuple(exempt))

    def __bool__(self) -> bool:
        return bool(self.http or self.https or self.all)

    def passwords(self) -> list[str]:
        """The passwords in the proxy URLs (`http://user:password@proxy:3128`), for redaction."""
        found = (urlsplit(url).password for url in (self.http, self.https, self.all) if url)
        return [password for password in found if password]

    def for_url(self, url: str) -> str | None:
        """The proxy URL to reach `url` through, or None to connect directly."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        proxy = self.https if scheme == "https" else self.http if scheme == "http" else None
        proxy = proxy or self.all
        if proxy is None:
            return None
        port = parts.port or (443 if scheme == "https" else 80)
        if self.exempts(parts.hostname or "", port):
            return None
        return proxy

    def exempts(self, host: str, port: int) -> bool:
        """Whether `NO_PROXY` names `host` (on `port`)."""
        host = host.lower().rstrip(".")
        for entry, only_port in self._exempt:
            if only_port is not None and only_port != port:
                continue
            if entry == "*" or host == entry or host.endswith(f".{entry}"):
                return True
            if _in_network(host, entry):
                return True
        return False


def _in_network(host: str, entry: str) -> bool:
    """`host` is an IP address inside `entry`, an address or a network in CIDR form."""
    try:
        return ipaddress.ip_address(host) in ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return False
