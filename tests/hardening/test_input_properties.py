"""Arbitrary input through the real bot: every command answers exactly once with a message
Telegram accepts (the stand-in validates HTML and length), and the OAuth callback answers any
query string with a page, never a 500, and never spends a token call on garbage.
"""

from __future__ import annotations

import asyncio
from typing import TypeVar
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.telegram.handlers import COMMANDS as CONTRACT_COMMANDS
from tests.fixtures.bot import BotHarness
from tests.fixtures.patrons import KAREN

T = TypeVar("T")
# Every contract command, and one that does not exist.
COMMANDS = [f"/{name}" for name in CONTRACT_COMMANDS] + ["/nonsense"]
# Telegram delivers no NUL and at most 4096 characters; everything else can arrive.
arguments = st.one_of(
    st.just(""),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=80),
    st.text(st.sampled_from("\t\u200b\u202e\u0301\ufeff<>&\"'`*_[]{}|\\;=/:"), max_size=40),
    st.integers(min_value=100, max_value=4000).map(lambda n: "ø" * n),
    st.sampled_from(["870970-basis:29318871 DK-710100", "' OR 1=1 --", "<b>x</b>", "a" * 4000]),
)
EXAMPLES = 40


def draw(strategy: st.SearchStrategy[T], count: int) -> list[T]:
    """`count` examples from `strategy`, for checks that must await a running bot.

    Hypothesis cannot drive a coroutine inside a running event loop, so it generates the inputs
    (edge cases first) and the test replays them; a failure names the input that broke.
    """
    drawn: list[T] = []

    @settings(
        max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(strategy)
    def collect(example: T) -> None:
        drawn.append(example)

    collect()
    return drawn


async def _quiet_count(bot: BotHarness, chat: int, before: int) -> int:
    """How many new messages the chat holds once the bot has answered and gone quiet."""
    async with asyncio.timeout(10):
        while True:
            if len(bot.telegram.sent(chat)) > before:
                break
            await asyncio.sleep(0.01)
    await asyncio.sleep(0.15)
    return len(bot.telegram.sent(chat)) - before


async def test_every_command_with_any_arguments_answers_once(bot: BotHarness) -> None:
    connected, anonymous = 600, 601
    await bot.connect(connected, KAREN)
    bot.add_chat(anonymous, language_code="en")
    errors_before = bot.telegram.calls["sendMessage"]

    cases = st.tuples(st.sampled_from(COMMANDS), arguments, st.sampled_from([connected, anonymous]))
    for command, argument, chat in draw(cases, EXAMPLES):
        text = f"{command} {argument}".strip()[:4096]
        if command in ("/logout", "/forget"):
            text = command  # arguments are ignored; keep the patron connected for the rest
        before = len(bot.telegram.sent(chat))
        await bot.telegram.send_text(chat, text)
        new = await _quiet_count(bot, chat, before)
        # One reply per command; /search with results may add nothing more than one message.
        assert new == 1, (text, [m.text for m in bot.telegram.sent(chat)[before:]])
        assert not any(
            "Noget gik galt" in m.text or "went wrong" in m.text
            for m in bot.telegram.sent(chat)[before:]
        ), text

    assert bot.telegram.calls["sendMessage"] > errors_before


async def test_the_callback_answers_any_query_string_with_a_page(bot: BotHarness) -> None:
    callback = f"{bot.info.web_url}/oauth/callback"
    keys = st.sampled_from(["state", "code", "error", "error_description", "x", "", "state[]"])
    values = st.text(max_size=300)

    cases = st.tuples(st.lists(st.tuples(keys, values), max_size=5), st.booleans())
    for pairs, raw in draw(cases, 80):
        if raw:  # bytes as a browser might send them, percent-encoding and all
            query = "&".join(f"{quote(k, safe='')}={quote(v, safe='%')}" for k, v in pairs)
            page = await bot.http.get(f"{callback}?{query}")
        else:
            page = await bot.http.get(callback, params=pairs)
        assert 400 <= page.status_code < 500, (pairs, page.status_code)
        assert "<html" in page.text

    assert bot.sandbox.calls["oauth POST /oauth/token"] == 0
