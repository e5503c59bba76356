"""The one place for what the patron sees of the bot: sending and editing messages, inline
buttons and their stored payloads, the login prompt, and the answer to a library failure.

Handlers and the reminder sweep both go through these, so a message looks and behaves the same
whoever sends it: HTML, no link previews, within Telegram's 4096 characters, callback data
within 64 bytes, URL buttons only for hosts Telegram accepts.
"""

from __future__ import annotations

import datetime as dt
import html
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions, Message
from telegram.constants import ParseMode
from telegram.error import BadRequest as TelegramBadRequest
from telegram.error import Forbidden, TelegramError
from telegram.ext import ContextTypes

from bot.library.errors import (
    LibraryError,
    NotLoggedIn,
    ServiceUnavailable,
    TokenRejected,
)
from bot.rules.renewals import due_key
from bot.services import services
from bot.telegram.buttons import ButtonId, ListPage, Payload, RenewAll, RenewLoan, encode
from bot.texts import Raw, pick_language, t
from bot.texts.formatting import MESSAGE_LIMIT, format_date, shorten
from storage.store import new_callback_id

if TYPE_CHECKING:
    from telegram import Update

    from bot.config.settings import Settings
    from bot.library.client import LibraryClient
    from bot.library.models import Loan
    from storage.store import Account, CallbackRef, ChatSettings, Store

__all__ = ["MESSAGE_LIMIT", "NO_PREVIEW"]

log = logging.getLogger(__name__)

Context = ContextTypes.DEFAULT_TYPE
Buttons = Sequence[Sequence[InlineKeyboardButton]]

NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
CALLBACK_DATA_LIMIT = 64
# Plain-text lengths of a title in a button label (a short one where more goes beside it) and
# in a stored payload.
BUTTON_TITLE = 40
SHORT_TITLE = 32
PAYLOAD_TITLE = 120
# Telegram allows 100 inline buttons per message; /renew keeps one for "renew all".
MAX_BUTTONS = 100
MAX_RENEW_BUTTONS = 99
# A digest names each loan on a button of its own only while there are this few.
MAX_DIGEST_RENEW_BUTTONS = 20
# `LibraryError.code` of a patron the library system did not accept (recorded for /v3/user).
USER_REFUSED = "user authentication failed"
# Where `chat_and_lang` leaves this update's settings read for `chat_settings` (PTB's chat_data).
SETTINGS_READ = "ui.settings_read"


# --- the chat and its language --------------------------------------------------------------


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
    if context.chat_data is not None:
        context.chat_data[SETTINGS_READ] = (update.update_id, settings)
    # Only a private chat's: in a group the sender's language is not the chat's, and a group
    # gets no row of its own (nothing is kept for groups).
    if code and chat.type == "private" and code[:16] != settings.telegram_language:
        await store.set_telegram_language(chat.id, code)
    return settings, pick_language(settings.language, code or settings.telegram_language)


async def chat_settings(update: Update, context: Context) -> ChatSettings:
    """The chat's settings as `chat_and_lang` read them for this update, else read now: a
    command's helpers share one read (each costs a database round trip per command)."""
    found = context.chat_data.get(SETTINGS_READ) if context.chat_data is not None else None
    if isinstance(found, tuple) and found[0] == update.update_id:
        settings: ChatSettings = found[1]
        return settings
    return await services(context).store.chat(chat_id_of(update))


async def chat_lang(context: Context, chat_id: int) -> str:
    """Like `lang_of` for jobs, which have no update: the saved language, else Telegram's."""
    chat = await services(context).store.chat(chat_id)
    return pick_language(chat.language, chat.telegram_language)


def today_in(context: Context) -> dt.date:
    """Today in the bot's time zone, which is what due dates are compared against."""
    return dt.datetime.now(services(context).settings.timezone).date()


