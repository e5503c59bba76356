"""Texts of /events, /news, /recommend, free text as a search and a bare /search, and the
menu descriptions of those commands (`commands.` keys, beside the contract's in `commands`)."""

from __future__ import annotations

DA: dict[str, str] = {
    "commands.events": "Arrangementer på dit bibliotek",
    "commands.news": "Nyheder fra dit bibliotek",
    "commands.recommend": "Forslag ud fra dine lån",
    "whatson.help": (
        "/events – kommende arrangementer på dit bibliotek\n"
        "/news – nyheder fra dit bibliotek\n"
        "/recommend – forslag ud fra dine lån\n"
        "Skriv bare, hvad du leder efter, så tilbyder jeg at søge efter det."
    ),
    "whatson.no_content": (
        "Dit bibliotek deler ikke sine arrangementer og nyheder gennem bibliotekernes fælles "
        "platform. Se dem på bibliotekets hjemmeside."
    ),
    # /events
    "whatson.events.header": "📅 <b>Det sker på dit bibliotek</b>",
    "whatson.events.none": "📅 Dit bibliotek har ingen kommende arrangementer lige nu.",
    "whatson.events.when": "🕒 {day} kl. {start}",
    "whatson.events.when_until": "🕒 {day} kl. {start}–{end}",
    "whatson.events.place": "📍 {place}",
    "whatson.events.price": "Pris: {price} kr.",
    # /news
    "whatson.news.header": "📰 <b>Nyt fra dit bibliotek</b>",
    "whatson.news.none": "📰 Dit bibliotek har ingen nyheder lige nu.",
    # /recommend
    "whatson.recommend.header": "💡 <b>Forslag ud fra dine lån</b>",
    "whatson.recommend.no_loans": (
        "💡 Du har ingen lån eller reserveringer lige nu, så jeg har intet at finde forslag ud "
        "fra. Prøv /search."
    ),
    "whatson.recommend.none": "💡 Jeg fandt ingen forslag ud fra dine lån lige nu. Prøv /search.",
    "whatson.recommend.footer": "Tryk på en knap for at bestille.",
    # free text and a bare /search
    "whatson.search.ask": "🔎 Hvad leder du efter? Skriv en titel, en forfatter eller et emne.",
    "whatson.search.placeholder": "Titel, forfatter eller emne",
    "whatson.freetext.offer": (
        "Skal jeg søge efter det i bibliotekernes materialer? Tryk på knappen. "
        "Skriv /help for at se, hvad jeg ellers kan."
    ),
    "whatson.freetext.button": "🔎 Søg efter »{query}«",
    "whatson.freetext.too_long": (
        "Det er for langt til en søgning (højst {limit} tegn). Skriv /help for at se, hvad jeg kan."
    ),
}

EN: dict[str, str] = {
    "commands.events": "Events at your library",
    "commands.news": "News from your library",
    "commands.recommend": "Suggestions from your loans",
    "whatson.help": (
        "/events – coming events at your library\n"
        "/news – news from your library\n"
        "/recommend – suggestions based on your loans\n"
        "Or just type what you are looking for, and I offer to search for it."
    ),
    "whatson.no_content": (
        "Your library does not share its events and news through the libraries' common "
        "platform. See them on the library's website."
    ),
    # /events
    "whatson.events.header": "📅 <b>What's on at your library</b>",
    "whatson.events.none": "📅 Your library has no coming events right now.",
    "whatson.events.when": "🕒 {day} at {start}",
    "whatson.events.when_until": "🕒 {day}, {start}–{end}",
    "whatson.events.place": "📍 {place}",
    "whatson.events.price": "Price: DKK {price}",
    # /news
    "whatson.news.header": "📰 <b>News from your library</b>",
    "whatson.news.none": "📰 Your library has no news right now.",
    # /recommend
    "whatson.recommend.header": "💡 <b>Suggestions based on your loans</b>",
    "whatson.recommend.no_loans": (
        "💡 You have no loans or holds right now, so I have nothing to base suggestions on. "
        "Try /search."
    ),
    "whatson.recommend.none": (
        "💡 I found no suggestions based on your loans right now. Try /search."
    ),
    "whatson.recommend.footer": "Tap a button to order.",
    # free text and a bare /search
    "whatson.search.ask": "🔎 What are you looking for? Type a title, an author or a subject.",
    "whatson.search.placeholder": "Title, author or subject",
    "whatson.freetext.offer": (
        "Shall I search the libraries' materials for it? Tap the button. "
        "Send /help to see what else I can do."
    ),
    "whatson.freetext.button": "🔎 Search for »{query}«",
    "whatson.freetext.too_long": (
        "That is too long for a search (at most {limit} characters). "
        "Send /help to see what I can do."
    ),
}
