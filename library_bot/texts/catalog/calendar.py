"""Texts of /calendar and of the calendar feed itself."""

from __future__ import annotations

DA: dict[str, str] = {
    "calendar.feed.name": "Biblioteket",
    "calendar.event.due": "📚 Afleveres: {title}",
    "calendar.event.pick_up": "📦 Sidste dag at hente: {title}",
    "calendar.made": (
        "📅 <b>Din bibliotekskalender</b>\n\n"
        "Abonnér på denne adresse i din kalender (Google, Apple, Outlook), så kan du se dine "
        "afleveringsdage og sidste afhentningsdage. Den følger med, når du fornyer.\n\n"
        "<code>{url}</code>\n\n"
        "Adressen er hemmelig: alle med den kan se dine lån. /calendar off lukker den, og så "
        "kan du lave en ny."
    ),
    "calendar.off": "📅 Kalenderadressen er lukket. /calendar laver en ny.",
    "calendar.none": "Du har ingen kalenderadresse. /calendar laver en.",
    "calendar.exists": (
        "Du har allerede en kalenderadresse. Botten gemmer den ikke i klartekst og kan ikke vise "
        "den igen: /calendar new laver en ny (den gamle holder op med at virke), og "
        "/calendar off lukker den."
    ),
    "calendar.unknown": (
        "Skriv /calendar for at få din kalenderadresse, /calendar new for en ny, eller "
        "/calendar off for at lukke den."
    ),
    "calendar.no_public_url": (
        "Kalenderen kræver, at botten har en offentlig adresse. Den er ikke sat op her."
    ),
}

EN: dict[str, str] = {
    "calendar.feed.name": "Library",
    "calendar.event.due": "📚 Due: {title}",
    "calendar.event.pick_up": "📦 Last day to pick up: {title}",
    "calendar.made": (
        "📅 <b>Your library calendar</b>\n\n"
        "Subscribe to this address in your calendar (Google, Apple, Outlook) to see your due "
        "dates and last pick-up days. It follows your renewals.\n\n"
        "<code>{url}</code>\n\n"
        "Keep the address secret: anyone who has it can see your loans. /calendar off closes "
        "it, and you can make a new one."
    ),
    "calendar.off": "📅 The calendar address is closed. /calendar makes a new one.",
    "calendar.none": "You have no calendar address. /calendar makes one.",
    "calendar.exists": (
        "You already have a calendar address. The bot does not keep it in plain text and cannot "
        "show it again: /calendar new makes a new one (the old one stops working), and "
        "/calendar off closes it."
    ),
    "calendar.unknown": (
        "Type /calendar for your calendar address, /calendar new for a new one, or "
        "/calendar off to close it."
    ),
    "calendar.no_public_url": (
        "The calendar needs the bot to have a public address. It is not set up here."
    ),
}
