"""`/start` (welcome, or redeeming the one-time code from the login page) and `/help`."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from telegram import Update
from telegram.ext import BaseHandler, CommandHandler

from library_bot.services import services
from library_bot.telegram.ui import Context, chat_id_of, lang_of, reply
from library_bot.texts import t

if TYPE_CHECKING:
    from library_bot.storage.store import Account

log = logging.getLogger(__name__)

MAX_CODE_LENGTH = 64
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
LIBRARY_NAME_TIMEOUT = 3.0


def handlers() -> list[BaseHandler[Any, Any, Any]]:
    return [CommandHandler("start", start), CommandHandler("help", help_command)]


def _name_suffix(update: Update) -> str:
    user = update.effective_user
    return f", {user.first_name}" if user and user.first_name else ""


async def start(update: Update, context: Context) -> None:
    lang = await lang_of(update, context)
    args = context.args or []
    if args:
        await _redeem(update, context, args[0], lang)
        return
    account = await services(context).store.account(chat_id_of(update))
    key = "connect.welcome_connected" if account is not None else "connect.welcome"
    await reply(update, context, t(lang, key, name=_name_suffix(update)))


async def help_command(update: Update, context: Context) -> None:
    lang = await lang_of(update, context)
    await reply(update, context, f"{t(lang, 'connect.help')}\n{t(lang, 'whatson.help')}")


async def _redeem(update: Update, context: Context, code: str, lang: str) -> None:
    """Connect the account only if this chat is the one that asked for `/login`."""
    chat_id = chat_id_of(update)
    linked = None
    if 0 < len(code) <= MAX_CODE_LENGTH and code.isprintable():
        linked = await services(context).store.complete_link(chat_id, code)
    account = None if linked is None else linked.account
    if account is None:
        log.info("chat %s sent a link code that is not valid for it", chat_id)
        await reply(update, context, t(lang, "connect.code_invalid"))
        return
    await services(context).store.set_connected(chat_id)
    library = await library_name(context, account, lang)
    if library:
        await reply(update, context, t(lang, "connect.connected_library", library=library))
    else:
        await reply(update, context, t(lang, "connect.connected"))


async def library_name(context: Context, account: Account, lang: str) -> str | None:
    """The patron's municipality by name: the only place the bot keeps (userinfo's
    `municipality`); agencies and everything else userinfo may carry are not kept."""
    municipality = account.municipality
    if municipality:
        code = municipality.strip().lstrip("0")
        if code in MUNICIPALITIES:
            return MUNICIPALITIES[code]
        return t(lang, "connect.municipality", code=municipality)
    return None
