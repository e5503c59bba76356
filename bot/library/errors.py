"""The few kinds of failure the bot acts on differently.

Messages never carry a URL or a token: request URLs hold `access_token` in the query.
"""

from __future__ import annotations

# `ServiceUnavailable.code` of a request that never left the bot (no connection was made).
NOT_SENT = "not_sent"
# The platform's "service unavailable": the request was turned away unread.
TURNED_AWAY = 503


class LibraryError(Exception):
    """Base of everything the library client raises."""

    kind = "error"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int | None = None,
        description: str | None = None,
        url: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        # The platform's `error_description`: a sentence meant for people, never a secret.
        self.description = description
        # `orderUrl` of an `owned_own_catalogue` refusal: the material in the pick-up
        # library's own catalogue, where it can be reserved instead.
        self.url = url

    @property
    def outcome_unknown(self) -> bool:
        """Whether a change (an order, a renewal, a cancellation) sent with this failure may
        have been made all the same. False here: the service said what it did."""
        return False


class TokenRejected(LibraryError):
    """401: the patron's token expired or is unknown; the patron must log in again."""

    kind = "token_rejected"


class NotLoggedIn(LibraryError):
    """403: an anonymous token was used where a patron's token is needed."""

    kind = "not_logged_in"


class Refused(LibraryError):
    """The platform said no to an order, a renewal or a cancellation; `code` says why."""

    kind = "refused"


class OrderRefused(Refused):
    """An order was not placed; `code` is the order system's (e.g. `owned_own_catalogue`)."""

    kind = "order_refused"


class BadRequest(LibraryError):
    """400: the request was malformed (also OAuth `invalid_grant`, `invalid_client`, ...)."""

    kind = "bad_request"


class ClientFault(BadRequest):
    """400 of the data platform's request validation: the bot sent what the platform does not
    take. A fault of the bot, never the library's answer: it is no reason to show a patron,
    and no refusal to remember."""

    kind = "client_fault"


class ServiceUnavailable(LibraryError):
    """5xx, time-out, connection refused or a body that is not the JSON promised."""

    kind = "unavailable"

    @property
    def outcome_unknown(self) -> bool:
        """No readable answer to a request that was sent (a time-out, a dropped connection, a
        body cut off), or a server error after the request reached a server: a gateway's 502
        or 504 and a 500 that names no refusal say nothing of what the platform did. Only a
        503 says the request was turned away unread, and `NOT_SENT` that it never left."""
        if self.code == NOT_SENT:
            return False
        return self.status is None or (self.status >= 500 and self.status != TURNED_AWAY)
