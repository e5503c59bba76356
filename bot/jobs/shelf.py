"""The shelf watches' check: one `/v3/holdingsitems` call per library and 20 titles, across every
watcher, and a ping for each watch whose branch now has a copy on the shelf.

A watch fires once: it is claimed before its ping is sent and deleted once sent; a send that
fails releases it to the next check, and a process that dies mid-send leaves a claim that
expires (`storage.watches.CLAIM_LEASE`). A watch older than `WATCH_DAYS` ends with a last
message. Run by `remind --once` and a few times a day while libraries are open (`schedule`).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from bot.actions.outbox import Delivery, Offers, Outcome, ShelfOffer
from bot.library.client import MAX_WORK_PIDS
from bot.library.errors import LibraryError
from bot.texts import pick_language, t

if TYPE_CHECKING:
    from bot.jobs.delivery import Deliverer
    from bot.library.client import LibraryClient
    from bot.library.models import Copy
    from storage.store import Store
    from storage.watches import Watch

log = logging.getLogger(__name__)

# A watch that has not fired in this long ends, with a last message.
WATCH_DAYS = 60


@dataclass
class ShelfReport:
    watches: int = 0
    calls: int = 0
    fired: int = 0
    ended: int = 0
    failed: int = 0


async def check_watches(
    store: Store, library: LibraryClient, deliverer: Deliverer[Any]
) -> ShelfReport:
    """Check every watch once; what happened, counted (told through `deliverer`)."""
    report = ShelfReport()
    watches = await store.watches.to_check()
    report.watches = len(watches)
    limit = datetime.now(UTC) - timedelta(days=WATCH_DAYS)
    live: list[Watch] = []
    for watch in watches:
        if watch.created_at < limit:
            if await _tell(store, deliverer, watch, "shelf.watch_expired", None):
                report.ended += 1
        else:
            live.append(watch)
    by_library: dict[str, list[Watch]] = defaultdict(list)
    for watch in live:
        by_library[watch.agency].append(watch)
    for agency, waiting in by_library.items():
        pids = list(dict.fromkeys(watch.pid for watch in waiting))
        # One call per 20 titles, each its own, so one failure leaves the others checked.
        for start in range(0, len(pids), MAX_WORK_PIDS):
            chunk = pids[start : start + MAX_WORK_PIDS]
            report.calls += 1
            try:
                holdings = await library.holdings_public(agency, chunk)
            except LibraryError as exc:
                log.warning("shelf watches of %s not checked: %s", agency, type(exc).__name__)
                report.failed += 1
                continue
            copies = {h.pid: h.holdingsitems for h in holdings}
            for watch in waiting:
                if watch.pid not in chunk:
                    continue
                home = [c for c in copies.get(watch.pid, []) if c.branch == watch.branch]
                shelved = next((c for c in home if c.on_shelf), None)
                if shelved is not None and await _tell(
                    store, deliverer, watch, "shelf.watch_fired", shelved
                ):
                    report.fired += 1
    if not report.watches:
        return report  # nothing to say: a quiet log when nobody waits
    log.info(
        "shelf watches: %d checked with %d calls, %d fired, %d ended",
        report.watches,
        report.calls,
        report.fired,
        report.ended,
    )
    return report


async def _tell(
    store: Store, deliverer: Deliverer[Any], watch: Watch, key: str, copy: Copy | None
) -> bool:
    """Claim the watch, send its message, and end it; False when another check had it or the
    message could not be sent (then it waits for the next check)."""
    if not await store.watches.claim(watch):
        return False
    chat = await store.chats.chat(watch.chat_id)
    lang = pick_language(chat.language, chat.telegram_language)
    text = t(lang, key, title=watch.title, branch=watch.branch, pid=watch.pid)
    offers: tuple[ShelfOffer, ...] = ()
    if copy is not None:
        if copy.place:
            text += "\n" + t(lang, "shelf.watch_place", place=" › ".join(copy.place))
        offers = (ShelfOffer(watch.pid, watch.number, await _cid(store, watch)),)
    try:
        keyboard = None
        if offers:
            [keyboard] = await deliverer.keyboards([Offers(watch.chat_id, lang, offers)])
        delivery = await deliverer.send(watch.chat_id, text, keyboard)
    except TimeoutError as exc:
        delivery = Delivery(Outcome.FAILED, exc)
    if not delivery.sent:
        log.warning("shelf watch not told: %s", type(delivery.error).__name__)
        await store.watches.release(watch)
        return False
    await store.watches.done(watch)
    return True


async def _cid(store: Store, watch: Watch) -> str | None:
    """The identity of the watch's card, so its Order button acts on that card only (a lapsed
    card's button asks for its login)."""
    cards = await store.cards.of_chat(watch.chat_id, lapsed=True)
    return next((card.card_id for card in cards if card.number == watch.number), None)
