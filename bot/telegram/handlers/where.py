"""/where <material id | words>, and the "🗺 Where is it?" buttons: where a title stands at the
library of each of the chat's cards (`/v3/holdingsitems`), branch by branch with its place.

Each library is asked once, however many of the chat's cards belong to it, with the anonymous
token (holdings are public). A chat without a card is asked which library: the name of the
library, its town or a branch, typed as the next message (remembered in this process's
`chat_data`, as the pick-up branch picker is), matched against every library `/v3/libraries`
lists. Words find the best catalogue hit, and the answer says how to find
another. An "Order" button is offered where the title can be ordered at all (not net-only).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from telegram import ForceReply
from telegram.constants import ParseMode
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler

from bot.actions import cards as card_actions
from bot.actions import watches as shelf_watches
from bot.actions.ordering import net_only
from bot.actions.vocabulary import MAX_WATCHES
from bot.library.deadline import Deadline
from bot.library.errors import LibraryError
from bot.rules.isil import branch_key
from bot.telegram.buttons import OrderFound, Payload, WatchShelf, WhereIs, decode
from bot.telegram.cards import identities, require_card
from bot.telegram.context import Context
from bot.telegram.handlers.order import valid_pid
from bot.telegram.handlers.search import MAX_QUERY, clean_query, to_cql
from bot.telegram.keyboards import callback_buttons, one_per_row, resolve_callback
from bot.telegram.replies import NO_PREVIEW, Buttons, plain, reply, send, send_messages
from bot.texts import t
from bot.texts.formatting import shorten, split_messages
from bot.texts.render import render_copies, watch_line

if TYPE_CHECKING:
    from collections.abc import Sequence

    from telegram import Update

    from bot.actions.vocabulary import Card
    from bot.library.models import Copy, Work

ECHO_LIMIT = 60
# Watch buttons per library under /where, and how much of a title and a branch they carry.
MAX_WATCH_BUTTONS = 4
WATCH_TITLE = 80
WATCH_BRANCH = 40
UNWATCH_TITLE = 30
# A chat without a card: which title waits for the library's name, and for how long.
AWAITING_LIBRARY = "where_library"
LIBRARY_SECONDS = 600.0
MAX_LIBRARY_CHOICES = 8


async def where_command(update: Update, context: Context) -> None:
    lang = context.lang
    words = clean_query(" ".join(context.args or []))
    if not words or len(words) > MAX_QUERY:
        await reply(update, context, t(lang, "shelf.usage"))
        return
    await show_where(update, context, words)


async def where_callback(update: Update, context: Context) -> None:
    ref = await resolve_callback(update, context, asks=True)
    if ref is None:
        return
    tapped = decode(ref.payload, WhereIs)
    if tapped is None or not valid_pid(tapped.pid):
        await send(context.bot, context.chat_id, t(context.lang, "common.stale_button"))
        return
    await show_where(update, context, tapped.pid, new_message=True, agency=tapped.agency)


async def show_where(
    update: Update,
    context: Context,
    wanted: str,
    *,
    new_message: bool = False,
    agency: str | None = None,
) -> None:
    """Where `wanted` (a material id, or words to search for) stands at the chat's libraries,
    or at `agency` (chosen by a chat without a card)."""
    lang = context.lang
    svc = context.services
    cards = await card_actions.of_chat(svc, context.chat_id)
    # Each library once, with the first of its cards (whose watches its buttons keep).
    first: dict[str, Card] = {}
    for each in cards:
        if each.agency:
            first.setdefault(branch_key(each.agency), each)
    agencies = [branch_key(agency)] if agency else list(first)
    deadline = Deadline()
    try:
        work = await _find(context, wanted, deadline)
        if work is None or not work.pid:
            echo = shorten(wanted, ECHO_LIMIT)
            await _answer(
                update, context, t(lang, "shelf.not_found", words=echo), new_message=new_message
            )
            return
        pid = work.pid
        if not agencies:
            await ask_library(context, pid, work.title or t(lang, "render.untitled"))
            return
        found = await deadline.run(
            asyncio.gather(*(svc.library.holdings_public(a, [pid]) for a in agencies))
        )
        names = await asyncio.gather(
            *(svc.branches.library_name(svc.library, a, deadline) for a in agencies)
        )
    except (LibraryError, TimeoutError):
        await _answer(update, context, t(lang, "shelf.failed"), new_message=new_message)
        return
    title = work.title or t(lang, "render.untitled")
    parts: list[str] = []
    specs: list[tuple[str, Payload]] = []
    if not net_only(work):
        specs.append((t(lang, "shelf.order_button"), OrderFound(pid, cids=identities(cards))))
    for asked, name, holdings in zip(agencies, names, found, strict=True):
        library = name or asked
        copies = [copy for holding in holdings for copy in holding.holdingsitems]
        lines = render_copies(copies, lang)
        if not copies:
            lines = [t(lang, "shelf.no_copies", library=library)]
        elif not any(copy.on_shelf for copy in copies):
            lines.insert(0, t(lang, "shelf.none_on_shelf", library=library))
        parts.append("\n".join([t(lang, "shelf.header", title=title, library=library), *lines]))
        card = first.get(asked)
        waiting = waiting_branches(copies)
        if card is None:
            if waiting:  # a watch is kept for a card: the way to one
                parts[-1] += "\n" + t(lang, "shelf.login_to_watch")
            continue
        short = shorten(title, WATCH_TITLE)
        specs += [
            (
                plain(t(lang, "shelf.watch_button", branch=shorten(branch, WATCH_BRANCH))),
                WatchShelf(pid, branch, asked, short, card.number, card.card_id),
            )
            for branch in waiting
        ]
    if not valid_pid(wanted):
        parts.append(t(lang, "shelf.other_title", words=shorten(wanted, ECHO_LIMIT)))
    buttons = one_per_row(await callback_buttons(update, context, specs)) if specs else None
    # Many cards at large libraries can run past one message: then one message per few.
    messages = split_messages(parts)
    if len(messages) > 1:
        await send_messages(update, context, messages, buttons)
        return
    await _answer(update, context, messages[0], buttons=buttons, new_message=new_message)


async def ask_library(context: Context, pid: str, title: str) -> None:
    """A chat without a card: which library to look in; its next message is the answer."""
    lang = context.lang
    context.ask(AWAITING_LIBRARY, pid)
    await context.bot.send_message(
        context.chat_id,
        t(lang, "shelf.which_library", title=shorten(title, WATCH_TITLE)),
        parse_mode=ParseMode.HTML,
        link_preview_options=NO_PREVIEW,
        reply_markup=ForceReply(input_field_placeholder=t(lang, "shelf.library_placeholder")),
    )


async def typed_library(update: Update, context: Context, text: str) -> bool:
    """The library's name typed while /where waits for it (a chat without a card): the
    shelves there, or a choice among the libraries the name fits. False when /where waits for
    nothing, so the text is what it would otherwise be (a search)."""
    waiting = context.asked(AWAITING_LIBRARY, LIBRARY_SECONDS)
    if waiting is None:
        return False
    [pid] = waiting
    lang = context.lang
    svc = context.services
    try:
        found = await svc.branches.libraries_named(svc.library, text, Deadline())
    except LibraryError:
        await reply(update, context, t(lang, "shelf.failed"))
        return True
    if not found:  # still waiting: the patron may try another name
        echo = shorten(text, ECHO_LIMIT)
        await reply(update, context, t(lang, "shelf.library_unknown", words=echo))
        return True
    context.answered(AWAITING_LIBRARY)
    if len(found) == 1:
        await show_where(update, context, pid, agency=found[0][0])
        return True
    specs: list[tuple[str, Payload]] = [
        (shorten(name, WATCH_BRANCH), WhereIs(pid, agency))
        for agency, name in found[:MAX_LIBRARY_CHOICES]
    ]
    buttons = one_per_row(await callback_buttons(update, context, specs))
    await reply(update, context, t(lang, "shelf.library_choose"), buttons=buttons)
    return True


def waiting_branches(copies: Sequence[Copy]) -> list[str]:
    """The branches with a copy that is lent out and none on the shelf: where a patron may
    wait for it to come back (a copy only to read there never comes home to lend)."""
    shelved = {copy.branch for copy in copies if copy.on_shelf}
    lent = {c.branch for c in copies if not c.on_shelf and not c.not_for_loan and c.branch}
    return sorted(lent - shelved)[:MAX_WATCH_BUTTONS]


async def _find(context: Context, wanted: str, deadline: Deadline) -> Work | None:
    """The work of a material id, or the best catalogue hit for words."""
    library = context.services.library
    if valid_pid(wanted):
        works = await deadline.run(library.work_public([wanted]))
        return next((w for w in works if w.pid == wanted), None)
    cql = to_cql(wanted)
    if not cql:
        return None
    result = await deadline.run(library.search_public(cql, limit=1))
    return result.works[0] if result.works else None


async def _answer(
    update: Update,
    context: Context,
    text: str,
    *,
    buttons: Buttons | None = None,
    new_message: bool,
) -> None:
    """A tapped button's answer comes as a new message, so the list it was in stays."""
    if new_message:
        await send(context.bot, context.chat_id, text, buttons=buttons)
    else:
        await reply(update, context, text, buttons=buttons)


