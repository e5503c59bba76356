"""What the patron sees of the bot, sent or edited: HTML, no link previews, within Telegram's
4096 characters, URL buttons only for hosts Telegram accepts. Handlers and the reminder sweep
both send through these, so a message looks and behaves the same whoever sends it."""

from __future__ import annotations

import html
import logging
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from telegram import (
    Bot,
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    Message,
)
from telegram.constants import ParseMode
from telegram.error import BadRequest as TelegramBadRequest
from telegram.error import TelegramError
from telegram.warnings import PTBUserWarning

from bot.telegram.context import Context

if TYPE_CHECKING:
    from telegram import Update

log = logging.getLogger(__name__)

Buttons = Sequence[Sequence[InlineKeyboardButton]]

NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
# What every message is sent with, as the Bot API takes it: made into JSON once, where PTB
# would serialize `NO_PREVIEW` on every send.
_HTML = {"parse_mode": ParseMode.HTML.value, "link_preview_options": NO_PREVIEW.to_dict()}

# PTB warns when `do_api_request` calls a method it has a method of its own for: here that is
# on purpose (`_deliver`).
warnings.filterwarnings(
    "ignore",
    r"Please use 'Bot\.(sendMessage|editMessageText)' instead",
    PTBUserWarning,
)


class StaticKeyboard(InlineKeyboardMarkup):
    """A keyboard sent unchanged in many messages (the Mini App's button), made once: PTB
    serializes a markup button by button on every send, and this one's JSON is kept.

    PTB objects are frozen once made, so the kept dict cannot go stale; PTB only encodes it.
    """

    __slots__ = ("_sent_as",)

    def to_dict(self, recursive: bool = True) -> dict[str, Any]:
        if not recursive:
            return super().to_dict(recursive=False)
        sent_as: dict[str, Any] | None = getattr(self, "_sent_as", None)
        if sent_as is None:
            sent_as = self._sent_as = super().to_dict()
        return sent_as


def markup(buttons: Buttons | InlineKeyboardMarkup | None) -> InlineKeyboardMarkup | None:
    """Rows of buttons as a keyboard; None for no buttons."""
    if buttons is None or isinstance(buttons, InlineKeyboardMarkup):
        return buttons
    if not buttons:
        return None
    return InlineKeyboardMarkup([list(row) for row in buttons])


def plain(text: str) -> str:
    """Undo the HTML escaping of `t`: button labels are plain text, not HTML."""
    return html.unescape(text)


async def send(
    bot: Bot,
    chat_id: int,
    text: str,
    *,
    buttons: Buttons | InlineKeyboardMarkup | None = None,
) -> None:
    """Send an HTML message without link previews (for jobs and replies alike); the sent
    message is not read back (`_deliver`)."""
    await _deliver(
        bot,
        "sendMessage",
        {"chat_id": chat_id, "text": text, **_HTML, "reply_markup": markup(buttons)},
    )


async def _deliver(bot: Bot, method: str, parameters: dict[str, Any]) -> None:
    """Call `method` through PTB's public `Bot.do_api_request` without a return type, which
    gives Telegram's answer as it came: PTB builds no `Message` nobody reads (0.1-0.4 ms a
    send), and a Bot API server that is not quite Telegram (an emulator, a rewriting proxy)
    and accepts a send with a message PTB could not read has delivered it all the same, so no
    "something went wrong" follows and a reminder is marked sent rather than sent again.
    PTB's own errors, limits and rate limiter apply as to `send_message`."""
    await bot.do_api_request(method, parameters)


async def reply(
    update: Update,
    context: Context,
    text: str,
    *,
    buttons: Buttons | InlineKeyboardMarkup | None = None,
) -> None:
    """Answer an update: edit the tapped message for a callback, else send a new message."""
    query = update.callback_query
    if query is not None and isinstance(query.message, Message):
        message = query.message
        edit = {
            "chat_id": message.chat_id,
            "message_id": message.message_id,
            "business_connection_id": message.business_connection_id,
            "text": text,
            **_HTML,
            "reply_markup": markup(buttons),
        }
        try:
            await _deliver(context.bot, "editMessageText", edit)
        except TelegramBadRequest as exc:
            # A double tap leaves the text unchanged; that is not an error worth a new message.
            if "not modified" not in exc.message.lower():
                raise
        return
    await send(context.bot, context.chat_id, text, buttons=buttons)


async def send_messages(
    update: Update, context: Context, messages: Sequence[str], buttons: Buttons | None = None
) -> None:
    """Send split messages (`texts.formatting.split_messages`) in order; buttons go under the
    last one."""
    chat_id = context.chat_id
    for index, text in enumerate(messages):
        last = index == len(messages) - 1
        await send(context.bot, chat_id, text, buttons=buttons if last else None)


def url_button_allowed(url: str) -> bool:
    """Telegram refuses URL buttons whose host is not a dotted name (localhost, bare names)."""
    host = urlsplit(url).hostname or ""
    return "." in host.strip(".")


def url_button(label: str, url: str) -> InlineKeyboardMarkup | None:
    """A keyboard of one button opening `url`; None where Telegram would refuse it (the
    caller then puts the link in the text)."""
    if not url_button_allowed(url):
        return None
    return InlineKeyboardMarkup([[InlineKeyboardButton(label, url=url)]])


async def answer_query(update: Update, text: str | None = None) -> None:
    """Answer the tapped button (a toast when `text`); never fails the update."""
    await answer_tap(update.callback_query, text)


async def answer_tap(query: CallbackQuery | None, text: str | None = None) -> None:
    """`answer_query` for the tap itself (None: the update was no tap)."""
    if query is None:
        return
    try:
        await query.answer(text)
    except TelegramError as exc:
        # Already answered or too old: the patron still gets the message that follows.
        log.debug("callback query not answered: %s", type(exc).__name__)
