"""The Telegram Bot API stand-in with a chat page (see `server.TelegramStandIn`)."""

from library_bot.sandbox.telegram.driver import Button, SentMessage
from library_bot.sandbox.telegram.faults import Failures, Fault
from library_bot.sandbox.telegram.server import TelegramStandIn

__all__ = ["Button", "Failures", "Fault", "SentMessage", "TelegramStandIn"]
