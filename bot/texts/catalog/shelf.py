"""Texts of /where (where a title stands on the shelf) and of the availability told with an
order's confirmation."""

from __future__ import annotations

from bot.texts.catalog import Message, _, _n

MESSAGES: tuple[Message, ...] = (
    _(
        "shelf.usage",
        "Send <code>/where</code> and a material id or a few words, e.g. "
        "<code>/where Karen Blixen</code>, and I look up where it stands at your library.",
    ),
    _("shelf.not_found", "I found nothing for “{words}”. Try other words, or /search."),
    # TRANSLATORS: /where in a chat without a card asks which library to look in
    _(
        "shelf.which_library",
        "🗺 Which library should I look in for “{title}”? Write its name or its town, e.g. "
        "<i>Aarhus</i>. (Once you log in with /login, I know yours and never ask.)",
    ),
    _("shelf.library_placeholder", "Library or town"),
    _(
        "shelf.library_unknown",
        "I know no library called “{words}”. Try the town's name, e.g. <i>Odense</i>.",
    ),
    _("shelf.library_choose", "Several libraries fit. Which one?"),
    _("shelf.login_to_watch", "Log in with /login, and I can tell you when it is back."),
    # TRANSLATORS: the heading of /where's answer: the title, then the library's name
    _("shelf.header", "📍 <b>{title}</b> at {library}"),
    # TRANSLATORS: a branch with the title on the shelf, and its place: "Voksen › Skønlitteratur"
    _("shelf.on_shelf", "📗 <b>{branch}</b>: on the shelf · {place}"),
    _("shelf.on_shelf_here", "📗 <b>{branch}</b>: on the shelf"),
    _("shelf.not_for_loan", "📕 <b>{branch}</b>: can be read there, not borrowed · {place}"),
    _n(
        "shelf.lent_out",
        "📘 {count} copy is lent out at the moment.",
        "📘 {count} copies are lent out at the moment.",
    ),
    _("shelf.none_on_shelf", "None is on the shelf at {library} right now."),
    _("shelf.no_copies", "{library} has no copy of it. You can order it from another library."),
    _("shelf.failed", "⚠️ I could not look up the shelves right now. Try again shortly."),
    _("shelf.other_title", "Not the one you meant? /search {words}"),
    _("shelf.button", "🗺 Where is it?"),
    # TRANSLATORS: beside a search result's Order button: where result {number} stands
    _("shelf.button_numbered", "🗺 {number}"),
    _("shelf.order_button", "📥 Order it"),
    # Availability with an order's confirmation (/v3/availability)
    _("shelf.expected", "📦 Expected ready for pick-up around {date}."),
    _(
        "shelf.availability_unknown",
        "I could not check beforehand whether the library can take this order; it may still "
        "say no after you confirm.",
    ),
    _("shelf.where_it_stands", "Where it stands now:"),
    # Shelf watches
    # TRANSLATORS: a button under /where for a branch whose copies are all lent out
    _("shelf.watch_button", "🔔 Tell me when it is back at {branch}"),
    _(
        "shelf.watch_added",
        "🔔 I will tell you when <b>{title}</b> is on the shelf at {branch} (for 60 days at "
        "most). /watches lists what you are waiting for.",
    ),
    _("shelf.watch_exists", "🔔 You are already waiting for <b>{title}</b> at {branch}."),
    _(
        "shelf.watch_taken",
        "ℹ️ This card already has <b>{title}</b> on loan or on hold, so there is nothing to wait "
        "for. See /loans and /holds.",
    ),
    _n(
        "shelf.watch_full",
        "You are waiting for {count} title already, the most I keep. Stop one in /watches first.",
        "You are waiting for {count} titles already, the most I keep. Stop one in /watches first.",
    ),
    _("shelf.watch_fired", "🔔 <b>{title}</b> is on the shelf at {branch} now."),
    _("shelf.watch_place", "You find it at: {place}"),
    _(
        "shelf.watch_expired",
        "🔕 <b>{title}</b> has not come back to the shelf at {branch} in 60 days, so I have "
        "stopped waiting for it. /where {pid} shows where it is now.",
    ),
    _("shelf.watches_header", "🔔 <b>What you are waiting for</b>"),
    # TRANSLATORS: a line of /watches: the title, the branch, and since when
    _("shelf.watches_line", "• <b>{title}</b> at {branch}, since {date}"),
    _(
        "shelf.watches_none",
        "🔔 You are not waiting for any title. /where shows where a title stands, and offers "
        "to tell you when it is back on the shelf.",
    ),
    _("shelf.unwatch_button", "✖ Stop: {title} · {branch}"),
    _("shelf.unwatched", "🔕 I have stopped waiting for <b>{title}</b> at {branch}."),
    _("shelf.unwatched_already", "That wait has ended already. /watches shows the rest."),
)
