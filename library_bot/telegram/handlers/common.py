"""Helpers every handler module shares: language, replies, accounts, login prompts, buttons,
and the guard that keeps accounts to private chats.

Handlers stay thin by going through these; the borrower and reminder handlers build on them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    LinkPreviewOptions,
    Message,
    Update,
)
from telegram.constants import ChatType, MessageEntityType, ParseMode
from telegram.error import BadRequest as TelegramBadRequest
from telegram.error import Forbidden, TelegramError
from telegram.ext import ApplicationHandlerStop, BaseHandler, ContextTypes, TypeHandler

from library_bot.library.errors import LibraryError, ServiceUnavailable, TokenRejected
from library_bot.services import services
from library_bot.storage.store import new_callback_id
from library_bot.texts import pick_language, t

if TYPE_CHECKING:
    from library_bot.storage.store import Account, CallbackRef, ChatSettings

log = logging.getLogger(__name__)

Context = ContextTypes.DEFAULT_TYPE
Buttons = Sequence[Sequence[InlineKeyboardButton]]

NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
CALLBACK_DATA_LIMIT = 64
# What a group, supergroup or channel may use: nothing that reads or changes an account.
# `/start` only without a code; every other command and button is for private chats.
GROUP_COMMANDS = frozenset({"start", "help", "language"})
GROUP_BUTTONS = frozenset({"lang"})


def chat_id_of(update: Update) -> int:
    """The chat an update belongs to (every update our handlers accept has one)."""
    chat = update.effective_chat
    assert chat is not None
    return chat.id


async def lang_of(update: Update, context: Context) -> str:
    """The chat's saved language, else the one Telegram reports for the user."""
    return (await chat_and_lang(update, context))[1]


async def chat_and_lang(update: Update, context: Context) -> tuple[ChatSettings | None, str]:
    """The chat's settings (one read, for handlers that need both) and its language.

    Telegram's `language_code` is remembered whenever it changes, so the messages nobody asked
    for (reminders, expiry notices) and the login pages speak the patron's language too.
    """
    chat = update.effective_chat
    user = update.effective_user
    code = user.language_code if user else None
    if chat is None:
        return None, pick_language(None, code)
    store = services(context).store
    settings = await store.chat(chat.id)
    # Only a private chat's: in a group the sender's language is not the chat's, and a group
    # gets no row of its own (nothing is kept for groups).
    if code and chat.type == "private" and code[:16] != settings.telegram_language:
        await store.set_telegram_language(chat.id, code)
    return settings, pick_language(settings.language, code or settings.telegram_language)


async def chat_lang(context: Context, chat_id: int) -> str:
    """Like `lang_of` for jobs, which have no update: the saved language, else Telegram's."""
    chat = await services(context).store.chat(chat_id)
    return pick_language(chat.language, chat.telegram_language)


def _markup(buttons: Buttons | None) -> InlineKeyboardMarkup | None:
    if not buttons:
        return None
    return InlineKeyboardMarkup([list(row) for row in buttons])


async def send(
    context: Context, chat_id: int, text: str, *, buttons: Buttons | None = None
) -> Message:
    """Send an HTML message without link previews (for jobs and replies alike)."""
    return await context.bot.send_message(
        chat_id,
        text,
        parse_mode=ParseMode.HTML,
        link_preview_options=NO_PREVIEW,
        reply_markup=_markup(buttons),
    )


async def reply(
    update: Update, context: Context, text: str, *, buttons: Buttons | None = None
) -> Message:
    """Answer an update: edit the tapped message for a callback, else send a new message."""
    query = update.callback_query
    if query is not None and isinstance(query.message, Message):
        try:
            edited = await query.message.edit_text(
                text,
                parse_mode=ParseMode.HTML,
                link_preview_options=NO_PREVIEW,
                reply_markup=_markup(buttons),
            )
        except TelegramBadRequest as exc:
            # A double tap leaves the text unchanged; that is not an error worth a new message.
            if "not modified" not in exc.message.lower():
                raise
            return query.message
        return edited if isinstance(edited, Message) else query.message
    return await send(context, chat_id_of(update), text, buttons=buttons)


def url_button_allowed(url: str) -> bool:
    """Telegram refuses URL buttons whose host is not a dotted name (localhost, bare names)."""
    host = urlsplit(url).hostname or ""
    return "." in host.strip(".")


async def login_markup(
    context: Context, chat_id: int, lang: str
) -> tuple[str, InlineKeyboardMarkup | None]:
    """A fresh login state and the prompt that carries its authorize link."""
    svc = services(context)
    state = await svc.store.create_login_state(chat_id)
    fresh = (await svc.store.chat(chat_id)).fresh_login
    url = svc.library.authorize_url(
        redirect_uri=svc.settings.redirect_uri, state=state, force_login=fresh
    )
    # A local PUBLIC_URL means a local set-up: a text link works where a button would not.
    if url_button_allowed(url) and url_button_allowed(svc.settings.redirect_uri):
        button = InlineKeyboardButton(t(lang, "common.login_button"), url=url)
        return t(lang, "connect.login_prompt"), InlineKeyboardMarkup([[button]])
    return t(lang, "connect.login_prompt_link", url=url), None


