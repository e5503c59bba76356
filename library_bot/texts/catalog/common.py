"""Texts shared by every command: connection state, upstream failures, generic buttons."""

from __future__ import annotations

DA: dict[str, str] = {
    "common.not_connected": (
        "Du er ikke logget ind endnu. Tryk på knappen for at logge ind med dit bibliotek."
    ),
    "common.login_button": "🔑 Log ind med dit bibliotek",
    "common.unavailable": ("⚠️ Bibliotekets system svarer ikke lige nu. Prøv igen om lidt."),
    "common.malformed": (
        "⚠️ Biblioteket sendte et svar, vi ikke kunne læse. Vi har noteret fejlen. Prøv igen senere."
    ),
    "common.reconnect": (
        "🔑 Dit bibliotekslogin er udløbet eller blev afvist. Log ind igen for at fortsætte."
    ),
    "common.login_expired": (
        "🔑 Dit bibliotekslogin er udløbet, så jeg kan ikke se din konto længere. "
        "Log ind igen for at fortsætte."
    ),
    "common.logged_out_before": (
        "🔑 Du loggede ud. Log ind igen med knappen for at se dine lån og reserveringer."
    ),
    "common.user_refused": (
        "⚠️ Dit bibliotek kunne ikke slå dig op som låner lige nu (»{code}«). Prøv igen "
        "senere, eller kontakt dit bibliotek, hvis det bliver ved."
    ),
    "common.stale_button": "Den knap virker ikke længere. Prøv kommandoen igen.",
    "common.not_your_button": "Den knap er til den, der bad om den. Skriv selv kommandoen.",
    "common.private_only": (
        "🔒 Din lånerkonto bruger du kun i en privat chat med mig, hvor ingen andre kan se "
        "den: {link}"
    ),
    "common.private_only_button": "🔒 Lånerkonti bruges kun i en privat chat med mig: {link}",
    "common.private_only_open": "Åbn en privat chat",
    "common.unknown_command": "Den kommando kender jeg ikke. Skriv /help for at se, hvad jeg kan.",
    "common.yes": "Ja",
    "common.no": "Nej",
    "common.cancel": "Annullér",
    "common.cancelled": "Annulleret.",
    "common.done": "✅ Færdig.",
    "common.too_long_input": (
        "Din besked er for lang. Prøv med en kortere tekst (højst {limit} tegn)."
    ),
    "common.error": "Noget gik galt hos os. Prøv igen om lidt.",
}

EN: dict[str, str] = {
    "common.not_connected": (
        "You are not logged in yet. Tap the button to log in with your library."
    ),
    "common.login_button": "🔑 Log in with your library",
    "common.unavailable": ("⚠️ The library system is not answering right now. Try again shortly."),
    "common.malformed": (
        "⚠️ The library sent something unexpected. We have logged it. Try again later."
    ),
    "common.reconnect": (
        "🔑 Your library login has expired or was refused. Log in again to continue."
    ),
    "common.login_expired": (
        "🔑 Your library login has expired, so I cannot see your account any more. "
        "Log in again to continue."
    ),
    "common.logged_out_before": (
        "🔑 You logged out. Log in again with the button to see your loans and holds."
    ),
    "common.user_refused": (
        "⚠️ Your library could not look you up as a patron right now (“{code}”). Try again "
        "later, or contact your library if it keeps happening."
    ),
    "common.stale_button": "That button is no longer valid. Try the command again.",
    "common.not_your_button": "That button is for the person who asked. Send the command yourself.",
    "common.private_only": (
        "🔒 Your library account is only used in a private chat with me, where nobody else "
        "can see it: {link}"
    ),
    "common.private_only_button": (
        "🔒 Library accounts are only used in a private chat with me: {link}"
    ),
    "common.private_only_open": "Open a private chat",
    "common.unknown_command": "I don't know that command. Send /help to see what I can do.",
    "common.yes": "Yes",
    "common.no": "No",
    "common.cancel": "Cancel",
    "common.cancelled": "Cancelled.",
    "common.done": "✅ Done.",
    "common.too_long_input": (
        "Your message is too long. Try a shorter text (at most {limit} characters)."
    ),
    "common.error": "Something went wrong on our side. Try again shortly.",
}
