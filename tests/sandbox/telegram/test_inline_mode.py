"""Inline mode in the stand-in: `inline_query` updates, `answerInlineQuery` checked as Telegram
checks it, and a chosen result posted "via @bot" (with `chosen_inline_result`)."""

from __future__ import annotations

from typing import Any

import pytest
import telegram as tg
from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InlineQueryResultsButton,
    InputTextMessageContent,
)
from telegram.error import BadRequest

from bot.telegram.request import AiohttpRequest
from sandbox.telegram import TelegramStandIn
from tests.fixtures.telegram import TEST_BOT_TOKEN
from tests.sandbox.telegram.conftest import CHAT

GROUP = -100777


def article(number: int, *, text: str = "<b>Bog</b>", url: str | None = None) -> Any:
    markup = None
    if url is not None:
        markup = InlineKeyboardMarkup([[InlineKeyboardButton("Bestil", url=url)]])
    return InlineQueryResultArticle(
        id=str(number),
        title=f"Bog {number}",
        input_message_content=InputTextMessageContent(text, parse_mode="HTML"),
        reply_markup=markup,
    )


async def _query(bot: tg.Bot, telegram: TelegramStandIn, chat: int = CHAT, **kw: Any) -> str:
    query_id = await telegram.inline_query(chat, "blixen", **kw)
    [update] = await bot.get_updates()
    await bot.get_updates(offset=update.update_id + 1)
    assert update.inline_query is not None and update.inline_query.id == query_id
    return query_id


async def test_an_inline_query_reaches_the_bot_and_its_answer_the_user(
    bot: tg.Bot, telegram: TelegramStandIn
) -> None:
    assert (await bot.get_me()).supports_inline_queries
    query_id = await telegram.inline_query(CHAT, "karen blixen", offset="10")
    [update] = await bot.get_updates()
    query = update.inline_query
    assert query is not None and query.query == "karen blixen" and query.offset == "10"
    assert query.from_user.id == CHAT and query.from_user.language_code == "da"
    assert query.chat_type == "sender"
    url = "https://t.me/library_sandbox_bot?start=order-870970-basis_1"
    await query.answer(
        [article(1, url=url), article(2)],
        next_offset="20",
        cache_time=300,
        is_personal=False,
        button=InlineQueryResultsButton("Søg her", start_parameter="search"),
    )
    answer = await telegram.inline_answer(query_id)
    assert [r.title for r in answer.results] == ["Bog 1", "Bog 2"]
    assert answer.next_offset == "20" and answer.cache_time == 300 and not answer.is_personal
    assert answer.results[0].buttons[0][0].url == url
    assert answer.button == {"text": "Søg her", "start_parameter": "search"}
    with pytest.raises(BadRequest, match="uery is too old"):
        await query.answer([article(3)])  # answered once


@pytest.mark.parametrize(
    ("results", "extra", "error"),
    [
        ([article(n) for n in range(51)], {}, "RESULTS_TOO_MUCH"),
        ([article(1), article(1)], {}, "RESULT_ID_DUPLICATE"),
        ([article(1)], {"next_offset": "x" * 65}, "NEXT_OFFSET_INVALID"),
        ([article(1, text="<b>open")], {}, "can't parse entities"),
        ([article(1, url="http://localhost/x")], {}, "BUTTON_URL_INVALID"),
    ],
)
async def test_answers_telegram_refuses_are_refused(
    bot: tg.Bot,
    telegram: TelegramStandIn,
    results: list[Any],
    extra: dict[str, Any],
    error: str,
) -> None:
    query_id = await _query(bot, telegram)
    with pytest.raises(BadRequest) as refused:
        await bot.answer_inline_query(query_id, results, **extra)
    assert error.lower() in refused.value.message.lower()  # PTB capitalises the description
    assert telegram.state.inline_queries[query_id].answer is None


async def test_a_long_result_id_is_refused(bot: tg.Bot, telegram: TelegramStandIn) -> None:
    query_id = await _query(bot, telegram)
    long_id = InlineQueryResultArticle(
        id="é" * 33,  # 66 bytes
        title="Bog",
        input_message_content=InputTextMessageContent("Bog"),
    )
    with pytest.raises(BadRequest, match="Result_id_invalid"):
        await bot.answer_inline_query(query_id, [long_id])
    with pytest.raises(BadRequest, match="Start_param_invalid"):
        await bot.answer_inline_query(
            query_id,
            [article(1)],
            button=InlineQueryResultsButton("Søg", start_parameter="order:1"),
        )


async def test_a_chosen_result_is_posted_via_the_bot_in_a_group(
    bot: tg.Bot, telegram: TelegramStandIn
) -> None:
    telegram.add_group(GROUP)
    query_id = await _query(bot, telegram, GROUP, user_id=CHAT)
    url = "https://t.me/library_sandbox_bot?start=order-870970-basis_1"
    await bot.answer_inline_query(
        query_id, [article(1, text="<b>Den afrikanske farm</b>", url=url)]
    )
    await telegram.inline_answer(query_id)
    message_id = await telegram.choose(query_id, "1")
    [posted] = telegram.posted_via(GROUP)
    assert posted.message_id == message_id
    assert posted.text == "Den afrikanske farm" and posted.html == "<b>Den afrikanske farm</b>"
    assert posted.buttons[0][0].url == url
    assert telegram.sent(GROUP) == []  # the user sent it, not the bot
    # In a group only the feedback reaches the bot (privacy mode keeps the message out).
    [update] = await bot.get_updates()
    chosen = update.chosen_inline_result
    assert chosen is not None and chosen.result_id == "1" and chosen.query == "blixen"
    assert chosen.from_user.id == CHAT and chosen.inline_message_id


async def test_a_result_sent_in_the_private_chat_reaches_the_bot_marked_via_it(
    bot: tg.Bot, telegram: TelegramStandIn
) -> None:
    query_id = await _query(bot, telegram)
    await bot.answer_inline_query(query_id, [article(7)])
    await telegram.inline_answer(query_id)
    await telegram.choose(query_id, "7")
    message, chosen = await bot.get_updates()
    assert message.message is not None and message.message.text == "Bog"
    assert message.message.via_bot is not None and message.message.via_bot.id == bot.id
    assert chosen.chosen_inline_result is not None


async def test_a_bot_without_inline_mode_gets_no_inline_queries(
    telegram: TelegramStandIn,
) -> None:
    telegram.add_bot("999:secret", username="plain_bot", inline_placeholder=None)
    telegram.state.bots = {"999:secret": telegram.state.bots["999:secret"]}
    telegram.add_chat(1)
    with pytest.raises(ValueError, match="setinline"):
        await telegram.inline_query(1, "blixen")


async def test_an_empty_answer_is_taken_as_telegram_takes_it(
    bot: tg.Bot, telegram: TelegramStandIn
) -> None:
    """No hits is an empty list, in a form body (PTB's default request) and in a JSON body (the
    bot's own request, `bot.telegram.request`)."""
    query_id = await _query(bot, telegram)
    await bot.answer_inline_query(query_id, [], cache_time=0)
    assert (await telegram.inline_answer(query_id)).results == []
    query_id = await _query(bot, telegram)
    async with tg.Bot(
        TEST_BOT_TOKEN, base_url=f"{telegram.url}/bot", request=AiohttpRequest()
    ) as own:
        await own.answer_inline_query(query_id, [], cache_time=0, is_personal=True)
    answer = await telegram.inline_answer(query_id)
    assert answer.results == [] and answer.is_personal and answer.cache_time == 0