# --- sending --------------------------------------------------------------------------------


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
) -> Message:
    """Send an HTML message without link previews (for jobs and replies alike)."""
    return await bot.send_message(
        chat_id,
        text,
        parse_mode=ParseMode.HTML,
        link_preview_options=NO_PREVIEW,
        reply_markup=markup(buttons),
    )


async def reply(
    update: Update,
    context: Context,
    text: str,
    *,
    buttons: Buttons | InlineKeyboardMarkup | None = None,
) -> Message:
    """Answer an update: edit the tapped message for a callback, else send a new message."""
    query = update.callback_query
    if query is not None and isinstance(query.message, Message):
        try:
            edited = await query.message.edit_text(
                text,
                parse_mode=ParseMode.HTML,
                link_preview_options=NO_PREVIEW,
                reply_markup=markup(buttons),
            )
        except TelegramBadRequest as exc:
            # A double tap leaves the text unchanged; that is not an error worth a new message.
            if "not modified" not in exc.message.lower():
                raise
            return query.message
        return edited if isinstance(edited, Message) else query.message
    return await send(context.bot, chat_id_of(update), text, buttons=buttons)


async def send_messages(
    update: Update, context: Context, messages: Sequence[str], buttons: Buttons | None = None
) -> None:
    """Send split messages (`texts.formatting.split_messages`) in order; buttons go under the
    last one."""
    chat_id = chat_id_of(update)
    for index, text in enumerate(messages):
        last = index == len(messages) - 1
        await send(context.bot, chat_id, text, buttons=buttons if last else None)


# --- buttons --------------------------------------------------------------------------------


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


def ref_button(text: str, action: str, ref_id: str) -> InlineKeyboardButton:
    """The button for a payload already stored under `ref_id`: data "<action>:<ref_id>"."""
    data = f"{action}:{ref_id}"
    if len(data.encode()) > CALLBACK_DATA_LIMIT:
        raise ValueError(f"callback data for {action!r} exceeds {CALLBACK_DATA_LIMIT} bytes")
    return InlineKeyboardButton(text, callback_data=data)


def stored_rows(specs: Sequence[tuple[str, Payload]]) -> list[tuple[str, dict[str, Any]]]:
    """(action, JSON payload) per (label, payload), as `Store.put_callbacks` takes them."""
    return [(payload.ACTION, encode(payload)) for _, payload in specs]


def stored_buttons(
    specs: Sequence[tuple[str, Payload]], ids: Sequence[str]
) -> list[InlineKeyboardButton]:
    """The buttons for `specs` once stored under `ids`."""
    return [
        ref_button(label, payload.ACTION, ref_id)
        for (label, payload), ref_id in zip(specs, ids, strict=True)
    ]


async def callback_buttons(
    update: Update, context: Context, specs: Sequence[tuple[str, Payload]]
) -> list[InlineKeyboardButton]:
    """A command's inline buttons, (label, payload) each, stored in one transaction.

    Each is bound to the chat and to the user who sent the update: nobody else can press it.
    A `ButtonId` in a payload becomes the stored id of that button of the batch.
    """
    ids = await store_payloads(update, context, [payload for _, payload in specs])
    return stored_buttons(specs, ids)


async def store_payloads(
    update: Update, context: Context, payloads: Sequence[Payload]
) -> list[str]:
    """Store `payloads` as `callback_buttons` does (bound to the chat and user, `ButtonId`s made
    stored ids of the batch); their stored ids in order."""
    ids = [new_callback_id() for _ in payloads]
    rows = [(payload.ACTION, _bind(encode(payload), ids)) for payload in payloads]
    user = update.effective_user
    await services(context).store.put_callbacks(
        chat_id_of(update), rows, user_id=user.id if user else None, ids=ids
    )
    return ids


def _bind(value: Any, ids: Sequence[str]) -> Any:
    """`value` with each `ButtonId` in it (also inside lists and dicts) made a stored id."""
    if isinstance(value, ButtonId):
        return ids[int(value)]
    if isinstance(value, dict):
        return {key: _bind(item, ids) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_bind(item, ids) for item in value]
    return value


