"""Keep tokens out of the HTTP libraries' log lines.

httpx logs every request URL at INFO, and the data platform takes `access_token` in the query,
so without this filter every patron's token would land in the logs. The filter is attached
explicitly by `install_log_redaction()`; importing the client has no side effects.
"""

from __future__ import annotations

import logging
import re

REDACTED = "[redacted]"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Query and form parameters; `\b` keeps `error_code=` or `statusCode=` untouched.
    (
        re.compile(
            r"\b(access_token|refresh_token|token|code|client_secret|password|state)"
            r"=[^&\s'\"#,;)\]>]+",
            re.IGNORECASE,
        ),
        rf"\1={REDACTED}",
    ),
    # The session token of the earlier flow travels as a path segment.
    (re.compile(r"(/getTicket/)[^/\s?#'\"]+", re.IGNORECASE), rf"\1{REDACTED}"),
    (re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/=]+", re.IGNORECASE), rf"\1 {REDACTED}"),
    # Token bodies, should anyone log one.
    (
        re.compile(
            r"([\"'](?:access_token|refresh_token|token|code|client_secret|cpr)[\"']\s*:\s*[\"'])"
            r"[^\"']*",
            re.IGNORECASE,
        ),
        rf"\1{REDACTED}",
    ),
)

# Loggers that print request URLs. Filters on a logger do not apply to records of its
# children, so httpcore's sub-loggers are listed one by one.
HTTP_LOGGERS = (
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
)


def redact(text: str) -> str:
    """`text` with every token, code and secret replaced by a marker."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RedactQuery(logging.Filter):
    """Rewrite a record's message (rendered with its args) and traceback without secrets."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string must not lose the record
            message = str(record.msg)
        cleaned = redact(message)
        if cleaned != message:
            record.msg = cleaned
            record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


def install_log_redaction(names: tuple[str, ...] = HTTP_LOGGERS) -> None:
    """Attach `RedactQuery` to the HTTP libraries' loggers; calling it again changes nothing.

    Call once at start-up (the bot's logging setup does); tests call it before capturing logs.
    """
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(existing, RedactQuery) for existing in logger.filters):
            logger.addFilter(RedactQuery())
