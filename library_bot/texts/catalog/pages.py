"""Texts of the web pages shown after logging in at the access service."""

from __future__ import annotations

DA: dict[str, str] = {
    "pages.success_title": "Næsten færdig",
    "pages.success_body": (
        "Du er logget ind. Gå tilbage til Telegram for at forbinde din lånerkonto med chatten."
    ),
    "pages.back_to_telegram": "Tilbage til Telegram",
    "pages.back_to_chat": "Tilbage til chatten",
    "pages.logged_out_title": "Du er logget ud",
    "pages.logged_out_body": (
        "Du er logget ud af bibliotekslogin i denne browser. Næste gang du logger ind, skal "
        "du skrive dit lånernummer og din pinkode igen."
    ),
    "pages.success_code": (
        "Bruger du Telegram på en anden enhed? Skriv dette til botten inden 10 minutter: "
        "<code>{code}</code>"
    ),
    "pages.denied_title": "Login annulleret",
    "pages.denied_body": (
        "Du annullerede login, så intet er forbundet. Skriv /login i Telegram for at prøve igen."
    ),
    "pages.expired_title": "Linket er udløbet",
    "pages.expired_body": (
        "Dette login-link er udløbet eller allerede brugt. "
        "Skriv /login i Telegram for at få et nyt."
    ),
    "pages.bad_title": "Ugyldig forespørgsel",
    "pages.bad_body": "Siden mangler oplysninger. Skriv /login i Telegram for at starte forfra.",
    "pages.failed_title": "Biblioteket svarer ikke",
    "pages.failed_body": (
        "Login kunne ikke gøres færdigt, fordi bibliotekets login-tjeneste fejlede. "
        "Prøv igen om lidt med /login i Telegram."
    ),
}

EN: dict[str, str] = {
    "pages.success_title": "Almost done",
    "pages.success_body": (
        "You are logged in. Go back to Telegram to connect your library account to the chat."
    ),
    "pages.back_to_telegram": "Back to Telegram",
    "pages.back_to_chat": "Back to the chat",
    "pages.logged_out_title": "You are logged out",
    "pages.logged_out_body": (
        "You are logged out of the library login in this browser. The next time you log in, "
        "you give your card number and pin again."
    ),
    "pages.success_code": (
        "Using Telegram on another device? Send this to the bot within 10 minutes: "
        "<code>{code}</code>"
    ),
    "pages.denied_title": "Login cancelled",
    "pages.denied_body": (
        "You cancelled the login, so nothing was connected. Type /login in Telegram to try again."
    ),
    "pages.expired_title": "This link has expired",
    "pages.expired_body": (
        "This login link has expired or was already used. Type /login in Telegram for a new one."
    ),
    "pages.bad_title": "Invalid request",
    "pages.bad_body": "This page is missing information. Type /login in Telegram to start over.",
    "pages.failed_title": "The library is not answering",
    "pages.failed_body": (
        "The login could not be completed because the library's login service failed. "
        "Try again shortly with /login in Telegram."
    ),
}
