"""A chat's updates one at a time, lowest `update_id` first; other chats alongside
(`bot.telegram.turns`, within one process)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from telegram import Chat, Message, Update

from bot.telegram.ratelimit import FairUpdateProcessor
from bot.telegram.turns import InOrderUpdateProcessor

CHAT, OTHER = 8101, 8102


async def _settle() -> None:
    """Let every task run as far as it can without waiting on anything (no I/O here)."""
    for _ in range(50):
        await asyncio.sleep(0)


def _update(update_id: int, chat_id: int) -> Update:
    chat = Chat(id=chat_id, type=Chat.PRIVATE)
    message = Message(message_id=update_id, date=datetime.now(UTC), chat=chat, text="/help")
    return Update(update_id=update_id, message=message)


async def test_a_chats_updates_wait_for_each_other_lowest_first() -> None:
    processor = InOrderUpdateProcessor(FairUpdateProcessor(64))
    started: list[int] = []
    gates = {number: asyncio.Event() for number in (10, 11, 12, 20)}

    async def handle(number: int) -> None:
        started.append(number)
        await gates[number].wait()

    def submit(number: int, chat_id: int) -> asyncio.Task[None]:
        return asyncio.create_task(
            processor.process_update(_update(number, chat_id), handle(number))
        )

    first = submit(10, CHAT)
    await _settle()
    later = [submit(12, CHAT), submit(11, CHAT)]  # 12 reached the process before 11
    other = submit(20, OTHER)
    await _settle()
    assert started == [10, 20]  # the other chat does not wait; this one does
    gates[10].set()
    await first
    await _settle()
    assert started == [10, 20, 11]  # the lower number first, not the first to arrive
    gates[11].set()
    gates[12].set()
    gates[20].set()
    await asyncio.gather(*later, other)
    assert started == [10, 20, 11, 12]


async def test_an_update_cancelled_while_waiting_passes_its_turn_on() -> None:
    processor = InOrderUpdateProcessor(FairUpdateProcessor(64))
    done: list[int] = []
    gate = asyncio.Event()

    async def handle(number: int) -> None:
        if number == 30:
            await gate.wait()
        done.append(number)

    first = asyncio.create_task(processor.process_update(_update(30, CHAT), handle(30)))
    await _settle()
    waiting = asyncio.create_task(processor.process_update(_update(31, CHAT), handle(31)))
    last = asyncio.create_task(processor.process_update(_update(32, CHAT), handle(32)))
    await _settle()
    waiting.cancel()
    gate.set()
    await asyncio.gather(first, last)
    assert done == [30, 32]  # 31 never ran, and 32 was not held up by it
    assert waiting.cancelled()
