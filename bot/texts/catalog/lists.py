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
    _(
        "lists.card_forgotten",
        "🔑 The library no longer accepts {name}'s login, so that card is logged out here.",
    ),
    _(
        "lists.card_refused",
        "🔑 The library no longer accepts {name}'s login, so that card is logged out here. "
        "Log in as {name} to connect it again; the other cards are unchanged.",
    ),
    # TRANSLATORS: {names} is "Karen and Jonas", cards whose library login lapsed (expired or
    # refused) at once, while the chat has other cards
    _(
        "lists.cards_lapsed",
        "🔑 The library logins of {names} have run out, so those cards are logged out here. Log "
        "in as each of them to connect it again; the other cards are unchanged.",
    ),
    # TRANSLATORS: as lists.cards_lapsed, when they were every card of the chat
    _(
        "lists.cards_lapsed_all",
        "🔑 The library logins of {names} have run out, so no card is logged in here now. Log "
        "in as each of them to connect it again.",
    ),
    _(
        "lists.card_expired",
        "🔑 The login of {name}'s card has expired. Log in as {name} to connect it again; the "
        "other cards are unchanged.",
    ),
)
