"""Telegram's message markup: HTML and MarkdownV2 parsing with Telegram's error wording.

The parsers follow the Bot API server (tdlib's `parse_html` / `parse_markdown_v2`), so a text
that Telegram would refuse is refused here with the same description. One deliberate difference:
a `&` that does not start a supported entity is refused (Telegram shows it as text), because the
Bot API documentation requires it escaped and it always points at a missing `html.escape`.

Offsets inside this module are Python string indices (code points); `utf16_entities` converts
them to the UTF-16 offsets that the Bot API puts on the wire.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

MAX_TEXT_LENGTH = 4096

_HTML_TAGS = frozenset(
    {
        "a",
        "b",
        "strong",
        "i",
        "em",
        "s",
        "strike",
        "del",
        "u",
        "ins",
        "tg-spoiler",
        "tg-emoji",
        "span",
        "pre",
        "code",
        "blockquote",
    }
)
_SIMPLE_TYPES = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
}
_MD_RESERVED = "_*[]()~`>#+-=|{}.!"
_MD_TYPE_NAMES = {
    "bold": "Bold",
    "italic": "Italic",
    "underline": "Underline",
    "strikethrough": "Strikethrough",
    "spoiler": "Spoiler",
    "text_link": "TextUrl",
    "code": "Code",
    "pre": "Pre",
    "custom_emoji": "CustomEmoji",
}
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_BOT_COMMAND = re.compile(r"/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?(?![\w/<>])")


class ParseError(ValueError):
    """Unparsable markup; `str(error)` is Telegram's wording after "can't parse entities: "."""


@dataclass(frozen=True)
class Entity:
    """A message entity with code-point offsets."""

    type: str
    offset: int
    length: int
    url: str | None = None
    language: str | None = None
    custom_emoji_id: str | None = None
    user_id: int | None = None


