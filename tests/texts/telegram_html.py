"""A checker for the subset of HTML that Telegram's parse_mode HTML accepts."""

from __future__ import annotations

from html.parser import HTMLParser

ALLOWED_TAGS = frozenset({"b", "i", "u", "s", "code", "pre", "a", "blockquote"})
ALLOWED_ENTITIES = frozenset({"lt", "gt", "amp", "quot"})


class _Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.stack: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"tag <{tag}> is not allowed")
        names = {name for name, _ in attrs}
        if tag == "a" and names != {"href"}:
            self.problems.append("<a> needs exactly an href")
        elif tag != "a" and names - ({"class"} if tag == "code" else set()):
            self.problems.append(f"<{tag}> has attributes {sorted(names)}")
        self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.problems.append(f"self-closing <{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> does not close {self.stack[-1:]}")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        for char in "<>&":
            if char in data:
                self.problems.append(f"unescaped {char!r} in {data!r}")

    def handle_entityref(self, name: str) -> None:
        if name not in ALLOWED_ENTITIES:
            self.problems.append(f"entity &{name}; is not supported")

    def handle_comment(self, data: str) -> None:
        self.problems.append("comment")


def telegram_html_problems(text: str) -> list[str]:
    """Why Telegram would refuse `text` as HTML; empty when it is fine."""
    checker = _Checker()
    checker.feed(text)
    checker.close()
    problems = list(checker.problems)
    if checker.stack:
        problems.append(f"unclosed {checker.stack}")
    if checker.rawdata:
        problems.append(f"unparsed rest {checker.rawdata!r}")
    return problems


def assert_telegram_html(text: str) -> None:
    problems = telegram_html_problems(text)
    assert not problems, f"{text!r}: {problems}"
