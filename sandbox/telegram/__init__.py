"""The Telegram Bot API stand-in with a chat page (see `server.TelegramStandIn`)."""

from sandbox.telegram.driver import Button, SentMessage
from sandbox.telegram.faults import Failures, Fault
from sandbox.telegram.server import TelegramStandIn

__all__ = ["Button", "Failures", "Fault", "SentMessage", "TelegramStandIn"]
