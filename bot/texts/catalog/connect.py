"""Texts of connecting a library account: /start, /help, /login, /logout, /forget, /language."""

from __future__ import annotations

from bot.texts.catalog import Message, _, _n

MESSAGES: tuple[Message, ...] = (
    # TRANSLATORS: {name} is ", Olena" (the Telegram first name) or empty; leave it out where a
    # greeting needs a form of the name the bot cannot make (the vocative). So in
    # connect.welcome_connected.
    _(
        "connect.welcome",
        "👋 Hi{name}! I help you with the public libraries.\n"
        "\n"
        "I can show your loans, holds and fees, search and order materials, renew loans and "
        "remind you of due dates.\n"
        "\n"
        "Begin with /login: you log in at your library, and I never see your PIN. Send /help to "
        "see every command.",
    ),
    _(
        "connect.welcome_connected",
        "👋 Welcome back{name}! You are connected. Try /loans, or send /help.",
    ),
    _(
        "connect.help",
        "<b>Commands</b>\n"
        "/login – connect your library account\n"
        "/loans – your loans and due dates\n"
        "/holds – your holds\n"
        "/debt – fees\n"
        "/search &lt;words&gt; – search for materials\n"
        "/order &lt;material id&gt; [pick-up branch] – place a hold\n"
        "/renew – renew loans\n"
        "/away &lt;days&gt; – before a trip: renew what is due within that many days\n"
        "/reminders – due-date reminders\n"
        "/calendar – your due dates in your calendar\n"
        "/language – choose the language\n"
        "/cards – your library cards here: rename, log out\n"
        "/logout – log out\n"
        "/forget – delete everything I know about you",
    ),
    _(
        "connect.login_prompt",
        "Tap the button to log in at your library. The link works for 10 minutes, once.",
    ),
    _(
        "connect.login_prompt_link",
        "Open this link to log in at your library (it works for 10 minutes, once):\n{url}",
    ),
    _("connect.connected", "✅ Connected! Your library account is now connected to this chat."),
    _(
        "connect.connected_library",
        "✅ Connected to your library in {library}! Try /loans to see your loans.",
    ),
    _("connect.municipality", "municipality {code}"),
    # TRANSLATORS: Københavns Kommune (municipality 101) by its name in your language.
    _("connect.municipality_101", "Copenhagen"),
    _(
        "connect.code_invalid",
        "That code is not valid here. It has expired, was already used, or belongs to another "
        "chat. Send /login in the chat where you want to connect your account.",
    ),
    _(
        "connect.logged_out",
        "👋 You are logged out here. I deleted your access, and the library has revoked it.",
    ),
    _(
        "connect.logout_sso",
        "The browser used for that login may still be logged in at the library login. This "
        "chat does not use that: the next /login here asks for a card number and PIN again. "
        "If that browser is on a shared device, open the button there to log out of the "
        "library login too.",
    ),
    _(
        "connect.logout_sso_link",
        "The browser used for that login may still be logged in at the library login. This "
        "chat does not use that: the next /login here asks for a card number and PIN again. "
        "If that browser is on a shared device, open this link there to log out of the "
        "library login too:\n"
        "{url}",
    ),
    _("connect.logout_button", "🚪 Log out of the library login"),
    _("connect.not_logged_in", "You were not logged in. Send /login to connect your account."),
    _(
        "connect.logged_out_unreadable",
        "👋 You are logged out here and your login is deleted on my side. It could not be ended "
        "at the library, because I can no longer read it (my keys have changed). It stops "
        "working by itself by {date} at the latest.",
    ),
    _(
        "connect.logged_out_unrevoked",
        "👋 You are logged out here and your login is deleted on my side. The library did not "
        "answer when I tried to end it there; it stops working by itself by {date} at the "
        "latest.",
    ),
    _(
        "connect.forget_prompt",
        "Delete everything I keep about this chat (login, settings and reminders)? This cannot "
        "be undone.",
    ),
    _("connect.forget_yes", "🗑 Yes, delete everything"),
    _("connect.forget_no", "No, keep it"),
    _(
        "connect.forgotten",
        "🗑 Everything is deleted: your login (the library has revoked the access), your "
        "settings, buttons and reminders. Send /start if you want to use me again.",
    ),
    _(
        "connect.forgotten_not_revoked",
        "🗑 Everything is deleted: your login, settings, buttons and reminders. The library did "
        "not answer when I asked it to revoke the access, so it will expire by itself. Send "
        "/start if you want to use me again.",
    ),
    _(
        "connect.forgotten_no_login",
        "🗑 Everything is deleted: your settings, buttons and reminders (you were not logged "
        "in). Send /start if you want to use me again.",
    ),
    _("connect.forget_kept", "Nothing was deleted."),
    _("connect.language_prompt", "Choose the language. Now: {current}."),
    _("connect.language_auto", "Automatic (from Telegram)"),
    # TRANSLATORS: the answer to choosing this catalogue's language: name your own language
    _("connect.language_set", "✅ The language is now English."),
    _("connect.language_set_auto", "✅ I now follow your Telegram language."),
    _n(
        "connect.expiry_warning",
        "⏳ Your library login expires in {days} day. Log in again to keep getting reminders.",
        "⏳ Your library login expires in {days} days. Log in again to keep getting reminders.",
        n="days",
    ),
    _(
        "connect.lapsed",
        "🔑 Your library login has expired. Your card stays here with its name and settings: "
        "log in again to see your loans and holds and to get reminders.",
    ),
    _("connect.hint", "I only understand commands. Send /help to see what I can do."),
)
