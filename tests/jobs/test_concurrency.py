"""Two sweepers on one PostgreSQL database: every patron gets their digest exactly once."""

from __future__ import annotations

import asyncio

import pytest

from bot.jobs.sweep import sweep
from bot.services import Services
from bot.telegram.deliver import TelegramDeliverer
from storage.store import Store
from tests.jobs.conftest import Rig

pytestmark = pytest.mark.postgres


async def test_two_sweepers_send_every_digest_exactly_once(
    rig: Rig, postgres_url: str, store_keys: list[bytes]
) -> None:
    first = await Store.open(postgres_url, store_keys)
    second = await Store.open(postgres_url, store_keys)
    try:
        patrons = rig.sandbox.add_patrons(40, due_every=1)
        chats = list(range(900, 900 + len(patrons)))
        for chat_id, patron in zip(chats, patrons, strict=True):
            rig.telegram.add_chat(chat_id)
            token = rig.sandbox.issue_token(patron.user_id)
            code = await first.create_pending_link(chat_id, token, None, {})
            assert await first.complete_link(chat_id, code) is not None

        reports = await asyncio.gather(
            *(
                sweep(
                    store=store,
                    library=rig.library,
                    deliverer=TelegramDeliverer(
                        rig.bot, Services(rig.settings, store, rig.library)
                    ),
                    settings=rig.settings,
                    today=rig.sandbox.today,
                    worker=name,
                    concurrency=3,
                    batch_size=4,
                )
                for name, store in (("one", first), ("two", second))
            )
        )
    finally:
        await first.close()
        await second.close()

    assert [len(rig.telegram.sent(chat_id)) for chat_id in chats] == [1] * len(chats)
    assert sum(report.messages for report in reports) == len(chats)
    assert all(report.patrons > 0 for report in reports)  # both took part
    assert not any(report.failures for report in reports)