def page_button(label: str, ref_id: str, page: int) -> InlineKeyboardButton:
    """A button showing page `page` of the long list stored under `ref_id` (`ListPage`)."""
    return ref_button(label, ListPage.ACTION, f"{ref_id}:{page}")


def page_row(lang: str, ref_id: str, page: int, pages: int) -> list[InlineKeyboardButton]:
    """◀ page/pages ▶ under a long list (no ◀ on the first page, no ▶ on the last); the middle
    button shows the same page again, fresh."""
    row = []
    if page > 0:
        row.append(page_button(t(lang, "borrower.page.previous"), ref_id, page - 1))
    position = t(lang, "borrower.page.position", page=page + 1, pages=pages)
    row.append(page_button(position, ref_id, page))
    if page < pages - 1:
        row.append(page_button(t(lang, "borrower.page.next"), ref_id, page + 1))
    return row


def one_per_row(buttons: Sequence[InlineKeyboardButton]) -> list[list[InlineKeyboardButton]]:
    return [[button] for button in buttons]


async def answer_query(update: Update, text: str | None = None) -> None:
    """Answer the tapped button (a toast when `text`); never fails the update."""
    query = update.callback_query
    if query is None:
        return
    try:
        await query.answer(text)
    except TelegramError as exc:
        # Already answered or too old: the patron still gets the message that follows.
        log.debug("callback query not answered: %s", type(exc).__name__)


def ref_id_of(update: Update) -> str:
    """The stored callback row a tapped button points at (`<action>:<id>`)."""
    query = update.callback_query
    if query is None:
        return ""
    # "<action>:<id>", or "<action>:<id>:<page>" for a page of a long list.
    parts = str(query.data or "").split(":", 2)
    return parts[1] if len(parts) > 1 else ""


async def peek_callback(update: Update, context: Context) -> CallbackRef | None:
    """The tapped button's row without answering the tap or using it up."""
    ref_id = ref_id_of(update)
    if not ref_id:
        return None
    return await services(context).store.callback(ref_id, chat_id_of(update))


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
    ref_id = ref_id_of(update)
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
        await answer_query(update, t(lang, key))
        return None
    await answer_query(update)
    return ref


async def claim_once(
    update: Update,
    context: Context,
    lang: str,
    already_key: str,
    *,
    require: Callable[[Update, Context], Awaitable[Account | None]] | None = None,
) -> tuple[Account, CallbackRef] | None:
    """The account and the tapped button's row, for a button that acts exactly once.

    The row is claimed atomically only once the patron is known to be connected (`require`
    finds the account the button acts for: the chat's card 1 unless given). A later tap, or one
    that loses a race, is told `already_key` instead of "stale button".
    """
    query = update.callback_query
    assert query is not None
    peek = await peek_callback(update, context)
    if peek is not None and peek.used_at is not None:
        services(context).metrics.callback(peek.action, "claimed")
        await answer_query(update, t(lang, already_key))
        return None
    ref = await resolve_callback(update, context)
    if ref is None:
        again = await peek_callback(update, context)
        if again is not None and again.used_at is not None:
            await send(context.bot, chat_id_of(update), t(lang, already_key))
        return None
    account = await (require or require_account)(update, context)
    if account is None:
        return None
    if await services(context).store.claim_callback(ref.id, chat_id_of(update)) is None:
        await send(context.bot, chat_id_of(update), t(lang, already_key))
        return None
    return account, ref


def renew_payload(loan: Loan, lang: str, card: int = 1) -> RenewLoan:
    """A loan's renew button, as /renew and reminder digests store it."""
    title = loan.title or t(lang, "render.untitled")
    return RenewLoan(loan.loan_id, shorten(title, PAYLOAD_TITLE), due_key(loan), card)


