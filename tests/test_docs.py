"""The README is for people who use the bot, and it and the deployment guide say what is so:
two setup commands, every setting, every screenshot, links that lead somewhere, and one way to
install the package."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.config.settings import SECRET_FILE_VARIABLES, Settings

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
GUIDE = (ROOT / "docs" / "deployment.md").read_text()
# The operator contract, beside the checkout where it is laid out (as for CI).
CONTRACT = ROOT.parent / "shared" / "contract.md"


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) <= 250


def test_a_fresh_machine_needs_two_commands() -> None:
    blocks = re.findall(r"```(?:sh|bash|console|shell)\n(.*?)```", README, re.DOTALL)
    commands = [line.split("#")[0].strip() for block in blocks for line in block.splitlines()]
    assert [command for command in commands if command] == ["make demo", "make test"]


def test_the_readme_names_every_setting() -> None:
    configuration = README.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", configuration))
    assert set(Settings.model_fields) <= named
    assert all(f"`{name}`" in configuration for name in SECRET_FILE_VARIABLES)
    assert "`<NAME>_FILE`" in configuration and "DATABASE_URL_FILE" in configuration


@pytest.mark.skipif(
    not CONTRACT.exists(), reason="the operator contract is not beside the checkout"
)
def test_the_readme_names_every_variable_of_the_contract() -> None:
    environment = CONTRACT.read_text().split("## Environment", 1)[1].split("\n## ", 1)[0]
    variables = set(re.findall(r"^\| `([A-Z<][A-Z0-9_>]+)`", environment, re.MULTILINE))
    assert variables
    assert all(f"`{name}`" in README for name in variables)


def test_every_screenshot_is_shown_and_every_image_exists() -> None:
    shown = set(re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README))
    assert shown == {
        f"docs/screenshots/{path.name}" for path in (ROOT / "docs" / "screenshots").glob("*.png")
    }


@pytest.mark.parametrize(
    "doc",
    [
        "README.md",
        "CHANGELOG.md",
        "SECURITY.md",
        *(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")),
    ],
)
def test_links_between_the_documents_lead_somewhere(doc: str) -> None:
    path = ROOT / doc
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text()):
        if "://" in target:
            continue
        assert (path.parent / target).exists(), f"{doc}: {target}"


def test_the_guide_is_finished_and_names_the_probes() -> None:
    assert "<!--" not in GUIDE
    assert not re.search(r"\bTODO\b|\bFIXME\b|\bXXX\b", GUIDE)
    for probe in ("/livez", "/readyz", "/health"):
        assert f"`GET {probe}`" in GUIDE
    assert "METRICS_ADDRESS" in GUIDE and "DATABASE_URL" in GUIDE


def test_no_document_installs_the_checkout_with_a_fetched_build_backend() -> None:
    """`pip install .` builds in a throwaway environment with the newest setuptools, unhashed,
    and in the checkout, where a stale build/ goes into the install: every install of the
    package itself is the wheel of `deploy/build-wheel`, or (the editable venv) with the
    lock's setuptools."""
    for doc in (
        "README.md",
        "docs/deployment.md",
        "deploy/library-bot.service",
        "deploy/Containerfile",
        "Makefile",
    ):
        text = (ROOT / doc).read_text()
        if doc.endswith(".md"):  # what a reader runs: the code blocks, not the prose about them
            text = "\n".join(re.findall(r"```[a-z]*\n(.*?)```", text, re.DOTALL))
        # Installs of the package itself: the checkout (`.`, `-e .`) or a wheel of it.
        ours = [
            install
            for install in re.findall(r"pip install[^\n`]*", text)
            if re.search(r"\s(-e )?\.(\s|$)|library_bot-", install)
        ]
        assert ours or doc == "README.md", doc
        for install in ours:
            assert "--no-deps" in install, (doc, install)
            assert "library_bot-" in install or "--no-build-isolation" in install, (doc, install)
