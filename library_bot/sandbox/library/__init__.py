"""The library services stand-in: access service (both flows) and data platform v3."""

from library_bot.sandbox.library.data import PatronData, TestPatron
from library_bot.sandbox.library.faults import Faults
from library_bot.sandbox.library.server import LibrarySandbox, SandboxUrls

__all__ = ["Faults", "LibrarySandbox", "PatronData", "SandboxUrls", "TestPatron"]