async def send_login(
    context: Context, chat_id: int, lang: str, *, lead: str | None = None
) -> Message:
    """Send a login prompt (optionally after `lead`), falling back to a text link if refused."""
    text, markup = await login_markup(context, chat_id, lang)
    # With a button the lead says it all ("tap the button"); a text link needs its own line.
    body = (lead if markup is not None else f"{lead}\n\n{text}") if lead else text
    try:
        return await context.bot.send_message(
            chat_id,
            body,
            parse_mode=ParseMode.HTML,
            link_preview_options=NO_PREVIEW,
            reply_markup=markup,
        )
    except TelegramBadRequest as exc:
        if markup is None or "button_url_invalid" not in exc.message.lower():
            raise
    url = markup.inline_keyboard[0][0].url or ""
    link = t(lang, "connect.login_prompt_link", url=url)
    return await send(context, chat_id, f"{lead}\n\n{link}" if lead else link)


async def require_account(update: Update, context: Context) -> Account | None:
    """The chat's account, or None after telling the patron how to connect one."""
    chat_id = chat_id_of(update)
    store = services(context).store
    account = await store.account(chat_id)
    if account is not None and not _expired(account.token_expires_at):
        return account
    lang = await lang_of(update, context)
    if update.callback_query is not None:
        await _answer_query(update)
    if account is not None:
        # Expired: forget it now rather than let the platform refuse it later.
        await store.delete_account(chat_id)
        await store.set_account_ended(chat_id, "expired")
        await send_login(context, chat_id, lang, lead=t(lang, "common.login_expired"))
    else:
        ended = (await store.chat(chat_id)).account_ended
        await send_login(context, chat_id, lang, lead=t(lang, ENDED_TEXTS.get(ended or "", NEW)))
    return None


NEW = "common.not_connected"
# Why a chat has no account (`ChatSettings.account_ended`) -> what the patron is told.
ENDED_TEXTS = {
    "expired": "common.login_expired",
    "logged_out": "common.logged_out_before",
    "rejected": "common.reconnect",
}


def _expired(expires_at: datetime | None) -> bool:
    return expires_at is not None and expires_at <= datetime.now(UTC)


async def forget_rejected_token(context: Context, chat_id: int, lang: str | None = None) -> bool:
    """Forget a token the platform refused (401) and tell the patron once, with a login button.

    For jobs (reminders) that have no update. True when this call did the forgetting (and so
    sent the message); False when another task had already done it.
    """
    store = services(context).store
    account = await store.delete_account(chat_id)
    if account is None:
        return False
    await store.set_account_ended(chat_id, "rejected")
    lang = lang or await chat_lang(context, chat_id)
    try:
        await send_login(context, chat_id, lang, lead=t(lang, "common.reconnect"))
    except Forbidden:
        log.info("chat %s blocked the bot; not told about the refused token", chat_id)
    return True


async def answer_library_error(
    update: Update, context: Context, exc: LibraryError, lang: str
) -> None:
    """Turn a library failure into the patron-facing answer; never stays silent."""
    chat_id = chat_id_of(update)
    if update.callback_query is not None:
        await _answer_query(update)
    if isinstance(exc, TokenRejected):
        if not await forget_rejected_token(context, chat_id, lang):
            await send_login(context, chat_id, lang, lead=t(lang, "common.not_connected"))
        return
    log.warning("library call failed: %s (%s)", type(exc).__name__, exc.code or exc.status)
    if (exc.code or "").strip().lower() == USER_REFUSED:
        # The library system did not accept the patron (recorded for /v3/user): not an outage.
        await reply(update, context, t(lang, "common.user_refused", code=exc.code))
        return
    key = "common.unavailable" if isinstance(exc, ServiceUnavailable) else "common.malformed"
    await reply(update, context, t(lang, key))


USER_REFUSED = "user authentication failed"


class ButtonId(int):
    """In a payload given to `callback_buttons`: the stored id of button number n of the same
    batch (a "no" button that must know its "yes")."""


async def callback_buttons(
    update: Update, context: Context, specs: Sequence[tuple[str, str, dict[str, Any]]]
) -> list[InlineKeyboardButton]:
    """A command's inline buttons, (text, action, payload) each, stored in one transaction.

    Each is bound to the chat and to the user who sent the update: nobody else can press it.
    """
    ids = [new_callback_id() for _ in specs]
    rows = [
        (
            action,
            {k: ids[v] if isinstance(v, ButtonId) else v for k, v in payload.items()},
        )
        for _, action, payload in specs
    ]
    user = update.effective_user
    await services(context).store.put_callbacks(
        chat_id_of(update), rows, user_id=user.id if user else None, ids=ids
    )
    return [
        ref_button(text, action, ref_id)
        for (text, action, _), ref_id in zip(specs, ids, strict=True)
    ]


