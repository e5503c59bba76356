"""Sending within Telegram's limit of about 30 messages per second."""

from __future__ import annotations

from telegram.ext import AIORateLimiter

SEND_RATE = 29.5  # messages per second: under Telegram's 30, with room for network jitter
SEND_ATTEMPTS = 5


def paced_rate_limiter(per_second: float = SEND_RATE) -> AIORateLimiter:
    """Telegram's 30 messages per second as an even pace rather than bursts.

    PTB's default limiter allows a burst of 30 and then 30 more within the same second, which a
    server counting a sliding one-second window answers with 429. One message every 1/rate
    seconds never trips it; a 429 all the same pauses every send for `retry_after` and retries.
    A rate of 0 keeps the retries but sends unpaced.
    """
    if per_second <= 0:
        return AIORateLimiter(overall_max_rate=0, group_max_rate=0, max_retries=SEND_ATTEMPTS)
    return AIORateLimiter(
        overall_max_rate=1, overall_time_period=1 / per_second, max_retries=SEND_ATTEMPTS
    )
