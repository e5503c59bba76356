"""Adding a language is one .po file plus its line in `bot.texts.LOCALES` (issue 26).

Two sides: every place in the code that lists languages derives from that one list (a scan of
the source), and a throwaway copy of the package with a fourth language, made of exactly those
two changes, speaks it everywhere the languages show (a separate interpreter on the copy).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import bot
import sandbox
from bot.texts import LANGUAGES, LOCALE_DIR, LOCALES, SOURCE_LANGUAGE
from sandbox.telegram import page
from tests.fixtures.cli import python

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(bot.__file__).parent
# The one list, and what it may be spelt as nowhere else.
THE_LIST = (PACKAGE / "texts" / "__init__.py", "LOCALES")


def _language_lists(path: Path) -> list[tuple[int, str]]:
    """Literal collections (and dict keys) naming two or more of the languages, by line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            items: list[ast.expr | None] = list(node.keys)
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = list(node.elts)
        else:
            continue
        # Nested ones too: [("da", "da"), ("en", "en")] lists the languages as well.
        named = {
            leaf.value
            for item in items
            if item is not None
            for leaf in ast.walk(item)
            if isinstance(leaf, ast.Constant) and leaf.value in LANGUAGES
        }
        if len(named) >= 2:
            found.append((node.lineno, ast.unparse(node)[:60]))
    return found


def test_the_code_lists_the_languages_in_one_place_only() -> None:
    """`LOCALES` in bot.texts; LANGUAGES, the menus, /language and the pages derive from it."""
    sources = [*PACKAGE.rglob("*.py"), *Path(sandbox.__file__).parent.rglob("*.py")]
    listed = {
        str(path.relative_to(ROOT)): lists
        for path in sorted(sources)
        if (lists := _language_lists(path))
    }
    path, name = THE_LIST
    [(line, _)] = listed.pop(str(path.relative_to(ROOT)))
    # The Telegram stand-in's own picker (below): Telegram's side, which may not import the bot.
    [(line_sandbox, _)] = listed.pop(str(Path(page.__file__).relative_to(ROOT)))
    assert page.__name__ == "sandbox.telegram.page" and line_sandbox
    source = path.read_text(encoding="utf-8").splitlines()
    assert source[line - 1].startswith(f"{name}: Final = {{"), source[line - 1]
    assert listed == {}, "a list of languages besides LOCALES: derive it from LANGUAGES"
    assert tuple(LOCALES) == LANGUAGES


def test_the_sandbox_chat_page_offers_every_language_the_bot_speaks() -> None:
    """The Telegram stand-in may not import the bot: its picker is its own list, kept whole."""
    assert set(LANGUAGES) <= set(page.LANGUAGES)
    index = (Path(sandbox.__file__).parent / "telegram" / "static" / "index.html").read_text()
    picker = index.split('id="new-chat-lang"', 1)[1].split("</select>", 1)[0]
    assert tuple(re.findall(r'<option value="([a-z-]+)">', picker)) == page.LANGUAGES


# What the interpreter on the copy reports, as JSON.
PROBE = """
import asyncio, datetime, json
import bot, bot.texts as texts
from bot.runtime import runner
from bot.texts.formatting import format_amount, format_date
from bot.web.pages import page_language

class Recorder:
    def __init__(self):
        self.menus = {}
    async def set_my_commands(self, commands, language_code=None):
        self.menus[language_code or ""] = {c.command: c.description for c in commands}

recorder = Recorder()
asyncio.run(runner._set_commands(recorder))
print(json.dumps({
    "package": bot.__file__,
    "languages": list(texts.LANGUAGES),
    "picked": texts.pick_language(None, "sv-SE"),
    "yes": texts.t("sv", "common.yes"),
    "results": [texts.t("sv", "borrower.search.header", count=n, query="x") for n in (1, 3, 5)],
    "name": texts.language_name("sv"),
    "page": page_language("sv,en;q=0.8"),
    "menu": recorder.menus.get("sv", {}).get("loans"),
    "date": format_date(datetime.date(2026, 11, 24), "sv", today=datetime.date(2026, 1, 1)),
    "amount": format_amount("1234.5", "DKK", "sv"),
}))
"""


def test_a_new_language_is_one_po_file_and_one_line(tmp_path: Path) -> None:
    copy = tmp_path / "bot"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.mo", "*.pyc"))
    # 1. The line in the one list (Swedish, with its Babel locale).
    init = copy / "texts" / "__init__.py"
    source = init.read_text(encoding="utf-8")
    pairs = ", ".join(f'"{lang}": "{code}"' for lang, code in LOCALES.items())
    line = f"LOCALES: Final = {{{pairs}}}"
    assert source.count(line) == 1
    init.write_text(source.replace(line, f'{line[:-1]}, "sv": "sv_SE"}}'))
    # 2. The .po: here the Ukrainian one, copied (a translator starts from the template).
    translated = next(lang for lang in LANGUAGES if lang not in ("da", SOURCE_LANGUAGE))
    po = (LOCALE_DIR / translated / "LC_MESSAGES" / "messages.po").read_text(encoding="utf-8")
    target = copy / "texts" / "locale" / "sv" / "LC_MESSAGES" / "messages.po"
    target.parent.mkdir(parents=True)
    target.write_text(po.replace(f'"Language: {translated}\\n"', '"Language: sv\\n"'))
    # Nothing is compiled: the bot reads the .po at start-up.
    ran = python("-c", PROBE, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout)
    assert seen["package"].startswith(str(copy))  # the copy, not the package under test
    assert seen["languages"] == [*LANGUAGES, "sv"]
    assert seen["picked"] == "sv"  # from Telegram's language_code
    assert seen["yes"] == "Так"  # the copied catalogue, not the Danish fallback
    assert seen["results"] == [
        "🔎 <b>1 результат</b> за запитом «x»",
        "🔎 <b>3 результати</b> за запитом «x»",
        "🔎 <b>5 результатів</b> за запитом «x»",
    ]  # the .po's own plural rule
    assert seen["name"] == "Svenska"  # /language's button, from Babel
    assert seen["page"] == "sv"  # the login pages
    assert seen["menu"] == "Ваші видачі й терміни повернення"  # its command menu
    assert seen["date"] == "24 nov."  # sv_SE's dates and amounts
    assert seen["amount"] == "1\u00a0234,50\u00a0Dkr"
