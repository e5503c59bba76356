"""Texts of several library cards in one chat: adding one with /login, /cards (rename, log
out), /logout's and /order's "which card", and the login warnings naming a card."""

from __future__ import annotations

from bot.texts.catalog import Message, _, _n

MESSAGES: tuple[Message, ...] = (
    # TRANSLATORS: {name} is a card's name (the holder's first name); the result fills {card}.
    _("cards.owner", "{name}'s card"),
    # TRANSLATORS: the same for a name ending in s, x or z (Danish: "Lars' kort").
    _("cards.owner_s", "{name}'s card"),
    _(
        "cards.login_more",
        "Tap the button and log in as the holder of the card you want to add (this chat has "
        "{count} of {max}), or as a holder already here to log in again with that card. The "
        "link works for 10 minutes, once.",
    ),
    _(
        "cards.login_full",
        "This chat already has {max} cards, the most it can hold. Send /logout to log out of "
        "one before you add another.",
    ),
    _(
        "cards.full",
        "This chat already has {max} cards; /logout one to add another. I did not keep this login.",
    ),
    _("cards.added", "✅ {card} is connected ({library})."),
    _("cards.added_plain", "✅ {card} is connected."),
    _("cards.refreshed", "🔄 {card} is logged in again."),
    # TRANSLATORS: a card whose login had lapsed, logged in again by the same person.
    _("cards.restored", "✅ {card} is back, with its name, calendar and settings."),
    # TRANSLATORS: {card} and {waiting} are "Karen's card"; {name} is the holder's name.
    _(
        "cards.other_person",
        "👤 This login was {name}'s, so {card} is connected here now. {waiting} is not logged "
        "in again: its login stops working on {date}. If the login page did not ask for a card "
        "number, the browser remembered {name}'s library login: log out of it there with the "
        "button, then send /login.",
    ),
    _(
        "cards.other_person_lapsed",
        "👤 This login was {name}'s, so {card} is connected here now. {waiting} is still logged "
        "out. If the login page did not ask for a card number, the browser remembered {name}'s "
        "library login: log out of it there with the button, then send /login.",
    ),
    # Several cards were waiting for a login (lapsed, or about to): {waiting} names them all.
    _(
        "cards.other_person_many",
        "👤 This login was {name}'s, so {card} is connected here now. Not logged in again: "
        "{waiting}. If the login page did not ask for a card number, the browser remembered "
        "{name}'s library login: log out of it there with the button, then send /login.",
    ),
    _("cards.header", "<b>Cards in this chat</b> ({count} of {max})"),
    _("cards.line", "{number}. 👤 <b>{name}</b> ({library})"),
    _("cards.line_plain", "{number}. 👤 <b>{name}</b>"),
    # TRANSLATORS: /cards' line of a card whose library login lapsed (it has a login button).
    _("cards.line_lapsed", "{number}. 👤 <b>{name}</b> · 🔑 login lapsed"),
    _(
        "cards.footer",
        "Rename a card or log out of it with the buttons; /login adds a card.",
    ),
    _("cards.rename_button", "✏️ Rename {name}"),
    _("cards.logout_button", "🚪 Log out {name}"),
    _(
        "cards.rename_ask",
        "✏️ Send the new name for card {number} ({name}), 1 to 32 characters.",
    ),
    _("cards.rename_placeholder", "New name"),
    _("cards.renamed", "✅ Card {number} is now called <b>{name}</b>."),
    _("cards.rename_bad", "A card's name is 1 to 32 characters of plain text."),
    _("cards.rename_taken", "Another card here is already called {name}."),
    _("cards.gone", "That card is no longer in this chat. Send /cards to see the cards here."),
    _(
        "cards.logout_ask",
        "🚪 Log out of {card} here? I delete its login and ask the library to end it; its "
        "loans and holds are no longer shown here until someone logs in with it again through "
        "/login.",
    ),
    _("cards.logout_yes", "🚪 Yes, log out"),
    _("cards.logout_no", "No, keep it"),
    _("cards.logout_kept", "Nothing changed: {card} is still logged in here."),
    _("cards.logout_which", "Which card do you want to log out of?"),
    _("cards.logout_all", "🚪 All cards"),
    _("cards.logout_card", "🚪 {name}"),
    _("cards.logged_out", "👋 {card} is logged out here; the library has revoked its access."),
    _(
        "cards.logged_out_unrevoked",
        "👋 {card} is logged out here and its login is deleted on my side. The library did not "
        "answer when I tried to end it there; it stops working by itself by {date} at the "
        "latest.",
    ),
    _(
        "cards.logged_out_unreadable",
        "👋 {card} is logged out here and its login is deleted on my side. It could not be "
        "ended at the library, because I can no longer read it (my keys have changed). It "
        "stops working by itself by {date} at the latest.",
    ),
    _("cards.remaining", "Still connected here: {names}."),
    # TRANSLATORS: {title} is the material's title, found and checked before the question
    _("cards.order_which", "Which card do you want to order <b>{title}</b> with?"),
    # TRANSLATORS: under cards.order_which; {names} is "Emil" or "Sofie and Emil"
    _n(
        "cards.order_lapsed",
        "🔑 {names}'s library login has lapsed, so that card is not offered: /login logs it in "
        "again.",
        "🔑 The library logins of {names} have lapsed, so those cards are not offered: /login "
        "logs them in again.",
    ),
    _("cards.order_card", "👤 {name}"),
)
