"""One chat's updates handled one at a time and in order, on any process (issue 36, part 2).

Within a process, a chat's updates wait for each other, lowest `update_id` first (Telegram
numbers a bot's updates in increasing order), while other chats run in parallel. Processes
sharing one PostgreSQL database (webhook mode behind a load balancer) share the chats' turns
through it (`storage.turns`, handed in by the runtime as `SharedTurns`): the webhook takes an
update's turn before it answers 200, and
the update is handled once no lower update of its chat is still taken. Telegram posts a chat's
next update only after the previous one's answer, so that update's turn is already taken
wherever it went: a chat's updates are handled in the order Telegram numbered them. Updates
posted at once (a Telegram that did not wait) are handled one at a time, the lower first if
its turn was taken before the higher one started.

A turn is held while its process lives (renewed every `HOLD` / 3): a process that dies holds
up its chats for at most `HOLD`. While the database fails, updates go in this process's order
only, rather than not at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
from collections.abc import Awaitable, Coroutine, Iterable
from datetime import timedelta
from typing import Any, Protocol

from telegram import Update
from telegram.ext import BaseUpdateProcessor

log = logging.getLogger(__name__)

HOLD = timedelta(seconds=30)
# Waiting for another process to hand a chat's turn back: first this long, doubling to the cap.
WAIT_FIRST = 0.005
WAIT_CAP = 0.1


Turn = tuple[int, int]  # (chat_id, update_id)


class SharedTurns(Protocol):
    """The chats' turns, shared with the bot's other processes (`storage.turns`, handed in by
    the runtime)."""

    async def take(self, chat_id: int, update_id: int, worker: str, hold: timedelta) -> bool: ...

    async def is_next(self, chat_id: int, update_id: int) -> bool: ...

    async def hand_back(self, turns: Iterable[Turn], worker: str) -> None: ...

    async def renew(self, worker: str, hold: timedelta) -> None: ...

    async def leave(self, worker: str) -> None: ...


def turn_of(update: object) -> Turn | None:
    """The update's chat and number, when it belongs to a chat (inline queries do not)."""
    if not isinstance(update, Update):
        return None
    chat = update.effective_chat
    return None if chat is None else (chat.id, update.update_id)


class _Chat:
    """A chat's updates in this process: one at a time, the lowest number first."""

    def __init__(self) -> None:
        self.busy = False
        self.users = 0
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()  # ties (a repeated number) in arrival order

    async def enter(self, number: int) -> None:
        if not self.busy:
            self.busy = True
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (number, next(self._order), turn)
        heapq.heappush(self._waiting, entry)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.leave()  # given the turn as it was cancelled: pass it on
            else:
                self._waiting.remove(entry)
                heapq.heapify(self._waiting)
            raise

    def leave(self) -> None:
        while self._waiting:
            _, _, turn = heapq.heappop(self._waiting)
            if not turn.done():
                turn.set_result(None)
                return  # still busy: the next one has it
        self.busy = False


class InOrderUpdateProcessor(BaseUpdateProcessor):
    """PTB's update processor: a chat's updates one at a time, in order, before `inner` (which
    bounds how many run at once); other updates go straight to `inner`.

    With `turns` (PostgreSQL, webhook mode), the chats' turns are shared with the other
    processes as `worker`; `arrive` takes an update's turn as the webhook receives it.
    """

    def __init__(
        self,
        inner: BaseUpdateProcessor,
        turns: SharedTurns | None = None,
        worker: str = "",
        *,
        hold: timedelta = HOLD,
    ) -> None:
        # PTB's semaphore admits everything; `inner` does the limiting.
        super().__init__(2**31 - 1)
        self._inner = inner
        self._turns = turns
        self._worker = worker
        self._hold = hold
        self._chats: dict[int, _Chat] = {}
        self._taken: set[Turn] = set()  # turns this process holds in the database
        self._unreturned: set[Turn] = set()  # handled, but the database did not hear it yet
        self._beat: asyncio.Task[None] | None = None

    async def arrive(self, update: Update) -> bool:
        """Take the update's turn, before the webhook answers Telegram. False: a process has
        it already (Telegram repeated a delivery), and it is dropped here."""
        key = turn_of(update)
        if self._turns is None or key is None:
            return True
        try:
            taken = await self._turns.take(*key, self._worker, self._hold)
        except Exception:  # the database's trouble is told once (Availability): go on
            log.debug("chat turns: could not take a turn", exc_info=True)
            return True
        if taken:
            self._taken.add(key)
        return taken

    async def initialize(self) -> None:
        await self._inner.initialize()
        if self._turns is not None and self._beat is None:
            self._beat = asyncio.create_task(self._keep(self._turns))

    async def shutdown(self) -> None:
        if self._beat is not None:
            self._beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._beat
            self._beat = None
        if self._turns is not None:
            with contextlib.suppress(Exception):  # held until they run out, then
                await self._turns.leave(self._worker)
        await self._inner.shutdown()

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        key = turn_of(update)
        if key is None:
            await self._inner.do_process_update(update, coroutine)
            return
        chat_id, number = key
        chat = self._chats.get(chat_id) or _Chat()
        self._chats[chat_id] = chat
        chat.users += 1
        started = entered = False
        try:
            await chat.enter(number)
            entered = True
            try:
                if await self._shared_turn(key):
                    started = True
                    await self._inner.do_process_update(update, coroutine)
            finally:
                await self._hand_back(key)
                chat.leave()
        finally:
            if not started and isinstance(coroutine, Coroutine):
                coroutine.close()  # dropped, or cancelled while waiting its turn: never awaited
            if not entered and key in self._taken:  # cancelled in the queue: at the next beat
                self._taken.discard(key)
                self._unreturned.add(key)
            chat.users -= 1
            if not chat.users:
                del self._chats[chat_id]

    async def _shared_turn(self, key: Turn) -> bool:
        """Wait until no lower update of the chat is taken by another process; False when
        another process has this very update."""
        turns = self._turns
        if turns is None:
            return True
        if key not in self._taken:  # not through the webhook: take it now
            try:
                if not await turns.take(*key, self._worker, self._hold):
                    return False
            except Exception:
                log.debug("chat turns: could not take a turn", exc_info=True)
                return True
            self._taken.add(key)
        delay = WAIT_FIRST
        while True:
            try:
                if await turns.is_next(*key):
                    return True
            except Exception:  # go on in this process's order rather than hold the chat up
                log.debug("chat turns: could not read the chat's turn", exc_info=True)
                return True
            await asyncio.sleep(delay)
            delay = min(delay * 2, WAIT_CAP)

    async def _hand_back(self, key: Turn) -> None:
        if self._turns is None or key not in self._taken:
            return
        self._taken.discard(key)
        try:
            await self._turns.hand_back([key], self._worker)
        except Exception:
            self._unreturned.add(key)  # at the next beat

    async def _keep(self, turns: SharedTurns) -> None:
        """The heartbeat: hand back what could not be, and renew the turns held."""
        every = self._hold.total_seconds() / 3
        while True:
            await asyncio.sleep(every)
            try:
                if self._unreturned:
                    pending = set(self._unreturned)
                    await turns.hand_back(pending, self._worker)
                    self._unreturned -= pending
                await turns.renew(self._worker, self._hold)
            except Exception:  # the next beat tries again; the turns have room for it
                log.debug("chat turns: could not renew", exc_info=True)
