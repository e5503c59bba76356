"""Texts of connecting a library account: /start, /help, /login, /logout, /forget, /language."""

from __future__ import annotations

DA: dict[str, str] = {
    "connect.welcome": (
        "👋 Hej{name}! Jeg er din hjælper til folkebibliotekerne.\n\n"
        "Jeg kan vise dine lån, reserveringer og gebyrer, søge og bestille materialer, "
        "forny lån og minde dig om afleveringsdatoer.\n\n"
        "Kom i gang med /login: du logger ind hos dit bibliotek, og jeg ser aldrig din pinkode. "
        "Skriv /help for at se alle kommandoer."
    ),
    "connect.welcome_connected": (
        "👋 Velkommen tilbage{name}! Du er forbundet. Prøv /loans, eller skriv /help."
    ),
    "connect.help": (
        "<b>Kommandoer</b>\n"
        "/login – forbind din lånerkonto\n"
        "/loans – dine lån og afleveringsdatoer\n"
        "/holds – dine reserveringer\n"
        "/debt – gebyrer\n"
        "/search &lt;ord&gt; – søg efter materialer\n"
        "/order &lt;materiale-id&gt; [afhentningssted] – bestil\n"
        "/renew – forny lån\n"
        "/reminders – påmindelser om aflevering\n"
        "/language – vælg sprog\n"
        "/logout – log ud\n"
        "/forget – slet alt, hvad jeg ved om dig"
    ),
    "connect.login_prompt": (
        "Tryk på knappen for at logge ind hos dit bibliotek. Linket virker i 10 minutter "
        "og kun én gang."
    ),
    "connect.login_prompt_link": (
        "Åbn dette link for at logge ind hos dit bibliotek (virker i 10 minutter og kun én gang):"
        "\n{url}"
    ),
    "connect.connected": "✅ Forbundet! Din lånerkonto er nu forbundet med denne chat.",
    "connect.connected_library": (
        "✅ Forbundet med dit bibliotek i {library}! Prøv /loans for at se dine lån."
    ),
    "connect.municipality": "kommune {code}",
    "connect.code_invalid": (
        "Den kode er ikke gyldig her. Den er udløbet, allerede brugt eller hører til en anden "
        "chat. Skriv /login i den chat, hvor du vil forbinde din konto."
    ),
    "connect.logged_out": (
        "👋 Du er logget ud her. Jeg har slettet din adgang, og biblioteket har trukket den "
        "tilbage."
    ),
    "connect.logout_sso": (
        "Bibliotekslogin husker dig stadig i den browser, du loggede ind med. Næste /login "
        "beder om dit lånernummer og din pinkode igen. Tryk på knappen for også at logge ud "
        "af bibliotekslogin i browseren (vigtigt på en delt enhed)."
    ),
    "connect.logout_sso_link": (
        "Bibliotekslogin husker dig stadig i den browser, du loggede ind med. Næste /login "
        "beder om dit lånernummer og din pinkode igen. Åbn dette link for også at logge ud "
        "af bibliotekslogin i browseren (vigtigt på en delt enhed):\n{url}"
    ),
    "connect.logout_button": "🚪 Log ud af bibliotekslogin",
    "connect.not_logged_in": "Du var ikke logget ind. Skriv /login for at forbinde din konto.",
    "connect.logged_out_unreadable": (
        "👋 Du er logget ud her, og dit login er slettet hos mig. Det kunne ikke afsluttes hos "
        "biblioteket, fordi jeg ikke længere kan læse det (mine nøgler er skiftet). Det holder "
        "op med at virke af sig selv senest {date}."
    ),
    "connect.logged_out_unrevoked": (
        "👋 Du er logget ud her, og dit login er slettet hos mig. Biblioteket svarede ikke, da "
        "jeg ville afslutte det dér; det holder op med at virke af sig selv senest {date}."
    ),
    "connect.forget_prompt": (
        "Vil du slette alt, hvad jeg har gemt om denne chat (login, indstillinger og "
        "påmindelser)? Det kan ikke fortrydes."
    ),
    "connect.forget_yes": "🗑 Ja, slet alt",
    "connect.forget_no": "Nej, behold",
    "connect.forgotten": (
        "🗑 Alt er slettet: dit login (biblioteket har trukket adgangen tilbage), dine "
        "indstillinger, knapper og påmindelser. Skriv /start, hvis du vil bruge mig igen."
    ),
    "connect.forgotten_not_revoked": (
        "🗑 Alt er slettet: dit login, dine indstillinger, knapper og påmindelser. Biblioteket "
        "svarede ikke, da jeg bad det trække adgangen tilbage, så den udløber af sig selv. "
        "Skriv /start, hvis du vil bruge mig igen."
    ),
    "connect.forgotten_no_login": (
        "🗑 Alt er slettet: dine indstillinger, knapper og påmindelser (du var ikke logget "
        "ind). Skriv /start, hvis du vil bruge mig igen."
    ),
    "connect.forget_kept": "Intet er slettet.",
    "connect.language_prompt": "Vælg sprog. Nu: {current}.",
    "connect.language_auto": "Automatisk (fra Telegram)",
    "connect.language_da": "Dansk",
    "connect.language_en": "English",
    "connect.language_set": "✅ Sproget er nu dansk.",
    "connect.language_set_auto": "✅ Jeg følger nu sproget i din Telegram.",
    "connect.expiry_warning": (
        "⏳ Dit bibliotekslogin udløber om {days} dage. Log ind igen for at blive ved med at "
        "få påmindelser."
    ),
    "connect.expired": "🔑 Dit bibliotekslogin er udløbet, så jeg har glemt det. Log ind igen.",
    "connect.hint": "Jeg forstår kun kommandoer. Skriv /help for at se, hvad jeg kan.",
}

