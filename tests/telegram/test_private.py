"""Private by design: accounts only in private chats, buttons bound to their user, edits that
re-run nothing, a cap on login states, and a command's buttons stored in one transaction.

All against the real bot, the Telegram stand-in (groups, members, edits) and the sandbox.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from sqlalchemy import event, text
from sqlalchemy.engine import Engine

from bot.telegram.handlers import COMMANDS
from storage.store import LIVE_LOGIN_STATES
from tests.fixtures.bot import DEEP_LINK, BotHarness
from tests.fixtures.chat import answers, send
from tests.fixtures.groups import ALICE, BOB, GROUP, group_with_karen
from tests.fixtures.patrons import KAREN
from tests.fixtures.telegram import TEST_BOT_TOKEN, TEST_BOT_USERNAME

OTHER_GROUP = -1001234567891
QUIET = 0.4
ACCOUNT_COMMANDS = [
    "/login",
    "/start ABCD2345",
    "/loans",
    "/holds",
    "/debt",
    "/order 870970-basis:29318871",
    "/renew",
    "/reminders off",
    "/logout",
    "/forget",
    "/search kongens fald",
    "/nonsense",
]


async def _rows(bot: BotHarness, sql: str) -> list[tuple[Any, ...]]:
    return await bot.store.database.run(
        lambda conn: [tuple(row) for row in conn.execute(text(sql)).all()]
    )


async def _dump(bot: BotHarness) -> str:
    tables = ("chat", "login_state", "pending_link", "card", "callback_ref", "reminder_log")
    return "\n".join([str(await _rows(bot, f"SELECT * FROM {table}")) for table in tables])  # noqa: S608


async def _until(done: Callable[[], bool]) -> None:
    async with asyncio.timeout(10):
        while True:
            if done():
                return
            await asyncio.sleep(0.01)


async def _answer_of(bot: BotHarness, query_id: str) -> dict[str, Any]:
    await _until(lambda: query_id in bot.telegram.callback_answers)
    return bot.telegram.callback_answers[query_id]


async def test_group_account_commands_point_to_a_private_chat_and_touch_nothing(
    bot: BotHarness,
) -> None:
    await group_with_karen(bot)
    stored = await _dump(bot)
    platform = bot.sandbox.calls.copy()
    # Two groups, so that no group goes past its burst (then Telegram allows 20 a minute).
    bot.telegram.add_group(OTHER_GROUP, title="Reading circle")
    groups = (GROUP, OTHER_GROUP)
    for index, command in enumerate(ACCOUNT_COMMANDS):
        group = groups[index % 2]
        for member in (ALICE, BOB):
            before = len(bot.telegram.sent(group))
            await bot.telegram.send_text(group, command, user_id=member)
            await _until(lambda group=group, before=before: len(bot.telegram.sent(group)) > before)
            reply = bot.telegram.sent(group)[before]
            assert f"https://t.me/{TEST_BOT_USERNAME}" in reply.text, (command, reply.text)
            assert "🔒" in reply.text and "Kongens fald" not in reply.text
            assert reply.buttons[0][0].url == f"https://t.me/{TEST_BOT_USERNAME}"
    # One answer each: a second answer to any command would have shown up by now in the count
    # (one quiet wait for all of them, not one per command).
    await bot.settled(QUIET)
    assert sum(len(bot.telegram.sent(group)) for group in groups) == 2 * len(ACCOUNT_COMMANDS)
    # Nothing read from the platform, nothing written: no state, link, button or settings row.
    assert bot.sandbox.calls == platform
    assert await _dump(bot) == stored
    assert await bot.store.cards.get(ALICE) is not None  # Karen is still connected, privately


async def test_group_still_gets_start_help_and_other_bots_commands_are_left_alone(
    bot: BotHarness,
) -> None:
    await group_with_karen(bot)

    async def post() -> None:
        await bot.telegram.send_text(GROUP, "/help", user_id=BOB)
        await bot.telegram.send_text(GROUP, f"/start@{TEST_BOT_USERNAME}", user_id=BOB)
        await bot.telegram.send_text(GROUP, "/loans@some_other_bot", user_id=BOB)

    help_reply, start_reply = await answers(bot, GROUP, post, count=2)
    assert "/loans" in help_reply.text and "🔒" not in help_reply.text
    assert "🔒" not in start_reply.text
    # The private chat's commands are untouched by the guard.
    reply = await bot.send(ALICE, "/debt")
    assert "45.50" in reply.text


async def test_channel_posts_get_the_pointer(bot: BotHarness) -> None:
    channel = -1009876543210
    bot.telegram.add_group(channel, title="News", chat_type="channel")
    [reply] = await send(bot, channel, "/loans")
    assert "🔒" in reply.text and await _rows(bot, "SELECT * FROM login_state") == []


async def _post_with_button(bot: BotHarness, chat_id: int, data: str) -> int:
    """A message with one button in `chat_id`, as an earlier version of the bot sent it."""
    async with httpx.AsyncClient() as http:
        response = await http.post(
            f"{bot.telegram.url}/bot{TEST_BOT_TOKEN}/sendMessage",
            json={
                "chat_id": chat_id,
                "text": "Forny",
                "reply_markup": {"inline_keyboard": [[{"text": "Forny", "callback_data": data}]]},
            },
        )
    return int(response.json()["result"]["message_id"])


async def test_account_buttons_in_a_group_are_refused_and_not_claimed(bot: BotHarness) -> None:
    await group_with_karen(bot)
    [ref_id] = await bot.store.callbacks.put_callbacks(
        GROUP, [("renew", {"loan_id": "L1", "title": "x"})], user_id=ALICE
    )
    message_id = await _post_with_button(bot, GROUP, f"renew:{ref_id}")
    platform = bot.sandbox.calls.copy()
    for member in (ALICE, BOB):
        query_id = await bot.telegram.tap(GROUP, message_id, f"renew:{ref_id}", user_id=member)
        answer = await _answer_of(bot, query_id)
        assert f"t.me/{TEST_BOT_USERNAME}" in answer["text"] and "🔒" in answer["text"]
    await bot.settled(QUIET)
    assert bot.sandbox.calls == platform
    [(used_at,)] = await _rows(bot, "SELECT used_at FROM callback_ref")
    assert used_at is None
    assert len(bot.telegram.sent(GROUP)) == 1  # only the posted message: no answer in the chat


async def test_a_button_works_only_for_the_user_who_was_shown_it(bot: BotHarness) -> None:
    await group_with_karen(bot)
    [prompt] = await answers(
        bot, GROUP, lambda: bot.telegram.send_text(GROUP, "/language", user_id=BOB)
    )
    english = prompt.button("English").callback_data
    # Alice presses Bob's button: refused politely, nothing changes.
    query_id = await bot.telegram.tap(GROUP, prompt.message_id, english, user_id=ALICE)
    # In the presser's language (the group has none saved): Alice reads English.
    assert "the person who asked" in (await _answer_of(bot, query_id))["text"]
    await bot.settled(QUIET)
    assert (await bot.store.chats.chat(GROUP)).language is None
    assert bot.telegram.sent(GROUP)[-1].edits == 0
    # Bob's own press works.
    await bot.telegram.tap(GROUP, prompt.message_id, english, user_id=BOB)
    await _until(lambda: bot.telegram.sent(GROUP)[-1].edits == 1)
    assert (await bot.store.chats.chat(GROUP)).language == "en"


async def test_buttons_are_stored_with_their_user(bot: BotHarness) -> None:
    await bot.connect(ALICE, KAREN)
    await bot.send(ALICE, "/renew")
    owners = await _rows(bot, "SELECT DISTINCT chat_id, user_id FROM callback_ref")
    assert owners == [(ALICE, ALICE)]


async def test_an_edited_message_does_not_run_a_command_again(bot: BotHarness) -> None:
    """The bot does not ask for edits; delivered all the same (as to a webhook set before with
    every kind), none runs a command or a search."""
    await bot.connect(ALICE, KAREN)
    stand_in = bot.telegram.state.default_bot()
    assert "edited_message" not in stand_in.allowed_updates
    stand_in.allowed_updates |= {"edited_message"}
    before = len(bot.telegram.sent(ALICE))
    typed: list[int] = []

    async def type_help() -> None:
        typed.append(await bot.telegram.send_text(ALICE, "/help"))

    await answers(bot, ALICE, type_help)
    [message_id] = typed
    await bot.telegram.edit_text(ALICE, message_id, "/logout")
    await bot.telegram.edit_text(ALICE, message_id, "/help")
    await bot.telegram.edit_text(ALICE, message_id, "kongens fald")  # free text: a search
    await bot.settled(QUIET)
    assert len(bot.telegram.sent(ALICE)) == before + 1
    assert await bot.store.cards.get(ALICE) is not None


async def test_login_spam_keeps_a_few_states_and_the_newest_link_works(bot: BotHarness) -> None:
    chat = 7103
    bot.add_chat(chat, language_code="en")
    urls = [await bot.login_url(chat) for _ in range(3 * LIVE_LOGIN_STATES)]
    # Every /login answered with a working prompt; the table holds the newest few only.
    assert len(set(urls)) == len(urls)
    assert await _rows(bot, "SELECT count(*) FROM login_state") == [(LIVE_LOGIN_STATES,)]
    page = await bot.follow(await bot.log_in_at_library(urls[-1], KAREN))
    found = DEEP_LINK.search(page.text)
    assert page.status_code == 200 and found
    reply = await bot.send(chat, f"/start {found.group(1)}")
    assert "✅" in reply.text
    # The oldest links were dropped: their callback says so and spends no token call.
    old = await bot.follow(await bot.log_in_at_library(urls[0], KAREN))
    assert old.status_code == 410


@contextmanager
def _callback_inserts() -> Iterator[list[int]]:
    """Every INSERT into callback_ref any engine runs, as the number of rows it carried."""
    seen: list[int] = []

    def count(*args: Any) -> None:
        _, _, statement, params, _, many = args
        if statement.lstrip().upper().startswith("INSERT INTO CALLBACK_REF"):
            seen.append(len(params) if many else 1)

    event.listen(Engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(Engine, "before_cursor_execute", count)


async def test_a_commands_buttons_are_stored_in_one_statement(bot: BotHarness) -> None:
    await bot.connect(ALICE, KAREN)
    for command in ("/renew", "/holds", "/reminders", "/language", "/forget"):
        with _callback_inserts() as inserts:
            reply = await bot.send(ALICE, command)
            await asyncio.sleep(0.2)  # /holds may split its answer; buttons come last
        buttons = sum(
            1
            for message in bot.telegram.sent(ALICE)
            for row in message.buttons
            for button in row
            if button.callback_data and message.message_id >= reply.message_id
        )
        assert buttons >= 2, command
        assert inserts == [buttons], (command, inserts)


def test_the_guard_knows_every_contract_command() -> None:
    # A new command is private by default: only these may answer in a group.
    from bot.telegram.guard import GROUP_COMMANDS

    assert {"start", "help", "language"} == GROUP_COMMANDS
    assert set(COMMANDS) >= GROUP_COMMANDS


async def test_another_user_writing_in_a_patrons_chat_reaches_nothing(bot: BotHarness) -> None:
    """A business account writing in Alice's private chat (Telegram Business), or any message
    there from someone else: the bot does not ask for the first, and the guard stops both
    before the chat is read, so Alice's prompts, buttons and language stay hers."""
    await bot.connect(ALICE, KAREN)
    stand_in = bot.telegram.state.default_bot()
    assert "business_message" not in stand_in.allowed_updates
    assert "guest_message" not in stand_in.allowed_updates
    assert "message" in stand_in.allowed_updates
    before = len(bot.telegram.sent(ALICE))
    chat = {"id": ALICE, "type": "private", "first_name": "Alice"}
    stranger = {"id": 9999, "is_bot": False, "first_name": "Owner", "language_code": "uk"}
    for number, text_ in enumerate(["hello world", "/loans", "/logout"]):
        payload = {"message_id": 900 + number, "from": stranger, "chat": chat, "date": 0}
        payload["text"] = text_
        if text_.startswith("/"):
            payload["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text_)}]
        bot.telegram.state.queue(stand_in, ALICE, "message", payload)
        business = {**payload, "business_connection_id": "bc-1", "from": {**stranger, "id": ALICE}}
        bot.telegram.state.queue(stand_in, ALICE, "message", business)
    await bot.settled(QUIET)
    assert len(bot.telegram.sent(ALICE)) == before
    assert await bot.store.cards.get(ALICE) is not None
    row = await _rows(bot, f"SELECT telegram_language FROM chat WHERE chat_id = {ALICE}")  # noqa: S608
    assert row == [(None,)] or row[0][0] != "uk"
