"""Fault injection for the Bot API stand-in.

Usage (`telegram.failures` on a `TelegramStandIn`)::

    telegram.failures.fail("sendMessage", 500)                   # next sendMessage: 500
    telegram.failures.fail("sendMessage", 429, retry_after=3)    # "Too Many Requests: ..."
    telegram.failures.fail("*", 502, times=2)                    # the next two calls of any method
    telegram.failures.hang("getUpdates", 5.0)                    # answer normally, 5 s late
    telegram.failures.fail("sendMessage", 500, delay=2.0)        # wait 2 s, then fail
    telegram.failures.garble("sendMessage")                      # do it, answer `ok` unreadably
    telegram.failures.clear()

Rules are consumed in the order they were added; each matching call uses up one of `times`.
Method names match case-insensitively, like Telegram's. `garble` stands for Bot API servers
that are not Telegram (emulators, local servers behind a rewriting proxy): the call is carried
out and answered HTTP 200 `{"ok": true}`, but its `result` lacks fields Telegram always sends
(a message without `date` and `chat`).
"""

from __future__ import annotations

from dataclasses import dataclass
from http import HTTPStatus

_DESCRIPTIONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    500: "Internal Server Error",
    502: "Bad Gateway",
}


@dataclass
class Fault:
    """One rule: how the next `remaining` calls of `method` misbehave."""

    method: str
    status: int | None
    description: str | None
    retry_after: int | None
    delay: float
    remaining: int
    garbled: bool = False

    def error_description(self) -> str:
        if self.description is not None:
            return self.description
        if self.status == 429:
            return f"Too Many Requests: retry after {self.retry_after or 1}"
        status = self.status or 500
        if status in _DESCRIPTIONS:
            return _DESCRIPTIONS[status]
        try:
            return HTTPStatus(status).phrase
        except ValueError:
            return "Error"


class Failures:
    """The stand-in's fault rules; see the module docstring."""

    def __init__(self) -> None:
        self._rules: list[Fault] = []

    def fail(
        self,
        method: str,
        status: int = 500,
        *,
        description: str | None = None,
        retry_after: int | None = None,
        times: int = 1,
        delay: float = 0.0,
    ) -> None:
        """Answer the next `times` calls of `method` ("*" = any) with this error."""
        if status == 429 and retry_after is None:
            retry_after = 1
        self._rules.append(Fault(method.lower(), status, description, retry_after, delay, times))

    def hang(self, method: str, seconds: float, *, times: int = 1) -> None:
        """Delay the next `times` calls of `method` by `seconds`, then answer them normally."""
        self._rules.append(Fault(method.lower(), None, None, None, seconds, times))

    def garble(self, method: str, *, times: int = 1) -> None:
        """Carry out the next `times` calls of `method`, then answer them with a bare result."""
        self._rules.append(Fault(method.lower(), None, None, None, 0.0, times, garbled=True))

    def clear(self) -> None:
        self._rules.clear()

    @property
    def pending(self) -> list[Fault]:
        """Rules not yet used up."""
        return list(self._rules)

    def take(self, method: str) -> Fault | None:
        """Use up one call of the first rule matching `method`, if any."""
        name = method.lower()
        for rule in self._rules:
            if rule.method in ("*", name):
                rule.remaining -= 1
                if rule.remaining <= 0:
                    self._rules.remove(rule)
                return rule
        return None
