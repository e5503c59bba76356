"""/cards: the chat's library cards, each with "✏️ Rename" and "🚪 Log out" (which asks first).

Rename asks for the name with a ForceReply prompt that names the card by number; the answer is
recognised by the prompt it replies to (`is_rename_reply`), so any process of the bot knows
which card it is for, and the free-text search never sees it (this area comes before the
fallback).
"""

from __future__ import annotations

import html
import re
import time
import unicodedata
from collections.abc import Mapping, Sequence
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from telegram import ForceReply, InlineKeyboardButton, Message, Update
from telegram.constants import ParseMode
from telegram.ext import BaseHandler, CallbackQueryHandler, CommandHandler, MessageHandler, filters

from bot.actions import cards as card_actions
from bot.actions.vocabulary import MAX_CARDS
from bot.library.deadline import Deadline
from bot.rules.isil import branch_key
from bot.telegram.buttons import LogoutAsk, Payload, RenameCard, decode
from bot.telegram.cards import login_buttons, require_card
from bot.telegram.context import Context
from bot.telegram.keyboards import callback_buttons, overview_rows, resolve_callback
from bot.telegram.replies import NO_PREVIEW, plain, reply, send
from bot.texts import LANGUAGES, Raw, t
from bot.texts.cards import card_name

if TYPE_CHECKING:
    from bot.actions.vocabulary import Card

# Municipality codes (the userinfo `municipality`) to names, for the "connected" message.
MUNICIPALITIES: Mapping[str, str] = MappingProxyType(
    {
        "101": "København",
        "147": "Frederiksberg",
        "151": "Ballerup",
        "153": "Brøndby",
        "155": "Dragør",
        "157": "Gentofte",
        "159": "Gladsaxe",
        "161": "Glostrup",
        "163": "Herlev",
        "165": "Albertslund",
        "167": "Hvidovre",
        "169": "Høje-Taastrup",
        "173": "Lyngby-Taarbæk",
        "175": "Rødovre",
        "183": "Ishøj",
        "185": "Tårnby",
        "187": "Vallensbæk",
        "190": "Furesø",
        "201": "Allerød",
        "210": "Fredensborg",
        "217": "Helsingør",
        "219": "Hillerød",
        "223": "Hørsholm",
        "230": "Rudersdal",
        "240": "Egedal",
        "250": "Frederikssund",
        "253": "Greve",
        "259": "Køge",
        "260": "Halsnæs",
        "265": "Roskilde",
        "269": "Solrød",
        "270": "Gribskov",
        "306": "Odsherred",
        "316": "Holbæk",
        "320": "Faxe",
        "326": "Kalundborg",
        "329": "Ringsted",
        "330": "Slagelse",
        "336": "Stevns",
        "340": "Sorø",
        "350": "Lejre",
        "360": "Lolland",
        "370": "Næstved",
        "376": "Guldborgsund",
        "390": "Vordingborg",
        "400": "Bornholm",
        "410": "Middelfart",
        "420": "Assens",
        "430": "Faaborg-Midtfyn",
        "440": "Kerteminde",
        "450": "Nyborg",
        "461": "Odense",
        "479": "Svendborg",
        "480": "Nordfyns",
        "482": "Langeland",
        "492": "Ærø",
        "510": "Haderslev",
        "530": "Billund",
        "540": "Sønderborg",
        "550": "Tønder",
        "561": "Esbjerg",
        "563": "Fanø",
        "573": "Varde",
        "575": "Vejen",
        "580": "Aabenraa",
        "607": "Fredericia",
        "615": "Horsens",
        "621": "Kolding",
        "630": "Vejle",
        "657": "Herning",
        "661": "Holstebro",
        "665": "Lemvig",
        "671": "Struer",
        "706": "Syddjurs",
        "707": "Norddjurs",
        "710": "Favrskov",
        "727": "Odder",
        "730": "Randers",
        "740": "Silkeborg",
        "741": "Samsø",
        "746": "Skanderborg",
        "751": "Aarhus",
        "756": "Ikast-Brande",
        "760": "Ringkøbing-Skjern",
        "766": "Hedensted",
        "773": "Morsø",
        "779": "Skive",
        "787": "Thisted",
        "791": "Viborg",
        "810": "Brønderslev",
        "813": "Frederikshavn",
        "820": "Vesthimmerlands",
        "825": "Læsø",
        "840": "Rebild",
        "846": "Mariagerfjord",
        "849": "Jammerbugt",
        "851": "Aalborg",
        "860": "Hjørring",
    }
)
# Municipalities whose name other languages write their own way (English "Copenhagen").
MUNICIPALITY_TEXTS: Mapping[str, str] = MappingProxyType({"101": "connect.municipality_101"})
# How long a rename prompt waits for its answer when the answer is not a reply to it.
RENAME_SECONDS = 600.0
# A card's name: what /v3/user's first word or the patron gives, kept short for buttons.
LABEL_LIMIT = 32
# Seconds a card's library name may take to look up; its holder's municipality otherwise.
LIBRARY_NAME_BUDGET = 3.0


