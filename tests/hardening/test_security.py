"""The threat model's checks that no other test covers (see SECURITY.md)."""

from __future__ import annotations

import asyncio

import httpx

from tests.fixtures.bot import BotFactory, BotHarness
from tests.fixtures.chat import send
from tests.fixtures.patrons import OLE, PID
from tests.fixtures.telegram import forged_tap

WEBHOOK_SECRET = "hardening-webhook-secret"
HEADER = "X-Telegram-Bot-Api-Secret-Token"
VICTIM, ATTACKER = 700, 701
FLOOD_CONNECTIONS = 32
SERVED_WITHIN = 60.0


async def test_tampered_or_foreign_button_data_does_nothing(bot_factory: BotFactory) -> None:
    bot = await bot_factory(WEBHOOK_SECRET=WEBHOOK_SECRET)
    await bot.connect(VICTIM, OLE)
    await bot.connect(ATTACKER, OLE)
    [prompt] = await send(bot, VICTIM, f"/order {PID} DK-710100")
    victims_ref = prompt.button("Ja, bestil").callback_data
    assert victims_ref is not None
    ref_id = victims_ref.partition(":")[2]
    forged = [
        victims_ref,  # another chat's button, replayed from the attacker's chat
        "order:" + "A" * len(ref_id),  # a guessed id
        "order:",
        "order:" + "x" * 300,
        "renewall:" + ref_id,  # the right id under another action
        "\x00\ufffd",
    ]
    url = f"{bot.info.web_url}/telegram/webhook"
    for number, data in enumerate(forged, start=900_100):
        update = forged_tap(number, ATTACKER, data, message_id=prompt.message_id)
        response = await bot.http.post(url, json=update, headers={HEADER: WEBHOOK_SECRET})
        assert response.status_code == 200
    await asyncio.sleep(1.0)
    assert bot.sandbox.calls["platform GET /v3/order"] == 0
    assert bot.sandbox.calls["platform GET /v3/renew"] == 0
    ref = await bot.store.callbacks.callback(ref_id, VICTIM)
    assert ref is not None and ref.used_at is None  # the victim's button still works for them
    assert await bot.store.cards.get(VICTIM) is not None


async def test_a_flood_of_bogus_callbacks_is_cheap_and_harmless(bot: BotHarness) -> None:
    """Denial of service through the callback: garbage costs no token call and no row, and a
    patron is served meanwhile. (How fast is a benchmark's business, not a test's.)

    The flood comes over a pool of its own, as an attacker's many connections would, and waits
    for the pool as long as it takes: on a busy machine the test is slower, never failing.
    """
    callback = f"{bot.info.web_url}/oauth/callback"
    bot.add_chat(702)
    limits = httpx.Limits(max_connections=FLOOD_CONNECTIONS)
    timeout = httpx.Timeout(30.0, pool=None)

    async def bogus(attacker: httpx.AsyncClient, n: int) -> int:
        params = {"state": f"forged-{n}", "code": f"c{n}"} if n % 2 else {"state": "x" * 5000}
        page = await attacker.get(callback, params=params)
        return page.status_code

    async with httpx.AsyncClient(limits=limits, timeout=timeout) as attacker:
        flood = asyncio.gather(*(bogus(attacker, n) for n in range(400)))
        # A patron is served meanwhile (the generous wait is for a busy machine).
        reply = await send(bot, 702, "/help", timeout=SERVED_WITHIN)
        statuses = await flood
    assert all(status in (400, 410) for status in statuses)
    assert reply and "/loans" in reply[0].text
    assert bot.sandbox.calls["oauth POST /oauth/token"] == 0
    assert await bot.store.cards.count() == 0
    health = await bot.http.get(f"{bot.info.web_url}/health")
    assert health.status_code == 200
