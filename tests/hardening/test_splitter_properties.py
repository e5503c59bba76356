"""`split_messages` at Telegram's real limit, checked with the Bot API stand-in's own parser."""

from __future__ import annotations

import html
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.texts.formatting import MESSAGE_LIMIT, split_messages
from sandbox.telegram.markup import MAX_TEXT_LENGTH, parse

CLOSING_TAGS = re.compile(r"(?:</\w+>)+$")
# Patron data is arbitrary unicode (astral characters count twice in UTF-16).
words = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=700,
)
entries = st.lists(
    st.tuples(st.sampled_from(["", "b", "i", "code"]), words).map(
        lambda pair: (
            f"<{pair[0]}>{html.escape(pair[1])}</{pair[0]}>" if pair[0] else html.escape(pair[1])
        )
    ),
    max_size=25,
)


def visible(message: str) -> str:
    text, _ = parse(message, "HTML")  # raises on anything Telegram would refuse
    return text


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entries, st.sampled_from(["", "<b>Dine lån (3)</b>"]))
def test_every_message_is_accepted_and_nothing_is_lost(items: list[str], header: str) -> None:
    messages = split_messages(items, header=header)
    for message in messages:
        assert len(visible(message)) <= MAX_TEXT_LENGTH
        assert len(message.encode("utf-16-le")) // 2 <= MESSAGE_LIMIT
    parts = [part for part in (header, *items) if part]
    # Entries are at most ~4.2k escaped units; those that fit must come through whole.
    fitting = [part for part in parts if len(part.encode("utf-16-le")) // 2 <= MESSAGE_LIMIT]
    if len(fitting) == len(parts):
        assert "\n\n".join(visible(m) for m in messages) == "\n\n".join(visible(p) for p in parts)
    else:
        # An entry longer than a message is cut, visibly, never silently.
        assert any(CLOSING_TAGS.sub("", message).endswith("…") for message in messages)


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=1, max_value=200), st.integers(min_value=1, max_value=60))
def test_long_lists_keep_every_entry(count: int, width: int) -> None:
    items = [f"{n}. <b>{'x' * width}</b>" for n in range(count)]
    messages = split_messages(items)
    joined = "\n\n".join(messages)
    for n in range(count):
        assert f"{n}. <b>" in joined
    assert all(len(visible(m)) <= MAX_TEXT_LENGTH for m in messages)
