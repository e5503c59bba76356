"""Patron-facing texts of the reminder digest and `/reminders`."""

from __future__ import annotations

DA: dict[str, str] = {
    "reminders.digest.header": "🔔 <b>Påmindelse fra biblioteket</b>",
    "reminders.digest.due": "<b>Snart til aflevering</b>",
    "reminders.digest.overdue": "<b>Overskredet afleveringsdato</b>",
    "reminders.digest.ready": "<b>Klar til afhentning</b>",
    "reminders.digest.unreadable": (
        "<b>Afleveringsdatoen kunne ikke læses</b>\n"
        "<i>Biblioteket sendte en dato, jeg ikke kan læse, så jeg kan ikke minde dig om den. "
        "Tjek datoen hos dit bibliotek.</i>"
    ),
    "reminders.digest.footer": "Slå påmindelser fra eller vælg dage med /reminders.",
    "reminders.button.renew": "Forny: {title}",
    "reminders.button.renew_all": "Forny alle",
    "reminders.reconnect": (
        "Din forbindelse til biblioteket er udløbet, så du får ikke påmindelser lige nu. "
        "Log ind igen for at fortsætte."
    ),
    "reminders.reconnect.button": "Log ind igen",
    "reminders.status.on": "🔔 Påmindelser er <b>slået til</b>: {days}.",
    "reminders.status.off": "🔕 Påmindelser er <b>slået fra</b>.",
    "reminders.status.no_account": (
        "🔕 Du får <b>ingen påmindelser</b> lige nu, fordi du ikke er logget ind. Skriv /login. "
        "Når du er logget ind, gælder dette:"
    ),
    "reminders.status.days": (
        "{days} dage før afleveringsdatoen (0 = samme dag), og når et lån er overskredet"
    ),
    "reminders.status.default": "(bibliotekets standard)",
    "reminders.status.ready": "Du får også besked, når en reservering er klar til afhentning.",
    "reminders.status.howto": (
        "Vælg dage med knapperne eller skriv fx <code>/reminders 5 2 0</code>. "
        "<code>/reminders off</code> slår dem fra, <code>/reminders on</code> slår dem til igen."
    ),
    "reminders.and": "og",
    "reminders.button.on": "🔔 Slå til",
    "reminders.button.off": "🔕 Slå fra",
    "reminders.button.days": "{days} dage",
    "reminders.saved.on": "✅ Påmindelser er slået til.",
    "reminders.saved.off": (
        "✅ Påmindelser er slået fra. Du kan slå dem til igen med /reminders on."
    ),
    "reminders.saved.days": "✅ Gemt.",
    "reminders.invalid": (
        "Det forstod jeg ikke. Skriv op til {max} hele tal mellem 0 og {limit}, "
        "fx <code>/reminders 5 2 0</code>, eller <code>/reminders off</code> / "
        "<code>/reminders on</code>."
    ),
    "reminders.expired_button": "Knappen er forældet. Skriv /reminders igen.",
}

EN: dict[str, str] = {
    "reminders.digest.header": "🔔 <b>Reminder from the library</b>",
    "reminders.digest.due": "<b>Due soon</b>",
    "reminders.digest.overdue": "<b>Overdue</b>",
    "reminders.digest.ready": "<b>Ready for pick-up</b>",
    "reminders.digest.unreadable": (
        "<b>The due date could not be read</b>\n"
        "<i>The library sent a date I cannot read, so I cannot remind you of it. Check the "
        "date with your library.</i>"
    ),
    "reminders.digest.footer": "Turn reminders off or choose the days with /reminders.",
    "reminders.button.renew": "Renew: {title}",
    "reminders.button.renew_all": "Renew all",
    "reminders.reconnect": (
        "Your connection to the library has expired, so reminders are paused. "
        "Log in again to continue."
    ),
    "reminders.reconnect.button": "Log in again",
    "reminders.status.on": "🔔 Reminders are <b>on</b>: {days}.",
    "reminders.status.off": "🔕 Reminders are <b>off</b>.",
    "reminders.status.no_account": (
        "🔕 You get <b>no reminders</b> right now, because you are not logged in. Send /login. "
        "Once you are logged in, this applies:"
    ),
    "reminders.status.days": (
        "{days} days before the due date (0 = on the day), and when a loan is overdue"
    ),
    "reminders.status.default": "(the library's default)",
    "reminders.status.ready": "You are also told when a hold is ready for pick-up.",
    "reminders.status.howto": (
        "Choose the days with the buttons or type e.g. <code>/reminders 5 2 0</code>. "
        "<code>/reminders off</code> turns them off, <code>/reminders on</code> turns them back on."
    ),
    "reminders.and": "and",
    "reminders.button.on": "🔔 Turn on",
    "reminders.button.off": "🔕 Turn off",
    "reminders.button.days": "{days} days",
    "reminders.saved.on": "✅ Reminders are on.",
    "reminders.saved.off": "✅ Reminders are off. Turn them on again with /reminders on.",
    "reminders.saved.days": "✅ Saved.",
    "reminders.invalid": (
        "I did not understand that. Give up to {max} whole numbers from 0 to {limit}, "
        "e.g. <code>/reminders 5 2 0</code>, or <code>/reminders off</code> / "
        "<code>/reminders on</code>."
    ),
    "reminders.expired_button": "That button has expired. Send /reminders again.",
}
