"""Dates, days left, amounts and message splitting, in the patron's language (Babel).

Functions here return plain text except `split_messages` and `truncate_html`, which work on the
HTML that is sent; callers escape plain text before putting it into HTML (`bot.texts.t`
does).
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Final

from babel.dates import format_skeleton
from babel.numbers import format_currency, get_currency_symbol

from bot.texts import DEFAULT_LANGUAGE, LOCALES, t

ELLIPSIS: Final = "…"
MESSAGE_LIMIT: Final = 4096

_TOKEN = re.compile(r"<[^>]*>|&(?:#\d+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);|.", re.DOTALL)
_TAG_NAME = re.compile(r"</?\s*([A-Za-z][A-Za-z0-9-]*)")


def _locale(lang: str) -> str:
    return LOCALES.get(lang, LOCALES[DEFAULT_LANGUAGE])


def format_date(value: dt.date | str | None, lang: str, *, today: dt.date | None = None) -> str:
    """ "24. nov." / "24 Nov", with the year when it is not this year; text is returned as sent."""
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    if isinstance(value, dt.datetime):
        value = value.date()
    this_year = (today or dt.date.today()).year
    return _format_day(value, value.year == this_year, _locale(lang))


@functools.lru_cache(maxsize=4096)
def _format_day(value: dt.date, this_year: bool, locale: str) -> str:
    """Babel's skeleton lookup and formatting cost about 0.2 ms a date, and a list shows the
    same few due dates over and over."""
    return str(format_skeleton("MMMd" if this_year else "yMMMd", value, locale=locale))


def relative_days(due: dt.date, today: dt.date, lang: str) -> str:
    """ "i morgen", "om 3 dage", "2 dage over tid" / "tomorrow", "in 3 days", "2 days overdue"."""
    days = (due - today).days
    if days == 0:
        text = t(lang, "render.today")
    elif days == 1:
        text = t(lang, "render.tomorrow")
    elif days > 1:
        text = t(lang, "render.in_days", days=days)
    else:
        text = t(lang, "render.overdue", days=-days)
    return str(text)


def parse_amount(amount: str) -> Decimal | None:
    """An amount as a Decimal ("45.50" or "45,50"); None when it is not a finite number."""
    text = amount.strip().replace(" ", "").replace("\u00a0", "")
    if "," in text and "." not in text:
        text = text.replace(",", ".")
    try:
        value = Decimal(text)
    except (InvalidOperation, ValueError):
        return None
    return value if value.is_finite() else None


def format_amount(amount: str, currency: str, lang: str) -> str:
    """ "45.50", "DKK" -> "45,50 kr." / "DKK 45.50" (Babel's currency format, no-break space).

    No currency is Danish kroner; an unparseable amount is shown as sent.
    """
    code = (currency or "").strip() or "DKK"
    if len(code) == 3 and code.isalpha():
        code = code.upper()
    value = parse_amount(str(amount))
    if value is None:
        return f"{amount} {currency}".strip()
    locale = _locale(lang)
    try:
        text = str(format_currency(value, code, locale=locale))
    except (decimal.InvalidOperation, ValueError):  # too many digits to round ("1E100")
        return f"{amount} {currency}".strip()
    # CLDR's currency spacing, which Babel leaves out: a symbol ending in a letter is kept
    # apart from the digits that follow it ("DKK 45.50", not "DKK45.50").
    symbol = str(get_currency_symbol(code, locale=locale))
    sign, rest = ("-", text[1:]) if text.startswith("-") else ("", text)
    if (
        rest.startswith(symbol)
        and symbol[-1:].isalpha()
        and rest[len(symbol) : len(symbol) + 1].isdigit()
    ):
        text = f"{sign}{symbol}\u00a0{rest[len(symbol) :]}"
    return text


def is_zero_amount(amount: str) -> bool:
    """True for "0", "0.00", "" and the like; an unparseable amount is not zero (show it)."""
    if not str(amount).strip():
        return True
    value = parse_amount(str(amount))
    return value is not None and value == 0


def utf16_len(text: str) -> int:
    """Length as Telegram counts it: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def shorten(text: str, limit: int) -> str:
    """Plain text single-spaced and cut to `limit` characters with an ellipsis (button labels,
    stored titles, quoted codes); the cut falls between words unless that would lose more than
    half of what fits (one long word)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    if text[limit - 1] != " " and space >= limit // 2:
        head = head[:space]
    return head.rstrip() + ELLIPSIS


def truncate_html(text: str, limit: int, *, ellipsis: str = ELLIPSIS) -> str:
    """`text` cut to at most `limit` UTF-16 units, ending in `ellipsis`, with open tags closed.

    Tags and entities are kept whole; the cut prefers a word boundary near the end.
    """
    if utf16_len(text) <= limit:
        return text
    budget = limit - utf16_len(ellipsis)
    if budget < 0:
        return ""
    out: list[str] = []
    stack: list[str] = []
    used = 0
    closing = 0  # length of the closing tags the current stack needs
    last_space: tuple[int, int, list[str], int] | None = None  # (len(out), used, stack, closing)
    for match in _TOKEN.finditer(text):
        token = match.group()
        size = utf16_len(token)
        if token.startswith("<") and len(token) > 1:
            name_match = _TAG_NAME.match(token)
            name = name_match.group(1).lower() if name_match else ""
            if token.startswith("</"):
                # A stray closing tag is dropped: only the reserved closings are sure to fit.
                if stack and stack[-1] == name:
                    stack.pop()
                    token = f"</{name}>"
                    closing -= utf16_len(token)
                    out.append(token)
                    used += utf16_len(token)
                continue
            extra = utf16_len(f"</{name}>")
            if used + size + closing + extra > budget:
                break
            out.append(token)
            stack.append(name)
            used += size
            closing += extra
            continue
        if used + size + closing > budget:
            break
        if token.isspace():
            last_space = (len(out), used, list(stack), closing)
        out.append(token)
        used += size
    if last_space is not None and used - last_space[1] < 40:
        cut, used, stack, closing = last_space
        del out[cut:]
    # Drop tags that were opened right at the cut and hold no text.
    while out and stack and out[-1].startswith("<") and not out[-1].startswith("</"):
        out.pop()
        stack.pop()
    body = "".join(out).rstrip()
    return body + ellipsis + "".join(f"</{name}>" for name in reversed(stack))


def split_messages(
    entries: Sequence[str],
    *,
    header: str = "",
    footer: str = "",
    limit: int = MESSAGE_LIMIT,
    separator: str = "\n\n",
) -> list[str]:
    """Pack HTML `entries` into as few messages as fit `limit`, in order, none cut in two.

    The header opens the first message and the footer closes the last (each in a message of
    its own when it does not fit beside an entry). An entry longer than a whole message is
    shortened with "…". Lengths are UTF-16 units of the HTML, which bounds Telegram's count.
    """
    parts = [truncate_html(part, limit) for part in (header, *entries, footer) if part]
    sep = utf16_len(separator)
    messages: list[str] = []
    current: list[str] = []
    size = 0
    for part in parts:
        part_size = utf16_len(part)
        if current and size + sep + part_size <= limit:
            current.append(part)
            size += sep + part_size
            continue
        if current:
            messages.append(separator.join(current))
        current, size = [part], part_size
    if current:
        messages.append(separator.join(current))
    return messages


def paginate(
    entries: Sequence[str], *, per_page: int, limit: int, separator: str = "\n\n"
) -> list[list[str]]:
    """`entries` in pages of at most `per_page`, each page's joined HTML within `limit` (UTF-16
    units); an entry longer than `limit` is shortened with "…". At least one (empty) page."""
    pages: list[list[str]] = []
    current: list[str] = []
    size = 0
    sep = utf16_len(separator)
    for entry in entries:
        part = truncate_html(entry, limit)
        part_size = utf16_len(part)
        if current and (len(current) >= per_page or size + sep + part_size > limit):
            pages.append(current)
            current, size = [], 0
        size += (sep if current else 0) + part_size
        current.append(part)
    if current or not pages:
        pages.append(current)
    return pages


def join_and(items: Sequence[str], lang: str) -> str:
    """`3, 1 and 0`, `Karen, Jonas og Ole`: plain text, as its items are."""
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} {t(lang, 'common.and')} {items[-1]}"