def ref_button(text: str, action: str, ref_id: str) -> InlineKeyboardButton:
    """The button for a payload already stored under `ref_id`: data "<action>:<ref_id>"."""
    data = f"{action}:{ref_id}"
    if len(data.encode()) > CALLBACK_DATA_LIMIT:
        raise ValueError(f"callback data for {action!r} exceeds {CALLBACK_DATA_LIMIT} bytes")
    return InlineKeyboardButton(text, callback_data=data)


async def _answer_query(update: Update, text: str | None = None) -> None:
    query = update.callback_query
    if query is None:
        return
    try:
        await query.answer(text)
    except TelegramError as exc:
        # Already answered or too old: the patron still gets the message that follows.
        log.debug("callback query not answered: %s", type(exc).__name__)


async def resolve_callback(
    update: Update, context: Context, *, claim: bool = False
) -> CallbackRef | None:
    """The stored payload behind a tapped button, answering the tap either way.

    `claim=True` makes the button single-use (the first tap wins). Unknown ids, buttons of
    another chat and used buttons get `common.stale_button` and None; a button shown to
    another user of the chat gets `common.not_your_button` and None.
    """
    query = update.callback_query
    assert query is not None
    chat_id = chat_id_of(update)
    user_id = query.from_user.id
    _, _, ref_id = (query.data or "").partition(":")
    store = services(context).store
    ref = None
    if ref_id:
        lookup = store.claim_callback if claim else store.callback
        ref = await lookup(ref_id, chat_id, user_id=user_id)
    outcome = "ok"
    if ref is None or (not claim and ref.used_at is not None):
        outcome = "claimed" if ref is not None else "stale"
        if ref is None and ref_id:
            owner = await store.callback_user(ref_id, chat_id)
            if owner is not None and owner != user_id:
                outcome = "foreign"
            elif claim:
                # A lost claim: tell "already used" apart from "unknown or expired" for metrics.
                seen = await store.callback(ref_id, chat_id, user_id=user_id)
                outcome = "claimed" if seen is not None and seen.used_at is not None else "stale"
    services(context).metrics.callback((query.data or "").partition(":")[0], outcome)
    if outcome != "ok":
        lang = await lang_of(update, context)
        key = "common.not_your_button" if outcome == "foreign" else "common.stale_button"
        await _answer_query(update, t(lang, key))
        return None
    await _answer_query(update)
    return ref


# --- private chats only -----------------------------------------------------------------------


def private_chat_guard() -> BaseHandler[Update, Any, None]:
    """The one gate every update passes first (group -1, before every area's handlers).

    Edited messages never re-run a command. In a group, supergroup or channel only `/start`
    without a code, `/help`, `/language` and its buttons get through; every other command or
    button addressed to the bot gets a pointer to a private chat and stops there, before any
    account, button or platform is touched. Commands for other bots in a group are left alone.
    """
    return TypeHandler(Update, _guard)


async def _guard(update: Update, context: Context) -> None:
    if update.edited_message or update.edited_channel_post or update.edited_business_message:
        raise ApplicationHandlerStop
    chat = update.effective_chat
    if chat is None or chat.type == ChatType.PRIVATE:
        return
    query = update.callback_query
    if query is not None:
        if (query.data or "").partition(":")[0] in GROUP_BUTTONS:
            return
        lang = await lang_of(update, context)
        await _answer_query(
            update, t(lang, "common.private_only_button", link=private_chat_link(context))
        )
        raise ApplicationHandlerStop
    command = _command(update, context)
    if command is None:
        return  # not a command: the fallback's hint
    name, addressed, has_args = command
    if not addressed:
        raise ApplicationHandlerStop  # another bot's command
    if name in GROUP_COMMANDS and not (name == "start" and has_args):
        return
    log.info("%s command refused in a %s chat", name, chat.type)
    lang = await lang_of(update, context)
    link = private_chat_link(context)
    buttons = None
    if url_button_allowed(link):
        buttons = [[InlineKeyboardButton(t(lang, "common.private_only_open"), url=link)]]
    await send(context, chat.id, t(lang, "common.private_only", link=link), buttons=buttons)
    raise ApplicationHandlerStop


def _command(update: Update, context: Context) -> tuple[str, bool, bool] | None:
    """(name, addressed to this bot, has arguments) of a command message, else None."""
    message = update.effective_message
    if message is None or not message.text or not message.entities:
        return None
    entity = message.entities[0]
    if entity.type != MessageEntityType.BOT_COMMAND or entity.offset != 0:
        return None
    word = message.text[1 : entity.length]
    name, _, target = word.partition("@")
    username = services(context).bot_username or context.bot.username or ""
    addressed = not target or target.lower() == username.lower()
    return name.lower(), addressed, bool(message.text[entity.length :].strip())


def private_chat_link(context: Context) -> str:
    """`{TELEGRAM_LINK_URL}/<bot username>`: opens the private chat with the bot."""
    svc = services(context)
    return svc.chat_link(username=svc.bot_username or context.bot.username)
