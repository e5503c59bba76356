"""The sweep outside `run` (`remind --once`) honours the proxy settings as `run` does."""

from __future__ import annotations

from bot.jobs.sweep import sweep
from bot.library.client import LibraryClient
from bot.services import Services
from bot.telegram.botapi import build_bot
from bot.telegram.deliver import TelegramDeliverer
from tests.fixtures.patrons import JONAS
from tests.fixtures.proxy import ForwardProxy
from tests.jobs.conftest import Rig


async def test_remind_sweep_goes_through_the_proxy(rig: Rig, forward_proxy: ForwardProxy) -> None:
    await rig.connect(601, JONAS)
    settings = rig.settings.model_copy(update={"HTTP_PROXY": forward_proxy.url})
    async with LibraryClient.from_settings(settings) as library, build_bot(settings) as bot:
        deliverer = TelegramDeliverer(bot, Services(settings, rig.store, library))
        report = await sweep(
            store=rig.store,
            library=library,
            deliverer=deliverer,
            settings=settings,
            today=rig.sandbox.today,
        )
    assert report.messages == 1 and rig.telegram.sent(601)
    sends = sum(
        n for path, n in forward_proxy.to(rig.telegram.url).items() if "sendMessage" in path
    )
    assert sends == rig.telegram.calls["sendMessage"] == 1
    users = forward_proxy.to(rig.sandbox.urls.platform)["/v3/user"]
    assert users == rig.sandbox.calls["platform GET /v3/user"] == 1
