"""Texts of the borrower lists with several cards in the chat: a section per card, the buttons
that show one card, and what is said about a card that could not be read."""

from __future__ import annotations

from bot.texts.catalog import Message, _, _n

MESSAGES: tuple[Message, ...] = (
    # A card's section heading (card.heading) again at the top of a page that goes on with it
    _("lists.section_more", "👤 <b>{name}</b> (continued)"),
    # The buttons under a list of several cards: one per card, and every card
    _("lists.all_cards", "All cards"),
    # TRANSLATORS: the button of the card (or "All cards") the list shows now
    _("lists.view_shown", "· {label} ·"),
    _n("lists.loans.count", "{count} loan", "{count} loans"),
    _("lists.loans.none", "No loans right now."),
    _n("lists.holds.count", "{count} hold", "{count} holds"),
    _("lists.holds.none", "No holds right now."),
    _("lists.debt.none", "Owes the library nothing."),
    # TRANSLATORS: `/loans <name>` named no card of the chat; {names}: the chat's cards
    _("lists.no_such_card", "No card is called “{name}”. Your cards: {names}."),
    # TRANSLATORS: /renew's "renew all" of one card; {label} is borrower.renew.all
    _("lists.renew.all_of", "{label}: {name}"),
    # TRANSLATORS: a loan's or hold's button with several cards ({label}: its button alone)
    _("lists.button_of", "{name} · {label}"),
    _("lists.recommend.which", "💡 Suggestions from whose loans?"),
    # A card that could not be read
    _("lists.card_failed", "⚠️ {name}'s card could not be read just now."),
    # TRANSLATORS: a list's section for a card whose library login lapsed (refused or run
    # out); the card stays in the chat, and a login button for it comes under the list.
    _(
        "lists.card_lapsed",
        "🔑 {name}'s library login has lapsed. The card stays here; log in as {name} again to "
        "see it.",
    ),
    # TRANSLATORS: one message for a chat's only lapsed card among others, with its login button.
    _(
        "lists.lapsed_one",
        "🔑 {name}'s library login has lapsed. The card stays here with its name and settings: "
        "log in as {name} with the button to see its loans and holds again.",
    ),
    # TRANSLATORS: {names} is "Karen and Jonas": every card of the chat whose login lapsed,
    # each with a login button of its own.
    _(
        "lists.lapsed_many",
        "🔑 The library logins of {names} have lapsed. The cards stay here with their names "
        "and settings: log in with each card's own button to see their loans and holds again.",
    ),
    # TRANSLATORS: a button that logs a lapsed card in again; {name} is the card's name.
    _("lists.login_card", "🔑 Log in again: {name}"),
    # TRANSLATORS: the Mini App's link under a lapsed card (its name is the heading above).
    _("lists.login_again", "🔑 Log in again"),
    _(
        "lists.login_card_link",
        "🔑 Log in again as {name} (the link works for 10 minutes, once):\n{url}",
    ),
)
