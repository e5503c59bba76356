"""The library services stand-in: access service (both flows) and data platform v3."""

from sandbox.library.data import PatronData, TestPatron
from sandbox.library.faults import Faults
from sandbox.library.server import LibrarySandbox, SandboxUrls

__all__ = ["Faults", "LibrarySandbox", "PatronData", "SandboxUrls", "TestPatron"]