EN: dict[str, str] = {
    "connect.welcome": (
        "👋 Hi{name}! I help you with the public libraries.\n\n"
        "I can show your loans, holds and fees, search and order materials, renew loans and "
        "remind you of due dates.\n\n"
        "Begin with /login: you log in at your library, and I never see your pin. "
        "Send /help to see every command."
    ),
    "connect.welcome_connected": (
        "👋 Welcome back{name}! You are connected. Try /loans, or send /help."
    ),
    "connect.help": (
        "<b>Commands</b>\n"
        "/login – connect your library account\n"
        "/loans – your loans and due dates\n"
        "/holds – your holds\n"
        "/debt – fees\n"
        "/search &lt;words&gt; – search for materials\n"
        "/order &lt;material id&gt; [pick-up branch] – place a hold\n"
        "/renew – renew loans\n"
        "/reminders – due-date reminders\n"
        "/language – choose the language\n"
        "/logout – log out\n"
        "/forget – delete everything I know about you"
    ),
    "connect.login_prompt": (
        "Tap the button to log in at your library. The link works for 10 minutes, once."
    ),
    "connect.login_prompt_link": (
        "Open this link to log in at your library (it works for 10 minutes, once):\n{url}"
    ),
    "connect.connected": "✅ Connected! Your library account is now connected to this chat.",
    "connect.connected_library": (
        "✅ Connected to your library in {library}! Try /loans to see your loans."
    ),
    "connect.municipality": "municipality {code}",
    "connect.code_invalid": (
        "That code is not valid here. It has expired, was already used, or belongs to another "
        "chat. Send /login in the chat where you want to connect your account."
    ),
    "connect.logged_out": (
        "👋 You are logged out here. I deleted your access, and the library has revoked it."
    ),
    "connect.logout_sso": (
        "The library login still remembers you in the browser you logged in with. The next "
        "/login asks for your card number and pin again. Tap the button to also log out of "
        "the library login in that browser (important on a shared device)."
    ),
    "connect.logout_sso_link": (
        "The library login still remembers you in the browser you logged in with. The next "
        "/login asks for your card number and pin again. Open this link to also log out of "
        "the library login in that browser (important on a shared device):\n{url}"
    ),
    "connect.logout_button": "🚪 Log out of the library login",
    "connect.not_logged_in": "You were not logged in. Send /login to connect your account.",
    "connect.logged_out_unreadable": (
        "👋 You are logged out here and your login is deleted on my side. It could not be ended "
        "at the library, because I can no longer read it (my keys have changed). It stops "
        "working by itself by {date} at the latest."
    ),
    "connect.logged_out_unrevoked": (
        "👋 You are logged out here and your login is deleted on my side. The library did not "
        "answer when I tried to end it there; it stops working by itself by {date} at the latest."
    ),
    "connect.forget_prompt": (
        "Delete everything I keep about this chat (login, settings and reminders)? "
        "This cannot be undone."
    ),
    "connect.forget_yes": "🗑 Yes, delete everything",
    "connect.forget_no": "No, keep it",
    "connect.forgotten": (
        "🗑 Everything is deleted: your login (the library has revoked the access), your "
        "settings, buttons and reminders. Send /start if you want to use me again."
    ),
    "connect.forgotten_not_revoked": (
        "🗑 Everything is deleted: your login, settings, buttons and reminders. The library did "
        "not answer when I asked it to revoke the access, so it will expire by itself. "
        "Send /start if you want to use me again."
    ),
    "connect.forgotten_no_login": (
        "🗑 Everything is deleted: your settings, buttons and reminders (you were not logged "
        "in). Send /start if you want to use me again."
    ),
    "connect.forget_kept": "Nothing was deleted.",
    "connect.language_prompt": "Choose the language. Now: {current}.",
    "connect.language_auto": "Automatic (from Telegram)",
    "connect.language_da": "Dansk",
    "connect.language_en": "English",
    "connect.language_set": "✅ The language is now English.",
    "connect.language_set_auto": "✅ I now follow your Telegram language.",
    "connect.expiry_warning": (
        "⏳ Your library login expires in {days} days. Log in again to keep getting reminders."
    ),
    "connect.expired": "🔑 Your library login has expired, so I have forgotten it. Log in again.",
    "connect.hint": "I only understand commands. Send /help to see what I can do.",
}
