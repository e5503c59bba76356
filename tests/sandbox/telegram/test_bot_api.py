"""The Bot API surface, driven by python-telegram-bot and raw HTTP, with Telegram's errors."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
import telegram as tg
from aiohttp import web
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions, WebAppInfo
from telegram.error import BadRequest, Conflict, Forbidden, NetworkError, RetryAfter, TimedOut

from sandbox.telegram import TelegramStandIn
from tests.fixtures.telegram import TEST_BOT_TOKEN
from tests.sandbox.telegram.conftest import CHAT

# PTB warns about its own RetryAfter.retry_after type change; not ours to fix
pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


def keyboard(*buttons: InlineKeyboardButton) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([list(buttons)])


async def test_get_me_describes_the_bot(bot: tg.Bot) -> None:
    me = await bot.get_me()
    assert (me.id, me.username, me.first_name, me.is_bot) == (
        123456,
        "library_sandbox_bot",
        "Library Bot",
        True,
    )


async def test_send_message_keeps_text_entities_and_buttons(
    bot: tg.Bot, telegram: TelegramStandIn
) -> None:
    message = await bot.send_message(
        CHAT,
        "<b>Lån</b> &amp; <i>reserveringer</i> &#128218;",
        parse_mode="HTML",
        reply_markup=keyboard(
            InlineKeyboardButton("Ja", callback_data="yes:1"),
            InlineKeyboardButton("Åbn", url="https://bibliotek.dk/x"),
        ),
        link_preview_options=LinkPreviewOptions(is_disabled=True),
    )
    assert message.text == "Lån & reserveringer 📚"
    assert [(e.type, e.offset, e.length) for e in message.entities] == [
        ("bold", 0, 3),
        ("italic", 6, 13),
    ]
    (sent,) = telegram.sent(CHAT)
    assert sent.message_id == message.message_id
    assert sent.text == "Lån & reserveringer 📚"
    assert sent.html.startswith("<b>Lån</b>")
    assert sent.parse_mode == "HTML"
    assert [[(b.text, b.callback_data, b.url) for b in row] for row in sent.buttons] == [
        [("Ja", "yes:1", None), ("Åbn", None, "https://bibliotek.dk/x")]
    ]
    assert sent.link_preview is False
    assert telegram.calls["sendMessage"] == 1


async def test_markdown_v2_is_parsed(bot: tg.Bot, telegram: TelegramStandIn) -> None:
    message = await bot.send_message(CHAT, r"*Forfalden* i dag\. Pris: 45,50 kr\.", "MarkdownV2")
    assert message.text == "Forfalden i dag. Pris: 45,50 kr."
    assert message.entities[0].type == "bold"


PARSE = "Bad Request: can't parse entities: "


@pytest.mark.parametrize(
    ("text", "parse_mode", "description"),
    [
        ("x" * 4097, None, "Bad Request: message is too long"),
        ("<b>" + "x" * 4096 + "</b>", "HTML", None),  # markup does not count
        ("æ" * 4096, None, None),  # characters, not bytes
        ("", None, "Bad Request: message text is empty"),
        ("   ", None, "Bad Request: message text is empty"),
        ("<b></b>", "HTML", "Bad Request: message text is empty"),
        ("a <x>b</x>", "HTML", PARSE + 'Unsupported start tag "x" at byte offset 2'),
        ("<b>fed", "HTML", PARSE + 'Can\'t find end tag corresponding to start tag "b"'),
        (
            "<b><i>x</b></i>",
            "HTML",
            PARSE + 'Unmatched end tag at byte offset 7, expected "</i>", found "</b>"',
        ),
        ("3 < 4", "HTML", PARSE + 'Unsupported start tag "" at byte offset 2'),
        ("Lån & mere", "HTML", PARSE + "Character '&' at byte offset 5 must be escaped as &amp;"),
        ("&nbsp;", "HTML", PARSE + "Character '&' at byte offset 0 must be escaped as &amp;"),
        ("<br>", "HTML", PARSE + 'Unsupported start tag "br" at byte offset 0'),
        ("x</b>", "HTML", PARSE + "Unexpected end tag at byte offset 1"),
        ("<b", "HTML", PARSE + "Unclosed start tag at byte offset 0"),
        (
            "<span>x</span>",
            "HTML",
            PARSE + 'Tag "span" must have class "tg-spoiler" at byte offset 0',
        ),
        (
            "Version 1.0",
            "MarkdownV2",
            PARSE + "Character '.' is reserved and must be escaped with the preceding '\\'",
        ),
        ("*fed", "MarkdownV2", PARSE + "Can't find end of Bold entity at byte offset 0"),
    ],
)
async def test_text_is_checked_like_telegram(
    bot: tg.Bot,
    telegram: TelegramStandIn,
    text: str,
    parse_mode: str | None,
    description: str | None,
) -> None:
    if description is None:
        await bot.send_message(CHAT, text, parse_mode=parse_mode)
        assert len(telegram.sent(CHAT)) == 1
        return
    with pytest.raises(BadRequest):
        await bot.send_message(CHAT, text, parse_mode=parse_mode)
    fields = {"chat_id": CHAT, "text": text, "parse_mode": parse_mode or ""}
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{telegram.url}/bot{TEST_BOT_TOKEN}/sendMessage", data=fields)
    assert response.status_code == 400
    assert response.json() == {"ok": False, "error_code": 400, "description": description}
    assert telegram.sent(CHAT) == []


async def test_allowed_html_tags_pass(bot: tg.Bot) -> None:
    text = (
        "<b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><ins>i</ins><s>s</s>"
        '<strike>s</strike><del>d</del><span class="tg-spoiler">sp</span>'
        '<tg-spoiler>sp</tg-spoiler><a href="https://bibliotek.dk">a</a><code>c</code>'
        '<pre><code class="language-python">p</code></pre><blockquote>q</blockquote>'
        "<blockquote expandable>e</blockquote>"
        '<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>'
        " &lt;&gt;&amp;&quot;&#x41;"
    )
    message = await bot.send_message(CHAT, text, parse_mode="HTML")
    assert message.text is not None and message.text.endswith(' <>&"A')
    types = {entity.type for entity in message.entities}
    assert {"bold", "spoiler", "text_link", "pre", "expandable_blockquote"} <= types


@pytest.mark.parametrize(
    ("button", "description"),
    [
        (InlineKeyboardButton("x", callback_data="d" * 65), "Button_data_invalid"),
        (InlineKeyboardButton("x", callback_data="æ" * 33), "Button_data_invalid"),
        (InlineKeyboardButton("x", callback_data=""), "Button_data_invalid"),
        (InlineKeyboardButton("x", url="http://localhost:8080/x"), "Button_url_invalid"),
        (InlineKeyboardButton("x", url="https:///path"), "Button_url_invalid"),
        (InlineKeyboardButton("x", url="ftp://bibliotek.dk/x"), "Button_url_invalid"),
        (InlineKeyboardButton("x", url="bibliotek.dk"), "Button_url_invalid"),
    ],
)
async def test_inline_keyboards_are_checked(
    bot: tg.Bot, button: InlineKeyboardButton, description: str
) -> None:
    with pytest.raises(BadRequest, match=description):
        await bot.send_message(CHAT, "x", reply_markup=keyboard(button))


async def test_a_keyboard_of_more_than_a_hundred_buttons_is_refused(bot: tg.Bot) -> None:
    """Telegram takes at most 100 inline buttons a message, over all rows."""
    row = [InlineKeyboardButton(str(n), callback_data=str(n)) for n in range(10)]
    await bot.send_message(CHAT, "x", reply_markup=InlineKeyboardMarkup([row] * 10))
    with pytest.raises(BadRequest, match="Reply markup is too long"):
        await bot.send_message(CHAT, "x", reply_markup=InlineKeyboardMarkup([row] * 10 + [row[:1]]))


async def test_good_buttons_and_a_button_without_action(
    bot: tg.Bot, telegram: TelegramStandIn
) -> None:
    await bot.send_message(
        CHAT,
        "x",
        reply_markup=keyboard(
            InlineKeyboardButton("x", callback_data="d" * 64),
            InlineKeyboardButton("y", url="http://127.0.0.1:8080/oauth"),
            InlineKeyboardButton("z", url="tg://resolve?domain=library_sandbox_bot"),
        ),
    )
    raw = {"inline_keyboard": [[{"text": "no action"}]]}
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{telegram.url}/bot{TEST_BOT_TOKEN}/sendMessage",
            data={"chat_id": CHAT, "text": "x", "reply_markup": json.dumps(raw)},
        )
    assert response.status_code == 400
    assert response.json() == {
        "ok": False,
        "error_code": 400,
        "description": "Bad Request: can't parse inline keyboard button: "
        "Text buttons are unallowed in the inline keyboard",
    }


async def test_a_mini_app_at_http_opens_only_in_the_test_environment(
    bot: tg.Bot, telegram: TelegramStandIn
) -> None:
    """Telegram takes a `web_app` button at https only; its test environment
    (`/bot<token>/test/<method>`, as PTB addresses it) takes plain http too."""
    plain = keyboard(InlineKeyboardButton("app", web_app=WebAppInfo("http://127.0.0.1:8080/app/")))
    with pytest.raises(BadRequest, match="only https links are allowed"):
        await bot.send_message(CHAT, "x", reply_markup=plain)
    secure = keyboard(
        InlineKeyboardButton("app", web_app=WebAppInfo("https://bot.example.org/app/"))
    )
    await bot.send_message(CHAT, "x", reply_markup=secure)
    base = f"{telegram.url}/bot{{token}}/test"
    async with tg.Bot(TEST_BOT_TOKEN, base_url=base) as test_environment:
        await test_environment.send_message(CHAT, "x", reply_markup=plain)
    assert [m.text for m in telegram.sent(CHAT)] == ["x", "x"]


async def test_unknown_chat_and_blocked_user(bot: tg.Bot, telegram: TelegramStandIn) -> None:
    with pytest.raises(BadRequest, match=r"^Chat not found$"):
        await bot.send_message(999, "x")
    telegram.block(CHAT)
    with pytest.raises(Forbidden, match="bot was blocked by the user"):
        await bot.send_message(CHAT, "x")
    with pytest.raises(Forbidden):
        await bot.send_chat_action(CHAT, "typing")
    updates = await bot.get_updates()
    member = updates[-1].my_chat_member
    assert member is not None
    assert member.new_chat_member.status == "kicked"


async def test_edits_and_deletes(bot: tg.Bot, telegram: TelegramStandIn) -> None:
    first = await bot.send_message(
        CHAT, "Forny?", reply_markup=keyboard(InlineKeyboardButton("Ja", callback_data="r"))
    )
    with pytest.raises(BadRequest, match=r"^Message is not modified: specified new message"):
        await bot.edit_message_text(
            "Forny?",
            CHAT,
            first.message_id,
            reply_markup=keyboard(InlineKeyboardButton("Ja", callback_data="r")),
        )
    edited = await bot.edit_message_text(
        "<b>Fornyet</b>", CHAT, first.message_id, parse_mode="HTML"
    )
    assert isinstance(edited, tg.Message)
    (sent,) = telegram.sent(CHAT)
    assert (sent.text, sent.buttons, sent.edits) == ("Fornyet", [], 1)
    await bot.edit_message_reply_markup(
        CHAT, first.message_id, reply_markup=keyboard(InlineKeyboardButton("OK", callback_data="o"))
    )
    assert telegram.sent(CHAT)[0].buttons[0][0].text == "OK"
    assert telegram.sent(CHAT)[0].edits == 2
    with pytest.raises(BadRequest, match=r"^Message to edit not found$"):
        await bot.edit_message_text("x", CHAT, 999)
    user_message = await telegram.send_text(CHAT, "hej")
    with pytest.raises(BadRequest, match=r"^Message can't be edited$"):
        await bot.edit_message_text("x", CHAT, user_message)
    assert await bot.delete_message(CHAT, first.message_id)
    assert telegram.sent(CHAT) == []
    with pytest.raises(BadRequest, match=r"^Message to delete not found$"):
        await bot.delete_message(CHAT, first.message_id)


async def test_replies(bot: tg.Bot, telegram: TelegramStandIn) -> None:
    asked = await telegram.send_text(CHAT, "/loans")
    answer = await bot.send_message(CHAT, "Dine lån", reply_to_message_id=asked)
    assert answer.reply_to_message is not None
    assert answer.reply_to_message.text == "/loans"
    assert telegram.sent(CHAT)[0].reply_to_message_id == asked
    with pytest.raises(BadRequest, match=r"^Message to be replied not found$"):
        await bot.send_message(CHAT, "x", reply_to_message_id=999)


async def test_callback_queries_and_answers(bot: tg.Bot, telegram: TelegramStandIn) -> None:
    sent = await bot.send_message(
        CHAT, "Bestil?", reply_markup=keyboard(InlineKeyboardButton("Ja", callback_data="yes"))
    )
    with pytest.raises(ValueError, match="no button"):
        await telegram.tap(CHAT, sent.message_id, "nope")
    query_id = await telegram.tap(CHAT, sent.message_id, "yes")
    (update,) = await bot.get_updates()
    query = update.callback_query
    assert query is not None
    assert (query.id, query.data, query.from_user.id) == (query_id, "yes", CHAT)
    assert isinstance(query.message, tg.Message) and query.message.text == "Bestil?"
    assert await query.answer("Bestilt!", show_alert=True)
    assert telegram.callback_answers[query_id] == {"text": "Bestilt!", "show_alert": True}
    with pytest.raises(BadRequest, match=r"^Query is too old and response timeout expired"):
        await query.answer("again")
    with pytest.raises(BadRequest, match=r"^Query is too old"):
        await bot.answer_callback_query("123")
    late = await telegram.tap(CHAT, sent.message_id, "yes")
    telegram.callback_query_ttl = 0.0
    with pytest.raises(BadRequest, match=r"^Query is too old"):
        await bot.answer_callback_query(late)


async def test_user_messages_carry_realistic_updates(
    bot: tg.Bot, telegram: TelegramStandIn
) -> None:
    await telegram.send_text(CHAT, "/start abc123")
    await telegram.send_text(CHAT, "hello /help")
    first, second = await bot.get_updates()
    message = first.message
    assert message is not None and message.from_user is not None
    assert message.text == "/start abc123"
    assert (message.from_user.id, message.from_user.is_bot, message.from_user.language_code) == (
        CHAT,
        False,
        "da",
    )
    assert message.chat.type == "private"
    assert [(e.type, e.offset, e.length) for e in message.entities] == [("bot_command", 0, 6)]
    assert second.message is not None and second.message.entities == ()
    assert second.update_id == first.update_id + 1


async def test_long_polling_waits_and_confirms(bot: tg.Bot, telegram: TelegramStandIn) -> None:
    started = time.monotonic()
    assert await bot.get_updates(timeout=1) == ()
    assert time.monotonic() - started >= 0.9
    waiting = asyncio.create_task(bot.get_updates(timeout=5))
    await asyncio.sleep(0.2)
    await telegram.send_text(CHAT, "hej")
    updates = await asyncio.wait_for(waiting, 2)
    assert [u.message.text for u in updates if u.message] == ["hej"]
    # not confirmed yet: delivered again; confirmed by the next offset
    again = await bot.get_updates(timeout=0)
    assert [u.update_id for u in again] == [updates[0].update_id]
    assert await bot.get_updates(offset=updates[0].update_id + 1) == ()


async def test_get_updates_limit_and_allowed_updates(
    bot: tg.Bot, telegram: TelegramStandIn
) -> None:
    for text in ("a", "b", "c"):
        await telegram.send_text(CHAT, text)
    assert len(await bot.get_updates(limit=2)) == 2
    assert len(await bot.get_updates(offset=-1)) == 1
    await bot.get_updates(offset=-1 + 10**9, allowed_updates=["callback_query"])
    await telegram.send_text(CHAT, "ignored")
    assert await bot.get_updates() == ()


async def test_second_poller_terminates_the_first(bot: tg.Bot, telegram: TelegramStandIn) -> None:
    first = asyncio.create_task(bot.get_updates(timeout=5))
    await asyncio.sleep(0.2)
    async with tg.Bot(TEST_BOT_TOKEN, base_url=f"{telegram.url}/bot") as other_instance:
        second = asyncio.create_task(other_instance.get_updates(timeout=1))
        with pytest.raises(Conflict, match="terminated by other getUpdates request"):
            await asyncio.wait_for(first, 3)
        assert await second == ()


async def test_webhook_delivery_with_secret_in_order(
    bot: tg.Bot, telegram: TelegramStandIn
) -> None:
    received: list[tuple[str | None, dict[str, object]]] = []
    failures_left = [1]

    async def hook(request: web.Request) -> web.Response:
        if failures_left[0]:
            failures_left[0] -= 1
            return web.Response(status=500)
        received.append(
            (request.headers.get("X-Telegram-Bot-Api-Secret-Token"), await request.json())
        )
        return web.Response()

    app = web.Application()
    app.router.add_post("/telegram/webhook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        url = f"http://127.0.0.1:{port}/telegram/webhook"
        assert await bot.set_webhook(url, secret_token="s3cret-Token_1")
        with pytest.raises(Conflict, match="can't use getUpdates method while webhook is active"):
            await bot.get_updates()
        for text in ("one", "two", "three"):
            await telegram.send_text(CHAT, text)
        for _ in range(100):
            if len(received) == 3:
                break
            await asyncio.sleep(0.05)
        assert [secret for secret, _ in received] == ["s3cret-Token_1"] * 3
        assert [body["message"]["text"] for _, body in received] == ["one", "two", "three"]  # type: ignore[index]
        info = await bot.get_webhook_info()
        assert (info.url, info.pending_update_count) == (url, 0)
        assert info.last_error_message is not None and "500" in info.last_error_message
        with pytest.raises(BadRequest, match="Secret token contains unallowed characters"):
            await bot.set_webhook(url, secret_token="bad secret!")
        assert await bot.delete_webhook()
        await telegram.send_text(CHAT, "polled")
        updates = await bot.get_updates()
        assert [u.message.text for u in updates if u.message] == ["polled"]
    finally:
        await runner.cleanup()


async def test_global_rate_limit(telegram: TelegramStandIn) -> None:
    telegram.rate_limit = 5
    telegram.add_chat(1)
    telegram.add_chat(2)
    async with tg.Bot(TEST_BOT_TOKEN, base_url=f"{telegram.url}/bot") as bot:
        for index in range(5):
            await bot.send_message(1 + index % 2, f"m{index}")
        async with httpx.AsyncClient() as client:
            response = await client.post(
                f"{telegram.url}/bot{TEST_BOT_TOKEN}/sendMessage",
                data={"chat_id": "2", "text": "too many"},
            )
        assert response.status_code == 429
        assert response.json() == {
            "ok": False,
            "error_code": 429,
            "description": "Too Many Requests: retry after 1",
            "parameters": {"retry_after": 1},
        }
        with pytest.raises(RetryAfter):
            await bot.send_message(1, "too many")
        assert len(telegram.sent(1)) + len(telegram.sent(2)) == 5
        assert telegram.send_rate.refused == 2  # what benchmarks count
        await asyncio.sleep(1.05)
        await bot.send_message(1, "later")


async def test_fault_injection(bot: tg.Bot, telegram: TelegramStandIn) -> None:
    telegram.failures.fail("sendMessage", 429, retry_after=7)
    with pytest.raises(RetryAfter, match="Retry in 7 seconds"):
        await bot.send_message(CHAT, "x")
    telegram.failures.fail("SENDMESSAGE", 500, times=2)
    for _ in range(2):
        with pytest.raises(NetworkError, match="Internal Server Error"):
            await bot.send_message(CHAT, "x")
    telegram.failures.fail("*", 403, description="Forbidden: bot was kicked")
    with pytest.raises(Forbidden, match="bot was kicked"):
        await bot.get_me()
    telegram.failures.hang("sendMessage", 1.0)
    with pytest.raises(TimedOut):
        await bot.send_message(CHAT, "slow", read_timeout=0.3)
    assert telegram.failures.pending == []
    await bot.send_message(CHAT, "x")
    await asyncio.sleep(0.8)  # the hung call completes on the server side
    # a timed-out send still lands, later: the bot must not assume it failed
    assert [m.text for m in telegram.sent(CHAT)] == ["x", "slow"]
    assert telegram.calls["sendMessage"] == 5


async def test_commands_by_scope_and_language(bot: tg.Bot, telegram: TelegramStandIn) -> None:
    await bot.set_my_commands([("loans", "Vis dine lån")], language_code="da")
    await bot.set_my_commands([("loans", "Show your loans")])
    assert telegram.commands == {
        "da": [{"command": "loans", "description": "Vis dine lån"}],
        None: [{"command": "loans", "description": "Show your loans"}],
    }
    got = await bot.get_my_commands(language_code="da")
    assert [(c.command, c.description) for c in got] == [("loans", "Vis dine lån")]
    assert telegram.chat_commands(CHAT)[0]["description"] == "Vis dine lån"
    telegram.add_chat(7, language_code="en")
    assert telegram.chat_commands(7)[0]["description"] == "Show your loans"
    with pytest.raises(BadRequest, match="Bot_command_invalid"):
        await bot.set_my_commands([("Loans!", "x")])
    assert await bot.delete_my_commands(language_code="da")
    assert await bot.get_my_commands(language_code="da") == ()
    assert await bot.send_chat_action(CHAT, "typing")
    assert await bot.close()
    assert await bot.log_out()


async def test_raw_http_bodies_tokens_and_methods(telegram: TelegramStandIn) -> None:
    telegram.add_chat(CHAT)
    base = f"{telegram.url}/bot{TEST_BOT_TOKEN}"
    async with httpx.AsyncClient() as client:
        as_json = await client.post(f"{base}/sendmessage", json={"chat_id": CHAT, "text": "j"})
        as_form = await client.post(f"{base}/SendMessage", data={"chat_id": str(CHAT), "text": "f"})
        as_multipart = await client.post(
            f"{base}/sendMessage",
            data={"chat_id": str(CHAT), "text": "m"},
            files={"document": ("a.txt", b"x")},
        )
        as_get = await client.get(f"{base}/sendMessage", params={"chat_id": CHAT, "text": "g"})
        for response in (as_json, as_form, as_multipart, as_get):
            assert response.status_code == 200, response.text
            assert response.json()["ok"] is True
        unknown_method = await client.post(f"{base}/sendTelepathy")
        assert unknown_method.status_code == 404
        assert unknown_method.json() == {
            "ok": False,
            "error_code": 404,
            "description": "Not Found",
        }
        unknown_token = await client.post(f"{telegram.url}/bot999:nope/getMe")
        assert unknown_token.status_code == 401
        assert unknown_token.json()["description"] == "Unauthorized"
    assert [m.text for m in telegram.sent(CHAT)] == ["j", "f", "m", "g"]


async def test_wait_for(bot: tg.Bot, telegram: TelegramStandIn) -> None:
    async def later() -> None:
        await asyncio.sleep(0.1)
        await bot.send_message(CHAT, "første")
        await bot.send_message(CHAT, "anden")

    task = asyncio.create_task(later())
    found = await telegram.wait_for(CHAT, "anden", timeout=3)
    await task
    assert found.text == "anden"
    first = await telegram.wait_for(CHAT, lambda m: m.text.startswith("f"))
    assert first.message_id < found.message_id
    with pytest.raises(TimeoutError, match="første"):
        await telegram.wait_for(CHAT, "tredje", timeout=0.2, after=0)
    with pytest.raises(TimeoutError):
        await telegram.wait_for(CHAT, "første", timeout=0.1, after=first.message_id)


async def test_groups_members_channels_and_edits(bot: tg.Bot, telegram: TelegramStandIn) -> None:
    telegram.add_chat(77, first_name="Bob", language_code="en")
    telegram.add_group(-1001, title="Book club")
    telegram.add_group(-1002, title="News", chat_type="channel")
    message_id = await telegram.send_text(-1001, "/help", user_id=77)
    await telegram.send_text(-1002, "/help")
    await telegram.edit_text(-1001, message_id, "/loans")
    in_group, in_channel, edited = await bot.get_updates()
    assert in_group.message is not None and in_group.message.chat.type == "supergroup"
    assert in_group.message.chat.title == "Book club"
    assert in_group.effective_user is not None and in_group.effective_user.id == 77
    assert in_channel.channel_post is not None and in_channel.channel_post.chat.type == "channel"
    assert in_channel.effective_user is None
    assert edited.edited_message is not None and edited.edited_message.text == "/loans"
    with pytest.raises(ValueError, match="which member"):
        await telegram.send_text(-1001, "/help")
    with pytest.raises(ValueError, match="private chat"):
        await telegram.send_text(CHAT, "/help", user_id=77)


async def test_garbled_answer_still_delivers(telegram: TelegramStandIn) -> None:
    telegram.add_chat(CHAT + 1)
    telegram.failures.garble("sendMessage")
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            f"{telegram.url}/bot{TEST_BOT_TOKEN}/sendMessage",
            data={"chat_id": str(CHAT + 1), "text": "hej"},
        )
    body = answer.json()
    assert answer.status_code == 200 and body["ok"] is True
    assert set(body["result"]) == {"message_id"}  # no date, no chat: PTB cannot parse it
    assert [m.text for m in telegram.sent(CHAT + 1)] == ["hej"]
    assert telegram.failures.pending == []