async def watch_callback(update: Update, context: Context) -> None:
    """ "🔔 Tell me when it is back at <branch>" keeps a watch for the card that made it (gone:
    it says so); /watches' "✖ Stop" ends one."""
    ref = await resolve_callback(update, context)
    if ref is None:
        return
    lang = context.lang
    chat_id = context.chat_id
    tapped = decode(ref.payload, WatchShelf)
    if tapped is None or not valid_pid(tapped.pid):
        await send(context.bot, chat_id, t(lang, "common.stale_button"))
        return
    names = {"title": tapped.title, "branch": tapped.branch}
    # The card the button was made for, by identity: a gone card's says so, and stops nothing
    # of the card that holds its number now.
    card = await require_card(context, tapped=tapped)
    if card is None:
        return
    if tapped.stop:
        gone = await shelf_watches.unwatch(context.services, card, tapped.pid, tapped.branch)
        key = "shelf.unwatched" if gone else "shelf.unwatched_already"
        await send(context.bot, chat_id, t(lang, key, **names))
        return
    added = await shelf_watches.watch(
        context.services, card, tapped.pid, tapped.branch, tapped.agency, tapped.title
    )
    if added == "full":
        text = t(lang, "shelf.watch_full", count=MAX_WATCHES)
    elif added == "taken":
        text = t(lang, "shelf.watch_taken", title=tapped.title)
    else:
        text = t(lang, "shelf.watch_added" if added == "added" else "shelf.watch_exists", **names)
    await send(context.bot, chat_id, text)