def _byte_offset(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


def _decode_entity(text: str, i: int) -> tuple[str, int] | None:
    """Decode an HTML entity at `text[i] == "&"` the way tdlib does (`;` optional)."""
    n = len(text)
    end = i + 1
    if end < n and text[end] == "#":
        end += 1
        value = 0
        digits_start = end
        if end < n and text[end] == "x":
            end += 1
            digits_start = end
            while end < n and text[end] in "0123456789abcdefABCDEF":
                end += 1
            if end > digits_start:
                value = int(text[digits_start:end], 16)
        else:
            while end < n and text[end].isdigit() and text[end].isascii():
                end += 1
            if end > digits_start:
                value = int(text[digits_start:end])
        if value == 0 or value >= 0x10FFFF or end - i >= 10:
            return None
        char = chr(value)
    else:
        while end < n and text[end].isascii() and text[end].isalpha():
            end += 1
        named = _NAMED_ENTITIES.get(text[i + 1 : end])
        if named is None:
            return None
        char = named
    if end < n and text[end] == ";":
        end += 1
    return char, end


def parse_html(source: str) -> tuple[str, list[Entity]]:
    """Parse Telegram HTML into plain text and entities, or raise `ParseError`."""
    out: list[str] = []
    entities: list[Entity] = []
    stack: list[tuple[str, str, int, bool]] = []  # tag, argument, start offset, expandable
    n = len(source)
    i = 0
    while i < n:
        char = source[i]
        if char == "&":
            decoded = _decode_entity(source, i)
            if decoded is None:
                raise ParseError(
                    f"Character '&' at byte offset {_byte_offset(source, i)} "
                    "must be escaped as &amp;"
                )
            out.append(decoded[0])
            i = decoded[1]
            continue
        if char != "<":
            out.append(char)
            i += 1
            continue
        begin = i
        begin_byte = _byte_offset(source, begin)
        i += 1
        if i < n and source[i] == "/":
            if not stack:
                raise ParseError(f"Unexpected end tag at byte offset {begin_byte}")
            j = i + 1
            while j < n and not source[j].isspace() and source[j] != ">":
                j += 1
            end_name = source[i + 1 : j].lower()
            while j < n and source[j].isspace():
                j += 1
            if j >= n or source[j] != ">":
                raise ParseError(f"Unclosed end tag at byte offset {begin_byte}")
            tag, argument, start, expandable = stack[-1]
            if end_name and end_name != tag:
                raise ParseError(
                    f'Unmatched end tag at byte offset {begin_byte}, expected "</{tag}>", '
                    f'found "</{end_name}>"'
                )
            i = j + 1
            position = len(out)
            if position > start:
                _close_html_entity(
                    entities, tag, argument, start, position - start, "".join(out[start:]),
                    expandable,
                )  # fmt: skip
            stack.pop()
            continue
        j = i
        while j < n and not source[j].isspace() and source[j] != ">":
            j += 1
        if j >= n:
            raise ParseError(f"Unclosed start tag at byte offset {begin_byte}")
        tag = source[i:j].lower()
        if tag not in _HTML_TAGS:
            raise ParseError(f'Unsupported start tag "{tag}" at byte offset {begin_byte}')
        i = j
        argument = ""
        expandable = False
        while True:
            while i < n and source[i].isspace():
                i += 1
            if i >= n:
                raise ParseError(f"Unclosed start tag at byte offset {begin_byte}")
            if source[i] == ">":
                break
            name_start = i
            while i < n and not source[i].isspace() and source[i] not in "=>":
                i += 1
            name = source[name_start:i].lower()
            if not name:
                raise ParseError(
                    f'Empty attribute name in the tag "{tag}" at byte offset {begin_byte}'
                )
            while i < n and source[i].isspace():
                i += 1
            if i >= n or source[i] != "=":
                if tag == "blockquote" and name == "expandable":
                    expandable = True
                    continue
                raise ParseError(
                    "Expected equal sign in declaration of an attribute of the tag "
                    f'"{tag}" at byte offset {begin_byte}'
                )
            i += 1
            while i < n and source[i].isspace():
                i += 1
            if i >= n:
                raise ParseError(f'Unclosed start tag "{tag}" at byte offset {begin_byte}')
            if source[i] in "'\"":
                quote = source[i]
                i += 1
                value_chars: list[str] = []
                while i < n and source[i] != quote:
                    if source[i] == "&":
                        decoded = _decode_entity(source, i)
                        if decoded is not None:
                            value_chars.append(decoded[0])
                            i = decoded[1]
                            continue
                    value_chars.append(source[i])
                    i += 1
                if i < n:
                    i += 1
                value = "".join(value_chars)
            else:
                token_start = i
                while i < n and (source[i].isalnum() or source[i] in ".-"):
                    i += 1
                value = source[token_start:i].lower()
                if i < n and not source[i].isspace() and source[i] != ">":
                    raise ParseError(
                        "Unexpected end of name token at byte offset "
                        f"{_byte_offset(source, token_start)}"
                    )
            if i >= n:
                raise ParseError(f"Unclosed start tag at byte offset {begin_byte}")
            if tag == "a" and name == "href":
                argument = value
            elif tag == "code" and name == "class" and value.startswith("language-"):
                argument = value[len("language-") :]
            elif tag == "span" and name == "class" and value.startswith("tg-"):
                argument = value[len("tg-") :]
            elif tag == "tg-emoji" and name == "emoji-id":
                argument = value
        i += 1
        if tag == "span" and argument != "spoiler":
            raise ParseError(f'Tag "span" must have class "tg-spoiler" at byte offset {begin_byte}')
        stack.append((tag, argument, len(out), expandable))
    if stack:
        raise ParseError(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    return "".join(out), sorted(entities, key=lambda e: (e.offset, -e.length))


def _close_html_entity(
    entities: list[Entity],
    tag: str,
    argument: str,
    offset: int,
    length: int,
    content: str,
    expandable: bool,
) -> None:
    if tag in _SIMPLE_TYPES:
        entities.append(Entity(_SIMPLE_TYPES[tag], offset, length))
    elif tag == "tg-emoji":
        if not argument.isdigit() or int(argument) == 0:
            raise ParseError("Invalid custom emoji identifier specified")
        entities.append(Entity("custom_emoji", offset, length, custom_emoji_id=argument))
    elif tag == "a":
        url = argument or content
        user = re.fullmatch(r"tg://user\?id=(\d+)", url)
        if user:
            entities.append(Entity("text_mention", offset, length, user_id=int(user.group(1))))
        elif url:
            entities.append(Entity("text_link", offset, length, url=url))
    elif tag == "pre":
        last = entities[-1] if entities else None
        if (
            last is not None
            and last.type == "code"
            and (last.offset, last.length) == (offset, length)
            and last.language
        ):
            entities[-1] = Entity("pre", offset, length, language=last.language)
        else:
            entities.append(Entity("pre", offset, length))
    elif tag == "code":
        entities.append(Entity("code", offset, length, language=argument or None))
    elif tag == "blockquote":
        kind = "expandable_blockquote" if expandable else "blockquote"
        entities.append(Entity(kind, offset, length))


def parse_markdown_v2(source: str) -> tuple[str, list[Entity]]:
    """Parse MarkdownV2 into plain text and entities, or raise `ParseError`."""
    out: list[str] = []
    entities: list[Entity] = []
    # type, start offset, byte offset of the opening, extra (language)
    stack: list[tuple[str, int, int, str]] = []
    n = len(source)

    def at(k: int) -> str:
        return source[k] if k < n else ""

    i = 0
    at_line_start = True
    while i < n:
        char = source[i]
        if char == "\\" and at(i + 1) and ord(at(i + 1)) <= 126:
            out.append(source[i + 1])
            i += 2
            at_line_start = False
            continue
        inside = stack[-1][0] if stack else None
        reserved = "`" if inside in ("code", "pre") else _MD_RESERVED
        if char not in reserved:
            out.append(char)
            at_line_start = char == "\n"
            i += 1
            continue
        if char == ">" and at_line_start and inside is None:
            # a quotation line: Telegram turns it into a blockquote entity
            i += 1
            at_line_start = False
            continue
        at_line_start = False
        closes = {
            "bold": char == "*",
            "italic": char == "_" and at(i + 1) != "_",
            "underline": char == "_" and at(i + 1) == "_",
            "strikethrough": char == "~",
            "spoiler": char == "|" and at(i + 1) == "|",
            "code": char == "`",
            "pre": char == "`" and at(i + 1) == "`" and at(i + 2) == "`",
            "text_link": char == "]",
            "custom_emoji": char == "]",
        }
        if inside is not None and closes[inside]:
            kind, start, _, extra = stack.pop()
            if kind in ("underline", "spoiler"):
                i += 2
            elif kind == "pre":
                i += 3
            else:
                i += 1
            url: str | None = None
            if kind in ("text_link", "custom_emoji"):
                if at(i) != "(":
                    if kind == "custom_emoji":
                        raise ParseError("Custom emoji entity must contain a tg://emoji URL")
                    url = "".join(out[start:])
                else:
                    url_begin = i + 1
                    i += 1
                    url_chars: list[str] = []
                    while i < n and source[i] != ")":
                        if source[i] == "\\" and at(i + 1) and ord(at(i + 1)) <= 126:
                            url_chars.append(source[i + 1])
                            i += 2
                            continue
                        url_chars.append(source[i])
                        i += 1
                    if i >= n:
                        raise ParseError(
                            f"Can't find end of a URL at byte offset "
                            f"{_byte_offset(source, url_begin)}"
                        )
                    i += 1
                    url = "".join(url_chars)
            length = len(out) - start
            if length > 0:
                if kind == "text_link":
                    entities.append(Entity("text_link", start, length, url=url))
                elif kind == "custom_emoji":
                    entities.append(Entity("custom_emoji", start, length, custom_emoji_id=url))
                elif kind == "pre":
                    entities.append(Entity("pre", start, length, language=extra or None))
                else:
                    entities.append(Entity(kind, start, length))
            continue
        byte_offset = _byte_offset(source, i)
        extra = ""
        if char == "_":
            kind = "underline" if at(i + 1) == "_" else "italic"
            i += 2 if kind == "underline" else 1
        elif char == "*":
            kind, i = "bold", i + 1
        elif char == "~":
            kind, i = "strikethrough", i + 1
        elif char == "|" and at(i + 1) == "|":
            kind, i = "spoiler", i + 2
        elif char == "[":
            kind, i = "text_link", i + 1
        elif char == "`":
            if at(i + 1) == "`" and at(i + 2) == "`":
                kind = "pre"
                i += 3
                language_end = i
                while language_end < n and 33 <= ord(source[language_end]) <= 126:
                    language_end += 1
                if at(language_end) == "\n":
                    extra = source[i:language_end]
                    i = language_end + 1
            else:
                kind, i = "code", i + 1
        elif char == "!" and at(i + 1) == "[":
            kind, i = "custom_emoji", i + 2
        else:
            raise ParseError(
                f"Character '{char}' is reserved and must be escaped with the preceding '\\'"
            )
        stack.append((kind, len(out), byte_offset, extra))
    if stack:
        kind, _, byte_offset, _ = stack[-1]
        raise ParseError(
            f"Can't find end of {_MD_TYPE_NAMES[kind]} entity at byte offset {byte_offset}"
        )
    return "".join(out), sorted(entities, key=lambda e: (e.offset, -e.length))


def parse(text: str, parse_mode: str | None) -> tuple[str, list[Entity]]:
    """Parse by `parse_mode` (case-insensitive); raise `ParseError`, or `ValueError` if unknown."""
    mode = (parse_mode or "").lower()
    if mode == "html":
        return parse_html(text)
    if mode == "markdownv2":
        return parse_markdown_v2(text)
    if mode == "markdown":
        return parse_markdown_legacy(text)
    if mode:
        raise ValueError(f"Unsupported parse_mode {parse_mode}")
    return text, []


def parse_markdown_legacy(source: str) -> tuple[str, list[Entity]]:
    """Legacy Markdown: `*bold*`, `_italic_`, `` `code` ``, ```` ```pre``` ````, `[text](url)`."""
    out: list[str] = []
    entities: list[Entity] = []
    n = len(source)
    i = 0
    while i < n:
        char = source[i]
        if char == "\\" and i + 1 < n and source[i + 1] in "_*`[":
            out.append(source[i + 1])
            i += 2
            continue
        if char not in "_*`[":
            out.append(char)
            i += 1
            continue
        begin_byte = _byte_offset(source, i)
        if source.startswith("```", i):
            end = source.find("```", i + 3)
            if end < 0:
                raise ParseError(
                    f"Can't find end of the entity starting at byte offset {begin_byte}"
                )
            body = source[i + 3 : end]
            language = ""
            first, newline, rest = body.partition("\n")
            if newline and first and " " not in first:
                language, body = first, rest
            start = len(out)
            out.extend(body)
            if body:
                entities.append(Entity("pre", start, len(body), language=language or None))
            i = end + 3
            continue
        closing = "]" if char == "[" else char
        end = source.find(closing, i + 1)
        if end < 0:
            raise ParseError(f"Can't find end of the entity starting at byte offset {begin_byte}")
        body = source[i + 1 : end]
        start = len(out)
        out.extend(body)
        i = end + 1
        if char == "[":
            if i < n and source[i] == "(":
                url_end = source.find(")", i)
                if url_end < 0:
                    raise ParseError(
                        f"Can't find end of the entity starting at byte offset {begin_byte}"
                    )
                if body:
                    entities.append(
                        Entity("text_link", start, len(body), url=source[i + 1 : url_end])
                    )
                i = url_end + 1
            continue
        if body:
            kind = {"*": "bold", "_": "italic", "`": "code"}[char]
            entities.append(Entity(kind, start, len(body)))
    return "".join(out), entities


def bot_command_entities(text: str) -> list[Entity]:
    """The `bot_command` entity of a leading /command, as a Telegram client marks it."""
    match = _BOT_COMMAND.match(text)
    return [Entity("bot_command", 0, match.end())] if match else []


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def utf16_entities(text: str, entities: list[Entity]) -> list[dict[str, Any]]:
    """Entities as Bot API objects (UTF-16 offsets)."""
    result: list[dict[str, Any]] = []
    for entity in entities:
        offset = utf16_len(text[: entity.offset])
        length = utf16_len(text[entity.offset : entity.offset + entity.length])
        item: dict[str, Any] = {"type": entity.type, "offset": offset, "length": length}
        if entity.url is not None:
            item["url"] = entity.url
        if entity.language:
            item["language"] = entity.language
        if entity.custom_emoji_id is not None:
            item["custom_emoji_id"] = entity.custom_emoji_id
        if entity.user_id is not None:
            item["user"] = {"id": entity.user_id, "is_bot": False, "first_name": ""}
        result.append(item)
    return result


def entities_from_utf16(text: str, raw: list[dict[str, Any]]) -> list[Entity]:
    """Bot API entity objects (UTF-16 offsets) to `Entity` values; unknown shapes are skipped."""
    positions: dict[int, int] = {}
    units = 0
    for index, char in enumerate(text):
        positions[units] = index
        units += 2 if ord(char) > 0xFFFF else 1
    positions[units] = len(text)
    result: list[Entity] = []
    for item in raw:
        try:
            start = positions[int(item["offset"])]
            end = positions[int(item["offset"]) + int(item["length"])]
            kind = str(item["type"])
        except (KeyError, TypeError, ValueError):
            continue
        user = item.get("user")
        result.append(
            Entity(
                kind,
                start,
                end - start,
                url=item.get("url"),
                language=item.get("language"),
                custom_emoji_id=item.get("custom_emoji_id"),
                user_id=user.get("id") if isinstance(user, dict) else None,
            )
        )
    return result


_RENDER_TAGS = {
    "bold": ("<b>", "</b>"),
    "italic": ("<i>", "</i>"),
    "underline": ("<u>", "</u>"),
    "strikethrough": ("<s>", "</s>"),
    "spoiler": ('<span class="tg-spoiler">', "</span>"),
    "code": ("<code>", "</code>"),
    "blockquote": ("<blockquote>", "</blockquote>"),
    "expandable_blockquote": ("<blockquote expandable>", "</blockquote>"),
}


def _open_tag(entity: Entity) -> tuple[str, str]:
    if entity.type in _RENDER_TAGS:
        return _RENDER_TAGS[entity.type]
    if entity.type == "pre":
        if entity.language:
            language = html.escape(entity.language)
            return f'<pre><code class="language-{language}">', "</code></pre>"
        return "<pre>", "</pre>"
    if entity.type == "text_link" and entity.url:
        return f'<a href="{html.escape(entity.url)}">', "</a>"
    if entity.type == "text_mention" and entity.user_id is not None:
        return f'<a href="tg://user?id={entity.user_id}">', "</a>"
    return "", ""


def to_html(text: str, entities: list[Entity]) -> str:
    """Render text and entities as Telegram-subset HTML with everything else escaped."""
    opens: dict[int, list[Entity]] = {}
    for entity in sorted(entities, key=lambda e: (e.offset, -e.length)):
        opens.setdefault(entity.offset, []).append(entity)
    parts: list[str] = []
    stack: list[tuple[int, str]] = []  # end offset, closing tag
    for index in range(len(text) + 1):
        # entities come from well-nested markup, so closing by end offset keeps nesting valid
        while stack and stack[-1][0] <= index:
            parts.append(stack.pop()[1])
        for entity in opens.get(index, []):
            opening, closing = _open_tag(entity)
            parts.append(opening)
            stack.append((entity.offset + entity.length, closing))
        if index < len(text):
            parts.append(html.escape(text[index], quote=False))
    while stack:
        parts.append(stack.pop()[1])
    return "".join(parts)
