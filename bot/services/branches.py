"""Pick-up branch names from `/v3/libraries`, for /holds, /order and the reminder digest alike."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.library.errors import LibraryError
from bot.rules.isil import branch_key, fold_name, match_branch

if TYPE_CHECKING:
    from bot.library.client import LibraryClient
    from bot.library.deadline import Deadline
    from bot.library.models import Branch, LibraryPage, OpeningDay

log = logging.getLogger(__name__)

BRANCH_NAMES_TTL = 3600.0


@dataclass(frozen=True)
class BranchCheck:
    """What `/v3/libraries` says about a pick-up branch: known, and whether it takes pick-ups."""

    known: bool | None  # None: could not be checked (the platform failed)
    pickup: bool = True
    catalogue: str | None = None


class BranchNames:
    """Pick-up branch names (and catalogues) from `/v3/libraries`, asked by the branch's agency
    with the anonymous token and remembered for `ttl` seconds."""

    def __init__(self, ttl: float = BRANCH_NAMES_TTL) -> None:
        self._ttl = ttl
        self._names: dict[str, tuple[str, float]] = {}
        self._catalogues: dict[str, str] = {}
        self._libraries: dict[str, tuple[str, float]] = {}  # agency -> the library's name
        self._sites: dict[str, str] = {}
        self._hours: dict[str, tuple[str, ...]] = {}
        self._closed: set[str] = set()
        self._agency_of: dict[str, str] = {}  # branch -> its library's agency, as listed
        self._pickup: dict[str, tuple[list[Branch], float]] = {}
        self._pages: dict[str, tuple[list[LibraryPage], float]] = {}  # agency -> its pages
        # Every library's and branch's name, by agency: what a patron without a card may type.
        self._every: tuple[list[tuple[str, str]], float] | None = None

    def opening_hours(self, branch_id: str, lang: str) -> str | None:
        """The branch's opening hours as the library publishes them (free text, no schedule
        to read today's from): Danish, the first, for a Danish patron; the English, when the
        library publishes one, for every other language (nearer a Ukrainian's than Danish)."""
        texts = self._hours.get(branch_key(branch_id), ())
        if not texts:
            return None
        return texts[1] if lang != "da" and len(texts) > 1 else texts[0]

    async def hours_on(
        self, library: LibraryClient, branch_id: str, day: dt.date, deadline: Deadline
    ) -> list[OpeningDay] | None:
        """The branch's opening hours on `day`, from the dated `opening_hours` of its page on
        the library's site (`/v3/library`); None when unknown: no page matches the branch's
        name, the page lists no hours that day, or the call failed or was slow (at most half
        of the time left: the weekly free text is shown instead)."""
        name = (await self.lookup(library, [branch_id], deadline)).get(branch_id)
        if not name:
            return None
        agency = self._agency_of.get(branch_key(branch_id))
        if agency is None:
            return None
        cached = self._pages.get(agency)
        if cached is None or cached[1] < time.monotonic():
            try:
                async with asyncio.timeout(deadline.remaining() / 2):
                    pages = await library.library_public(agency)
            except (LibraryError, TimeoutError) as exc:
                log.warning("library pages unavailable: %s", type(exc).__name__)
                return None
            cached = (pages, time.monotonic() + self._ttl)
            self._pages[agency] = cached
        wanted = fold_name(name)
        for page in cached[0]:
            if fold_name(page.title or "") == wanted:
                return page.hours_on(day) or None
        return None

    def agency_of(self, branch_id: str) -> str | None:
        """The library (ISIL) `/v3/libraries` listed the branch under, once it was asked."""
        return self._agency_of.get(branch_key(branch_id))

    def closed(self, branch_id: str) -> bool:
        """Whether `/v3/libraries` said the branch is temporarily closed."""
        return branch_key(branch_id) in self._closed

    def catalogue(self, branch_id: str) -> str | None:
        """The branch's own catalogue, as `/v3/libraries` named it (`branchCatalogueUrl`)."""
        return self._catalogues.get(branch_key(branch_id))

    def website(self, branch_id: str) -> str | None:
        """The branch's web site, as `/v3/libraries` named it (`branchWebsiteUrl`)."""
        return self._sites.get(branch_key(branch_id))

    async def library_name(
        self, library: LibraryClient, agency: str, deadline: Deadline
    ) -> str | None:
        """The name of the library `agency` is (`agencyName`), not that of its main branch."""
        key = branch_key(agency)
        found = self._libraries.get(key)
        if found is None or found[1] < time.monotonic():
            await self._fetch(library, deadline, agency_ids=[key])
            found = self._libraries.get(key)
        return found[0] if found else None

    async def libraries_named(
        self, library: LibraryClient, text: str, deadline: Deadline
    ) -> list[tuple[str, str]]:
        """The libraries (agency, name) that `text` names, by the library's name or one of its
        branches' ("Aarhus", "Vesterbro"), from every library `/v3/libraries` lists; raises
        `LibraryError` when that list cannot be read."""
        every = self._every
        if every is None or every[1] < time.monotonic():
            branches = await deadline.run(library.every_library_public())
            names: list[tuple[str, str]] = []
            expires = time.monotonic() + self._ttl
            for branch in branches:
                if not branch.agency_id:
                    continue
                agency = branch_key(branch.agency_id)
                if branch.agency_name:
                    names.append((agency, branch.agency_name))
                    self._libraries[agency] = (branch.agency_name, expires)
                if branch.branch_name:
                    names.append((agency, branch.branch_name))
            every = self._every = (names, expires)
        found = match_branch(text, every[0])
        named = {agency: self._libraries.get(agency, (agency, 0.0))[0] for agency in found}
        return sorted(named.items(), key=lambda item: fold_name(item[1]))

    def known(self, branch_id: str | None) -> str | None:
        """The remembered name of `branch_id`, if still fresh."""
        if branch_id is None:
            return None
        found = self._names.get(branch_key(branch_id))
        if found is None or found[1] < time.monotonic():
            return None
        return found[0]

    async def _fetch(
        self,
        library: LibraryClient,
        deadline: Deadline,
        *,
        agency_ids: Iterable[str] = (),
        branch_ids: Iterable[str] = (),
    ) -> list[Branch] | None:
        """The branches `branch_ids`, or those of the libraries `agency_ids`, as
        `/v3/libraries` lists them (its `branchIds` and `agencyIds` filters), remembered; None
        when the call failed.

        Names are decoration: a failing or slow call only means ISIL ids are shown, so it gets
        at most half of the time left.
        """
        try:
            async with asyncio.timeout(deadline.remaining() / 2):
                branches = await library.libraries_public(
                    agency_ids=sorted(agency_ids), branch_ids=sorted(branch_ids)
                )
        except (LibraryError, TimeoutError) as exc:
            log.warning("branch names unavailable: %s", type(exc).__name__)
            return None
        expires = time.monotonic() + self._ttl
        for branch in branches:
            key = branch_key(branch.branch_id)
            if branch.branch_name:
                self._names[key] = (branch.branch_name, expires)
            if branch.branch_catalogue_url:
                self._catalogues[key] = branch.branch_catalogue_url
            if branch.branch_website_url:
                self._sites[key] = branch.branch_website_url
            if branch.agency_id:
                self._agency_of[key] = branch_key(branch.agency_id)
                if branch.agency_name:
                    self._libraries[branch_key(branch.agency_id)] = (branch.agency_name, expires)
            self._hours[key] = tuple(text.strip() for text in branch.opening_hours if text.strip())
            closed = (branch.temporarily_closed or "").strip().lower() in ("1", "true")
            (self._closed.add if closed else self._closed.discard)(key)
        return branches

    async def check(
        self, library: LibraryClient, branch_id: str, deadline: Deadline
    ) -> BranchCheck:
        """Ask `/v3/libraries` for the branch: does it exist, take pick-ups?"""
        isil = branch_key(branch_id)
        branches = await self._fetch(library, deadline, branch_ids=[isil])
        if branches is None:
            return BranchCheck(None)
        for branch in branches:
            if branch_key(branch.branch_id) == isil:
                return BranchCheck(True, branch.allows_pickup, branch.branch_catalogue_url)
        return BranchCheck(False)

    async def lookup(
        self, library: LibraryClient, ids: Iterable[str | None], deadline: Deadline
    ) -> dict[str, str]:
        """Names for `ids` (keyed as given and in ISIL form); unknown ones are left out."""
        wanted = {i for i in ids if i}
        missing = {branch_key(i) for i in wanted if self.known(i) is None}
        if missing:
            await self._fetch(library, deadline, branch_ids=missing)
        names: dict[str, str] = {}
        for branch_id in wanted:
            name = self.known(branch_id)
            if name is not None:
                names[branch_id] = name
                names[branch_key(branch_id)] = name
        return names

    async def pickup_branches(
        self, library: LibraryClient, agency: str, deadline: Deadline
    ) -> list[Branch] | None:
        """The branches of `agency`'s library where patrons may pick up (`pickupAllowed`), by
        name; None when `/v3/libraries` could not be asked."""
        key = branch_key(agency)
        cached = self._pickup.get(key)
        if cached is not None and cached[1] >= time.monotonic():
            return cached[0]
        branches = await self._fetch(library, deadline, agency_ids=[key])
        if branches is None:
            return None
        unique = {branch_key(b.branch_id): b for b in branches if b.allows_pickup and b.branch_name}
        found = sorted(unique.values(), key=lambda b: fold_name(b.branch_name or ""))
        self._pickup[key] = (found, time.monotonic() + self._ttl)
        return found