async def watches_command(update: Update, context: Context) -> None:
    """/watches: the titles the chat waits for, each with a button that stops it."""
    lang = context.lang
    watches = await shelf_watches.of_chat(context.services, context.chat_id)
    if not watches:
        await reply(update, context, t(lang, "shelf.watches_none"))
        return
    tz = context.services.settings.timezone
    lines = [
        watch_line(
            watch.title, watch.branch, watch.created_at.astimezone(tz).date(), context.today, lang
        )
        for watch in watches
    ]
    cids = {
        card.number: card.card_id
        for card in await card_actions.of_chat(context.services, context.chat_id)
    }
    specs: list[tuple[str, Payload]] = [
        (
            t(
                lang,
                "shelf.unwatch_button",
                title=shorten(watch.title, UNWATCH_TITLE),
                branch=shorten(watch.branch, WATCH_BRANCH),
            ),
            WatchShelf(
                watch.pid,
                watch.branch,
                watch.agency,
                watch.title,
                watch.number,
                cids.get(watch.number),
                stop=True,
            ),
        )
        for watch in watches
    ]
    buttons = one_per_row(await callback_buttons(update, context, specs))
    text = "\n".join([t(lang, "shelf.watches_header"), *lines])
    await reply(update, context, text, buttons=buttons)


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [
        CommandHandler("where", where_command),
        CommandHandler("watches", watches_command),
        CallbackQueryHandler(where_callback, pattern=rf"^{WhereIs.ACTION}:"),
        CallbackQueryHandler(watch_callback, pattern=rf"^{WatchShelf.ACTION}:"),
    ]