def renew_buttons(
    loans: Sequence[Loan],
    lang: str,
    *,
    every: Sequence[Loan],
    today: dt.date | None = None,
    digest: bool = False,
    card: int = 1,
    owner: str | None = None,
) -> list[tuple[str, Payload]]:
    """(label, payload) of the renew buttons for `loans` of card `card`, and "renew all" for
    `every` listed.

    /renew puts "renew all" first and names each loan with its due date; a reminder digest
    names each loan only while there are few, and puts "renew all" last, naming the card's
    `owner` when the digest is a family's.
    """
    if not loans:
        return []
    renew_all = RenewAll(tuple(loan.loan_id for loan in every), card=card)
    if digest:
        specs: list[tuple[str, Payload]] = []
        if len(loans) <= MAX_DIGEST_RENEW_BUTTONS:
            for loan in loans:
                title = shorten(loan.title, SHORT_TITLE) or "?"
                label = plain(t(lang, "reminders.button.renew", title=title))
                specs.append((label, renew_payload(loan, lang, card)))
        every_label = (
            t(lang, "reminders.button.renew_all")
            if owner is None
            else plain(t(lang, "card.renew_all", name=owner))
        )
        specs.append((every_label, renew_all))
        return specs
    specs = [(t(lang, "borrower.renew.all"), renew_all)]
    for loan in loans[:MAX_RENEW_BUTTONS]:
        label = t(
            lang,
            "borrower.renew.button",
            title=Raw(shorten(loan.title or t(lang, "render.untitled"), SHORT_TITLE)),
            due=Raw(format_date(loan.due_date, lang, today=today)),
        )
        specs.append((label, renew_payload(loan, lang, card)))
    return specs


# --- the login prompt and accounts ----------------------------------------------------------


@dataclass(frozen=True)
class LoginPrompt:
    """A message that leads to the library login: `text` with a URL button (`markup`), or,
    where Telegram would refuse the button, a text link in `text`."""

    text: str
    markup: InlineKeyboardMarkup | None
    url: str
    lead: str | None
    lang: str

    def as_link(self) -> str:
        """The same prompt with a text link instead of the button."""
        link = t(self.lang, "connect.login_prompt_link", url=self.url)
        return f"{self.lead}\n\n{link}" if self.lead else link


async def login_prompt(
    store: Store,
    library: LibraryClient,
    settings: Settings,
    chat_id: int,
    lang: str,
    *,
    lead: str | None = None,
    button: str = "common.login_button",
) -> LoginPrompt:
    """A fresh login state and the prompt that carries its authorize link, after `lead`.

    With a button the lead says it all ("tap the button"); a text link needs its own line.
    """
    state = await store.create_login_state(chat_id)
    fresh = (await store.chat(chat_id)).fresh_login
    url = library.authorize_url(redirect_uri=settings.redirect_uri, state=state, force_login=fresh)
    # A local PUBLIC_URL means a local set-up: a text link works where a button would not.
    local = not url_button_allowed(settings.redirect_uri)
    keyboard = None if local else url_button(t(lang, button), url)
    if keyboard is not None:
        return LoginPrompt(lead or t(lang, "connect.login_prompt"), keyboard, url, lead, lang)
    prompt = LoginPrompt("", None, url, lead, lang)
    return replace(prompt, text=prompt.as_link())


async def send_login(
    context: Context, chat_id: int, lang: str, *, lead: str | None = None
) -> Message:
    """Send a login prompt (optionally after `lead`), falling back to a text link if refused."""
    svc = services(context)
    prompt = await login_prompt(svc.store, svc.library, svc.settings, chat_id, lang, lead=lead)
    try:
        return await send(context.bot, chat_id, prompt.text, buttons=prompt.markup)
    except TelegramBadRequest as exc:
        if prompt.markup is None or "button_url_invalid" not in exc.message.lower():
            raise
    return await send(context.bot, chat_id, prompt.as_link())


NEW = "common.not_connected"
# Why a chat has no account (`ChatSettings.account_ended`) -> what the patron is told.
ENDED_TEXTS = {
    "expired": "common.login_expired",
    "logged_out": "common.logged_out_before",
    "rejected": "common.reconnect",
}


