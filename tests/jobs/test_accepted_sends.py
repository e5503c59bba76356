"""A reminder the Bot API accepted (HTTP 200, `ok: true`) is sent, even if the message it
returned cannot be parsed: it is marked sent and no later sweep sends it again."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.telegram.botapi import build_bot
from tests.fixtures.patrons import JONAS
from tests.jobs.conftest import Rig

LEASE = timedelta(minutes=5)


async def test_a_garbled_answer_still_marks_the_reminder_sent(rig: Rig) -> None:
    await rig.connect(501, JONAS)
    rig.telegram.failures.garble("sendMessage", times=10)
    with pytest.raises(KeyError):  # what a stock PTB bot makes of such an answer
        await rig.bot.send_message(501, "probe")
    sent_before = len(rig.telegram.sent(501))

    async with build_bot(rig.settings) as bot:  # the bot `run` and `remind --once` send with
        report = await rig.sweep(bot=bot)

    assert report.patrons == 1 and report.messages == 1 and not report.failures
    assert len(rig.telegram.sent(501)) == sent_before + 1
    # Finished for today: neither the retry sweeps nor a second run send it again.
    assert await rig.store.claim_sweep_batch(rig.sandbox.today, "probe", 50, LEASE) == []
    async with build_bot(rig.settings) as bot:
        assert (await rig.sweep(bot=bot)).messages == 0
    assert len(rig.telegram.sent(501)) == sent_before + 1
