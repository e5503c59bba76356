"""A tiny scripted bot (a real PTB `Application`) used to drive the stand-in end to end."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from tests.fixtures.telegram import TEST_BOT_TOKEN


async def _start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.effective_message is not None
    payload = " ".join(context.args or []) or "-"
    await update.effective_message.reply_html(f"Velkommen! Kode: <code>{payload}</code>")


async def _echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message = update.effective_message
    assert message is not None and message.text is not None
    await message.reply_html(
        f"Du skrev: <b>{message.text_html}</b>",
        reply_markup=InlineKeyboardMarkup(
            [
                [InlineKeyboardButton("Bekræft", callback_data="confirm")],
                [InlineKeyboardButton("Bibliotek.dk", url="https://bibliotek.dk/")],
            ]
        ),
    )


async def _confirm(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    assert query is not None
    await query.answer("Bekræftet ✓")
    await query.edit_message_text("Bekræftet: <i>tak</i>", parse_mode="HTML")


@asynccontextmanager
async def scripted_bot(api_url: str) -> AsyncIterator[Application]:  # type: ignore[type-arg]
    """Run the echo bot with long polling against the stand-in at `api_url`."""
    application = (
        Application.builder()
        .token(TEST_BOT_TOKEN)
        .base_url(f"{api_url}/bot")
        .get_updates_read_timeout(5)
        .build()
    )
    application.add_handler(CommandHandler("start", _start))
    application.add_handler(CallbackQueryHandler(_confirm, pattern="^confirm$"))
    application.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, _echo))
    async with application:
        await application.bot.set_my_commands(
            [("start", "Start forfra"), ("loans", "Vis dine lån")], language_code="da"
        )
        await application.bot.set_my_commands([("start", "Start over"), ("loans", "Your loans")])
        assert application.updater is not None
        await application.updater.start_polling(poll_interval=0.0, timeout=2)
        await application.start()
        try:
            yield application
        finally:
            await application.updater.stop()
            await application.stop()
