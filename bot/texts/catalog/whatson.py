"""Texts of /events, /news, /recommend, free text as a search and a bare /search (their
menu descriptions are in `commands`)."""

from __future__ import annotations

from bot.texts.catalog import Message, _

MESSAGES: tuple[Message, ...] = (
    _(
        "whatson.help",
        "/events – coming events at your library\n"
        "/news – news from your library\n"
        "/recommend – suggestions based on your loans\n"
        "/where – where a title stands on the shelf at your library\n"
        "/watches – titles you are waiting to see back on the shelf\n"
        "Or just type what you are looking for, and I offer to search for it.",
    ),
    _(
        "whatson.no_content",
        "Your library does not share its events and news through the libraries' common "
        "platform. See them on the library's website.",
    ),
    # /events
    _("whatson.events.header", "📅 <b>What's on at your library</b>"),
    _("whatson.events.none", "📅 Your library has no coming events right now."),
    _("whatson.events.when", "🕒 {day} at {start}"),
    _("whatson.events.when_until", "🕒 {day}, {start}–{end}"),
    _("whatson.events.place", "📍 {place}"),
    _("whatson.events.price", "Price: DKK {price}"),
    # TRANSLATORS: who an event is for, in the library's own words (e.g. "For børn")
    _("whatson.events.audience", "👥 {audience}"),
    # TRANSLATORS: under /events and /news; events and news carry no link of their own
    _("whatson.site", "🔗 More, and signing up, on the library's site: {url}"),
    _("whatson.site_news", "🔗 More on the library's site: {url}"),
    _("whatson.hours.button", "🕘 Opening hours"),
    _("whatson.hours.header", "🕘 <b>Opening hours, the coming week</b>"),
    _("whatson.hours.none", "🕘 The library's site gives no opening hours for the coming days."),
    # TRANSLATORS: one day of a branch's opening hours: "Tue 24 Nov: 08:00–20:00"
    _("whatson.hours.day", "{day}: {hours}"),
    # /news
    _("whatson.news.header", "📰 <b>News from your library</b>"),
    _("whatson.news.none", "📰 Your library has no news right now."),
    # /recommend
    _("whatson.recommend.header", "💡 <b>Suggestions based on your loans</b>"),
    _(
        "whatson.recommend.no_loans",
        "💡 You have no loans or holds right now, so I have nothing to base suggestions on. Try "
        "/search.",
    ),
    _(
        "whatson.recommend.none",
        "💡 I found no suggestions based on your loans right now. Try /search.",
    ),
    _("whatson.recommend.footer", "Tap a button to order."),
    # free text and a bare /search
    _("whatson.search.ask", "🔎 What are you looking for? Type a title, an author or a subject."),
    _("whatson.search.placeholder", "Title, author or subject"),
    _(
        "whatson.freetext.offer",
        "Shall I search the libraries' materials for it? Tap the button. Send /help to see what "
        "else I can do.",
    ),
    _("whatson.freetext.button", "🔎 Search for “{query}”"),
    _("whatson.freetext.command", "➡️ For that, send /{command} (tap it)."),
    _(
        "whatson.freetext.too_long",
        "That is too long for a search (at most {limit} characters). Send /help to see what I "
        "can do.",
    ),
)