def _expired(expires_at: datetime | None) -> bool:
    return expires_at is not None and expires_at <= datetime.now(UTC)


async def require_account(
    update: Update, context: Context, card: int | None = None, *, known: list[Account] | None = None
) -> Account | None:
    """The chat's card `card` (None: its first), or None after telling the patron how to
    connect one. `known`: the chat's cards, when the caller has read them already."""
    chat_id = chat_id_of(update)
    store = services(context).store
    if card is None:
        cards = known if known is not None else await store.cards(chat_id)
        account = cards[0] if cards else None
    else:
        account = await store.account(chat_id, card)
    if account is not None and not _expired(account.token_expires_at):
        return account
    lang = await lang_of(update, context)
    if update.callback_query is not None:
        await answer_query(update)
    if account is not None:
        # Expired: forget it now rather than let the platform refuse it later.
        await store.delete_account(chat_id, account.card)
        await store.set_account_ended(chat_id, "expired")
        await send_login(context, chat_id, lang, lead=t(lang, "common.login_expired"))
    else:
        ended = (await store.chat(chat_id)).account_ended
        await send_login(context, chat_id, lang, lead=t(lang, ENDED_TEXTS.get(ended or "", NEW)))
    return None


async def forget_rejected_token(
    context: Context, chat_id: int, lang: str | None = None, card: int = 1
) -> bool:
    """Forget a token the platform refused (401) and tell the patron once, with a login button.

    True when this call did the forgetting (and so sent the message); False when another task
    had already done it.
    """
    store = services(context).store
    account = await store.delete_account(chat_id, card)
    if account is None:
        return False
    await store.set_account_ended(chat_id, "rejected")
    lang = lang or await chat_lang(context, chat_id)
    try:
        await send_login(context, chat_id, lang, lead=t(lang, "common.reconnect"))
    except Forbidden:
        log.info("chat %s blocked the bot; not told about the refused token", chat_id)
    return True


# --- failures -------------------------------------------------------------------------------


def error_text(lang: str, error: BaseException | None) -> str:
    """What the patron is told about a failure: the library not answering, refusing the patron
    as a borrower, or answering something unreadable; anything else is the bot's own fault."""
    if not isinstance(error, LibraryError):
        return t(lang, "common.error")
    if (error.code or "").strip().lower() == USER_REFUSED:
        # The library system did not accept the patron (recorded for /v3/user, as a 500):
        # not an outage.
        return t(lang, "common.user_refused", code=error.code)
    if isinstance(error, ServiceUnavailable):
        return t(lang, "common.unavailable")
    return t(lang, "common.malformed")


def public_failure(exc: LibraryError) -> LibraryError:
    """A refused anonymous token is the bot's problem, never a reason to log the patron out."""
    if isinstance(exc, TokenRejected | NotLoggedIn):
        return ServiceUnavailable("the anonymous token was refused", code=exc.code)
    return exc


async def answer_library_error(
    update: Update,
    context: Context,
    exc: LibraryError,
    lang: str,
    *,
    edit: bool = True,
    card: int = 1,
) -> None:
    """Turn a library failure into the patron-facing answer; never stays silent.

    A refused token is forgotten and the patron asked to log in again. Otherwise the answer
    replaces the tapped message (`edit`), or comes as a new one so a tapped list or digest
    stays in the chat.
    """
    chat_id = chat_id_of(update)
    if update.callback_query is not None:
        await answer_query(update)
    if isinstance(exc, TokenRejected):
        if not await forget_rejected_token(context, chat_id, lang, card):
            await send_login(context, chat_id, lang, lead=t(lang, NEW))
        return
    log.warning("library call failed: %s (%s)", type(exc).__name__, exc.code or exc.status)
    if edit:
        await reply(update, context, error_text(lang, exc))
    else:
        await send(context.bot, chat_id, error_text(lang, exc))