async def library_name(
    context: Context,
    card: Card,
) -> str | None:
    """The patron's municipality by name: the only place the bot keeps (userinfo's
    `municipality`); agencies and everything else userinfo may carry are not kept."""
    lang = context.lang
    municipality = card.municipality
    if municipality:
        code = municipality.strip().lstrip("0")
        if code in MUNICIPALITY_TEXTS:
            return t(lang, MUNICIPALITY_TEXTS[code])
        if code in MUNICIPALITIES:
            return MUNICIPALITIES[code]
        return t(lang, "connect.municipality", code=municipality)
    return None


def clean_label(text: str | None) -> str | None:
    """`text` as a card name: no control or format characters, single-spaced, at most 32
    characters; None when nothing is left."""
    kept = "".join(
        " " if unicodedata.category(char).startswith("C") else char for char in text or ""
    )
    label = " ".join(kept.split())
    return label[:LABEL_LIMIT] or None


def first_name(name: str | None) -> str | None:
    """The card's label from `/v3/user` `name`: its first word only (nothing more is kept)."""
    words = (clean_label(name) or "").split()
    return clean_label(words[0].rstrip(",")) if words else None


def owner(card: Card, lang: str) -> Raw:
    """ "Karen's card" (Danish "Karens kort"), or "Card 2" for a card without a name."""
    if not card.label:
        return Raw(html.escape(card_name(card, lang)))
    key = "cards.owner_s" if card.label[-1:].lower() in "sxz" else "cards.owner"
    return Raw(t(lang, key, name=card.label))


async def card_library(
    context: Context,
    card: Card,
) -> str | None:
    """Where the card belongs: its library (`/v3/user` `agency`) by the name `/v3/libraries`
    gives its main branch, for a family's cards may be at several libraries; else, as for one
    card, the holder's municipality."""
    agency = card.agency
    if agency:
        svc = context.services
        deadline = Deadline(LIBRARY_NAME_BUDGET)
        found = await svc.branches.library_name(svc.library, agency, deadline)
        if found:
            return found
        # No `agencyName`: the name of the branch that is the agency itself.
        names = await svc.branches.lookup(svc.library, [agency], deadline)
        found = names.get(branch_key(agency))
        if found:
            return found
    return await library_name(context, card)


async def card_lines(
    context: Context,
    cards: Sequence[Card],
) -> str:
    """The chat's cards, one line each: number, name and library."""
    lang = context.lang
    lines = [t(lang, "cards.header", count=len(cards), max=MAX_CARDS)]
    # Numbered 1..n as listed: the stored numbers keep the gaps a logout leaves.
    for number, card in enumerate(cards, start=1):
        name = card_name(card, lang)
        if card.is_lapsed:  # its login button comes under the list
            lines.append(t(lang, "cards.line_lapsed", number=number, name=name))
            continue
        library = await card_library(context, card)
        if library:
            lines.append(t(lang, "cards.line", number=number, name=name, library=library))
        else:
            lines.append(t(lang, "cards.line_plain", number=number, name=name))
    return "\n".join(lines)


async def cards_command(update: Update, context: Context) -> None:
    lang = context.lang
    svc = context.services
    # Lapsed cards too, each with its login button: only /logout and /forget end a card.
    cards = await card_actions.of_chat(svc, context.chat_id, lapsed=True)
    if not cards:
        await require_card(context)  # says how to connect a card
        return
    specs: list[tuple[str, Payload]] = []
    for card in cards:
        name = card_name(card, lang)
        specs.append(
            (
                plain(t(lang, "cards.rename_button", name=name)),
                RenameCard(card.number, card.card_id),
            )
        )
        # Asks first (`connect.logout_ask_tapped`): one tap beside "Rename" must not log out.
        specs.append(
            (
                plain(t(lang, "cards.logout_button", name=name)),
                LogoutAsk(card.number, card.card_id),
            )
        )
    buttons = await callback_buttons(update, context, specs)
    lapsed = [card for card in cards if card.is_lapsed]
    logins = await login_buttons(svc, lapsed, lang)
    rows: list[list[InlineKeyboardButton]] = [
        *logins.rows,
        *(buttons[index : index + 2] for index in range(0, len(buttons), 2)),
        *overview_rows(context),
    ]
    text = f"{await card_lines(context, cards)}\n\n{t(lang, 'cards.footer')}"
    if logins.links:
        text = f"{text}\n\n{logins.links}"
    await reply(update, context, text, buttons=rows)


class Renames:
    """The rename prompts this process asked (chat -> card, prompt message, when), beside the
    reply to the prompt, which names its card by number (`renamed_card`) and so works in any
    process. A message that is not a reply (a client or the stand-in that does not honour
    ForceReply) is the name only when it comes right after the prompt (the chat's next message
    id: a command or anything else in between ends the prompt) and while it is fresh. One per
    application: its handlers share it.
    """

    def __init__(self) -> None:
        self.asked: dict[int, tuple[int, int, float]] = {}

    def ask(self, chat_id: int, number: int, prompt: Message) -> None:
        now = time.monotonic()
        for chat, (_, _, when) in list(self.asked.items()):
            if now - when >= RENAME_SECONDS:
                del self.asked[chat]
        self.asked[chat_id] = (number, prompt.message_id, now)

    def card_for(self, message: Message) -> int | None:
        """The card `message` names, or None when it is no answer to a rename prompt."""
        number = renamed_card(message)
        if number is not None:
            return number
        asked = self.asked.get(message.chat_id)
        if asked is None:
            return None
        number, prompt, when = asked
        if message.message_id != prompt + 1 or time.monotonic() - when >= RENAME_SECONDS:
            return None
        return number

    async def tapped(self, update: Update, context: Context) -> None:
        """ "✏️ Rename": the prompt whose answer is the card's new name."""
        ref = await resolve_callback(update, context, asks=True)
        if ref is None:
            return
        lang = context.lang
        tapped = decode(ref.payload, RenameCard)
        card = None
        if tapped is not None:
            card = await card_actions.card(
                context.services, context.chat_id, tapped.number, lapsed=True
            )
        # By identity: the number may be another person's card by now.
        if card is None or tapped is None or not tapped.cid or card.card_id != tapped.cid:
            # A new message: the tapped /cards list keeps the other cards' buttons.
            await send(context.bot, context.chat_id, t(lang, "cards.gone"))
            return
        self.ask(card.chat_id, card.number, await ask_for_name(update, context, card))

    async def answered(self, update: Update, context: Context) -> None:
        """The new name: 1..32 characters of plain text, else the prompt again."""
        lang = context.lang
        message = update.effective_message
        number = self.card_for(message) if message is not None else None
        if message is None or number is None:
            return
        svc = context.services
        chat_id = context.chat_id
        card = await card_actions.card(svc, chat_id, number, lapsed=True)
        if card is None:
            self.asked.pop(chat_id, None)
            await reply(update, context, t(lang, "cards.gone"))
            return
        text = message.text or ""
        label = clean_label(text)
        lead = None
        if label is None or len(text.strip()) > LABEL_LIMIT:
            lead = t(lang, "cards.rename_bad")
        elif any(
            other.number != number and card_name(other, lang).casefold() == label.casefold()
            for other in await card_actions.of_chat(svc, chat_id, lapsed=True)
        ):
            lead = t(lang, "cards.rename_taken", name=label)  # the buttons would read the same
        if lead is not None:
            self.ask(chat_id, number, await ask_for_name(update, context, card, lead=lead))
            return
        self.asked.pop(chat_id, None)
        await card_actions.set_label(svc, chat_id, number, label)
        await reply(update, context, t(lang, "cards.renamed", number=number, name=label))


async def ask_for_name(
    update: Update, context: Context, card: Card, *, lead: str | None = None
) -> Message:
    lang = context.lang
    text = t(lang, "cards.rename_ask", number=card.number, name=card_name(card, lang))
    # The sent message's id tells the answer to it (`RenamePrompts`).
    return await context.bot.send_message(
        context.chat_id,
        f"{lead}\n{text}" if lead else text,
        parse_mode=ParseMode.HTML,
        link_preview_options=NO_PREVIEW,
        reply_markup=ForceReply(input_field_placeholder=t(lang, "cards.rename_placeholder")),
    )


@cache
def _prompts() -> tuple[re.Pattern[str], ...]:
    """The rename prompt of every language as a pattern capturing the card number."""
    patterns = []
    for lang in LANGUAGES:
        text = plain(t(lang, "cards.rename_ask", number=Raw("\0"), name=Raw("\1")))
        # re.escape leaves the two control characters as they are.
        pattern = re.escape(text).replace("\0", r"(\d+)").replace("\1", ".*")
        patterns.append(re.compile(pattern, re.DOTALL))
    return tuple(patterns)


def renamed_card(message: Message | None) -> int | None:
    """The card a reply to the bot's rename prompt names, else None."""
    replied = message.reply_to_message if message is not None else None
    if replied is None or replied.from_user is None or not replied.from_user.is_bot:
        return None
    for pattern in _prompts():
        found = pattern.search(replied.text or "")
        if found:
            return int(found.group(1))
    return None


class _RenameAnswer(filters.MessageFilter):
    """A text that answers a rename prompt (kept from the free-text search)."""

    def __init__(self, renames: Renames) -> None:
        super().__init__(name="rename_answer")
        self.renames = renames

    def filter(self, message: Message) -> bool:
        return self.renames.card_for(message) is not None


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    renames = Renames()
    answer = filters.TEXT & ~filters.COMMAND & filters.ChatType.PRIVATE & _RenameAnswer(renames)
    return [
        CommandHandler("cards", cards_command),
        CallbackQueryHandler(renames.tapped, pattern=rf"^{RenameCard.ACTION}:"),
        MessageHandler(answer, renames.answered),
    ]
