"""Texts of the borrower commands: /loans, /holds, /debt, /search, /order, /renew, cancel."""

from __future__ import annotations

from bot.texts.catalog import Message, _, _n

MESSAGES: tuple[Message, ...] = (
    # /loans
    _("borrower.loans.header", "📚 <b>Your loans</b> ({count})"),
    _("borrower.loans.empty", "📚 You have no loans right now."),
    # A long list's summary line, its parts joined by " · "
    _n("borrower.summary.overdue", "{count} overdue", "{count} overdue"),
    # TRANSLATORS: {days} is borrower.renew.days ("3 days")
    _n("borrower.summary.soon", "{count} due within {days}", "{count} due within {days}"),
    # TRANSLATORS: {days} is borrower.renew.days ("3 days")
    _("borrower.summary.calm", "nothing due within {days}"),
    _n("borrower.summary.refused", "⛔ {count} can't be renewed", "⛔ {count} can't be renewed"),
    _n("borrower.summary.ready", "{count} ready for pick-up", "{count} ready for pick-up"),
    _n("borrower.summary.waiting", "{count} waiting", "{count} waiting"),
    # The buttons that page through a long list (one edited message)
    _("borrower.page.previous", "◀"),
    _("borrower.page.next", "▶"),
    # TRANSLATORS: the button between ◀ and ▶: page {page} of {pages}
    _("borrower.page.position", "{page}/{pages}"),
    # /holds
    _("borrower.holds.header", "📌 <b>Your holds</b> ({count})"),
    _("borrower.holds.ready", "<b>Ready for pick-up</b>"),
    _("borrower.holds.waiting", "<b>Waiting</b>"),
    _("borrower.holds.empty", "📌 You have no holds right now."),
    _("borrower.holds.footer", "Tap a button to cancel a hold."),
    _("borrower.holds.cancel_button", "✖ Cancel: {title}"),
    # TRANSLATORS: a title held at two branches: {label} is borrower.holds.cancel_button,
    # {branch} the pick-up branch of this one
    _("borrower.holds.cancel_button_at", "{label} ({branch})"),
    # cancelling a hold
    _("borrower.cancel.confirm", "Do you want to cancel your hold on <b>{title}</b>?"),
    _(
        "borrower.cancel.confirm_at",
        "Do you want to cancel your hold on <b>{title}</b>, for pick-up at <b>{branch}</b>?",
    ),
    _("borrower.cancel.yes", "✖ Yes, cancel it"),
    _("borrower.cancel.no", "No, keep it"),
    _("borrower.cancel.done", "✅ Your hold on <b>{title}</b> is cancelled."),
    _("borrower.cancel.kept", "👍 Your hold on <b>{title}</b> is kept."),
    _(
        "borrower.cancel.not_done",
        "The hold on <b>{title}</b> was not cancelled. Check it with /holds.",
    ),
    _(
        "borrower.cancel.refused",
        "The library would not cancel the hold on <b>{title}</b>: {reason}",
    ),
    _("borrower.cancel.already", "That hold has already been dealt with. See /holds."),
    _(
        "borrower.cancel.gone",
        "The hold on <b>{title}</b> no longer exists – perhaps it was collected or already "
        "cancelled. See /holds.",
    ),
    _(
        "borrower.cancel.maybe",
        "⚠️ The library did not answer, so I cannot tell whether the hold on <b>{title}</b> "
        "was cancelled. Check /holds, and cancel it again only if the hold is still there.",
    ),
    # /debt
    _("borrower.debt.none", "💚 You owe the library nothing."),
    _("borrower.debt.header", "💰 <b>What you owe the library</b>"),
    # /search
    _(
        "borrower.search.usage",
        "Write what you are looking for after the command, e.g. <code>/search Karen Blixen</code>.",
    ),
    _n(
        "borrower.search.too_long",
        "Your search is too long. Use at most {limit} character, e.g. a title or an author.",
        "Your search is too long. Use at most {limit} characters, e.g. a title or an author.",
        n="limit",
    ),
    _("borrower.search.none", "🔎 No results for “{query}”. Try other words."),
    _n(
        "borrower.search.header",
        "🔎 <b>{count} result</b> for “{query}”",
        "🔎 <b>{count} results</b> for “{query}”",
    ),
    # TRANSLATORS: {count} is the number found, {shown} (fewer) the number listed
    _n(
        "borrower.search.header_more",
        "🔎 <b>{count} result</b> for “{query}” – here are the first {shown}",
        "🔎 <b>{count} results</b> for “{query}” – here are the first {shown}",
    ),
    _("borrower.search.footer", "Tap a button to order."),
    _("borrower.search.button", "📥 Order {number}: {title}"),
    # /order
    _(
        "borrower.order.usage",
        "Write the material's id after the command, and optionally the pick-up library, e.g. "
        "<code>/order 870970-basis:12345678 DK-710100</code>. You can find materials with "
        "/search.",
    ),
    _(
        "borrower.order.bad_id",
        "“{pid}” does not look like a material id. It looks like "
        "<code>870970-basis:12345678</code>; find it with /search.",
    ),
    _(
        "borrower.order.bad_branch",
        "“{branch}” does not look like a library. Write it as <code>DK-710100</code> or "
        "<code>761500</code>.",
    ),
    _("borrower.order.not_found", "I cannot find the material <code>{pid}</code>."),
    _(
        "borrower.order.no_branch",
        "I don't know where you want to pick it up. Add the library after the id, e.g. "
        "<code>/order {pid} DK-710100</code>.",
    ),
    _(
        "borrower.order.confirm",
        "Do you want to order <b>{title}</b>{creator}?\n"
        "Pick-up at <b>{branch}</b>.\n"
        "<i>Another branch: the button below, or <code>/order {pid}</code> and the branch's "
        "name</i>",
    ),
    _("borrower.order.change_branch", "📍 Change pick-up branch"),
    _("borrower.order.pick_branch", "📍 Where do you want to pick up <b>{title}</b>?"),
    _("borrower.order.branch_button", "{branch}"),
    _("borrower.order.branch_saved", "✓ {branch}"),
    _(
        "borrower.order.branch_not_found",
        "Your library has no pick-up branch called “{wanted}”. Choose one of these:",
    ),
    _("borrower.order.branch_several", "“{wanted}” fits several branches. Which one?"),
    _(
        "borrower.order.no_branches",
        "I cannot list your library's branches right now. Give the branch's id instead, e.g. "
        "<code>/order {pid} DK-710100</code>.",
    ),
    _("borrower.order.creator", " by {creator}"),
    _("borrower.order.yes", "📥 Yes, order it"),
    _("borrower.order.no", "No"),
    _(
        "borrower.order.placed",
        "✅ <b>{title}</b> is ordered for pick-up at <b>{branch}</b>.\n"
        "Order number: <code>{ors_id}</code>. It will show up under /holds shortly.",
    ),
    _(
        "borrower.order.placed_no_id",
        "✅ <b>{title}</b> is ordered for pick-up at <b>{branch}</b>. It will show up under "
        "/holds shortly.",
    ),
    _("borrower.order.aborted", "👍 Nothing ordered."),
    _("borrower.order.already", "That order has already been tried. See /holds."),
    _(
        "borrower.order.ordered_before",
        "📥 <b>{title}</b> has already been ordered on this card through the bot, so it is not "
        "ordered again. See /holds.",
    ),
    _(
        "borrower.order.unsure_before",
        "📥 <b>{title}</b> was ordered on this card through the bot earlier, but the "
        "library's answer was lost. So that it is not ordered twice, it is not ordered again "
        "until it has had a day to show up under /holds.",
    ),
    # TRANSLATORS: under a line naming the title (borrower.order.has_hold and the like)
    _(
        "borrower.order.ordered_before_shown",
        "📥 So it is not ordered again.",
    ),
    _("borrower.order.has_loan", "ℹ️ This card already has <b>{title}</b> on loan, due {date}."),
    _(
        "borrower.order.has_ready",
        "ℹ️ <b>{title}</b> is already waiting for this card at <b>{branch}</b>, ready for pick-up.",
    ),
    _(
        "borrower.order.has_hold",
        "ℹ️ This card already has <b>{title}</b> on hold, for pick-up at <b>{branch}</b>.",
    ),
    _(
        "borrower.order.owned",
        "<b>{branch}</b> has <b>{title}</b> on its own shelves, so it cannot be ordered through "
        "me. Reserve it in that library's own catalogue, or choose another pick-up branch: "
        "<code>/order {pid} &lt;library&gt;</code>.",
    ),
    _("borrower.order.catalogue", "The library's catalogue: {url}"),
    _(
        "borrower.order.wrong_medium",
        "<b>{title}</b> is a kind of material that cannot be ordered for pick-up (e.g. a net "
        "audiobook or an e-book). Find it in the library's digital services, or search for "
        "another edition with /search.",
    ),
    _(
        "borrower.order.no_lender",
        "No library can lend <b>{title}</b> to you. Search for another edition with /search, or "
        "ask your library.",
    ),
    _(
        "borrower.order.unknown_branch",
        "The pick-up branch <code>{branch}</code> does not exist at the libraries, so nothing "
        "was ordered. Choose another, e.g. <code>/order {pid} DK-710100</code>.",
    ),
    _(
        "borrower.order.branch_unknown",
        "I cannot find the pick-up branch <code>{branch}</code> at the libraries, so I have "
        "neither ordered nor saved it. Give another, e.g. <code>/order {pid} DK-710100</code>.",
    ),
    _(
        "borrower.order.branch_no_pickup",
        "<b>{branch}</b> does not take pick-ups, so I have not saved it. Choose another pick-up "
        "branch, e.g. <code>/order {pid} DK-710100</code>.",
    ),
    _(
        "borrower.order.unknown_user",
        "The library does not know you as a patron for this order, so <b>{title}</b> was not "
        "ordered. Contact your library, or log in again with /login.",
    ),
    _(
        "borrower.order.invalid",
        "The order system rejected the order of <b>{title}</b> as invalid. Try again, or order "
        "it on your library's website.",
    ),
    _(
        "borrower.order.ors_error",
        "The order system failed, so <b>{title}</b> was not ordered. Try again later.",
    ),
    _(
        "borrower.order.auth_error",
        "The order system could not confirm who you are, so <b>{title}</b> was not ordered. Log "
        "in again with /login and try again.",
    ),
    _(
        "borrower.order.accepted",
        "The order system accepted the order of <b>{title}</b> (<code>{code}</code>). It will "
        "show up under /holds shortly.",
    ),
    _(
        "borrower.order.missing_branch",
        "The library needs to know where you will pick it up. Try again with a library, e.g. "
        "<code>/order {pid} DK-710100</code>.",
    ),
    _(
        "borrower.order.system_down",
        "⚠️ The libraries' order system is down right now, so <b>{title}</b> was not ordered. "
        "Try again later.",
    ),
    _(
        "borrower.order.not_placed",
        "The library could not order <b>{title}</b>. Try again later, or ask your library.",
    ),
    _(
        "borrower.order.refused",
        "The library refused to order <b>{title}</b>, saying “<code>{code}</code>”. Try again "
        "later, or ask your library.",
    ),
    _(
        "borrower.order.maybe",
        "⚠️ The library did not answer, so I cannot tell whether <b>{title}</b> was ordered. "
        "A new order can take a while to show up, so check /holds tomorrow, and order it "
        "again only if it is not there.",
    ),
    # /renew
    _(
        "borrower.renew.header",
        # The buttons to renew several at once say what they do; a chat may have none of them.
        "🔄 <b>Renew loans</b> ({count})\nTap a loan to renew it.",
    ),
    _("borrower.renew.empty", "🔄 You have no loans to renew."),
    _("borrower.renew.button", "🔄 {title} · {due}"),
    _("borrower.renew.all", "🔄 Renew all"),
    # TRANSLATORS: "renew all" of /renew: it renews the loans due within the reminder window
    _n(
        "borrower.renew.all_within",
        "🔄 Renew those due within {days} day",
        "🔄 Renew those due within {days} days",
        n="days",
    ),
    _("borrower.renew.all_today", "🔄 Renew those due today"),
    _("borrower.renew.results", "🔄 <b>Renewal</b>"),
    _("borrower.renew.ok", "✅ <b>{title}</b>: new due date {date}"),
    _("borrower.renew.ok_no_date", "✅ <b>{title}</b>: renewed"),
    _(
        "borrower.renew.ok_same",
        "✅ <b>{title}</b>: renewed, but still due {date} – a renewal counts from today",
    ),
    _n(
        "borrower.renew.ok_many",
        "✅ {count} loan has the new due date {date}: {titles}",
        "✅ {count} loans have the new due date {date}: {titles}",
    ),
    _("borrower.renew.refused", "⛔ <b>{title}</b>: can't be renewed – {reason}"),
    _(
        "borrower.renew.refused_due",
        "⛔ <b>{title}</b>, due {date}: can't be renewed – {reason}",
    ),
    _("borrower.renew.cannot", "⛔ can't be renewed: {reason}"),
    _("borrower.renew.button_ok", "✅ {title} · {date}"),
    _("borrower.renew.button_ok_no_date", "✅ {title}"),
    _("borrower.renew.button_ok_same", "✅ {title} · still {date}"),
    _("borrower.renew.button_refused", "⛔ {title}: {reason}"),
    _("borrower.renew.button_unknown", "⚠️ {title}: no answer"),
    _("borrower.renew.button_fault", "⚠️ {title}: not renewed (our error)"),
    _("borrower.renew.button_not_done", "⚠️ {title}: not renewed – try again"),
    _("borrower.renew.button_lapsed", "🔑 {title}: not renewed – log in again"),
    # A loan button already tapped, when its page is shown again
    _("borrower.renew.button_tried", "↩️ {title} · {due}"),
    # The counts that open the results of "renew all", joined by " · "
    _n("borrower.renew.count_ok", "✅ {count} renewed", "✅ {count} renewed"),
    _n("borrower.renew.count_refused", "⛔ {count} refused", "⛔ {count} refused"),
    _n(
        "borrower.renew.count_fault",
        "⚠️ {count} not renewed (our error)",
        "⚠️ {count} not renewed (our error)",
    ),
    _n(
        "borrower.renew.count_unknown",
        "⚠️ {count} without an answer",
        "⚠️ {count} without an answer",
    ),
    _n(
        "borrower.renew.count_not_done",
        "⚠️ {count} not renewed now",
        "⚠️ {count} not renewed now",
    ),
    _(
        "borrower.renew.not_listed",
        "➕ <b>{title}</b>: borrowed since this list was made – send /renew again to renew it",
    ),
    _n(
        "borrower.renew.left_alone",
        "⏭ {count} loan was left alone, as it is not due within {days}: {titles}",
        "⏭ {count} loans were left alone, as they are not due within {days}: {titles}",
    ),
    # TRANSLATORS: the {days} of borrower.renew.left_alone
    _n("borrower.renew.days", "{days} day", "{days} days", n="days"),
    _(
        "borrower.renew.left_unreadable",
        "⏭ <b>{title}</b>: not renewed – its due date “{date}” could not be read",
    ),
    _("borrower.renew.tried_here", "↩️ <b>{title}</b>: already tried from this message"),
    _n(
        "borrower.renew.renewed_today",
        "↩️ {count} loan was renewed earlier today, so it is not renewed again: {titles}",
        "↩️ {count} loans were renewed earlier today, so they are not renewed again: {titles}",
    ),
    _n(
        "borrower.renew.nothing_due",
        "🔄 No loan is due within {days} day, so nothing was renewed. Tap a loan in /renew to "
        "renew it anyway.",
        "🔄 No loan is due within {days} days, so nothing was renewed. Tap a loan in /renew to "
        "renew it anyway.",
        n="days",
    ),
    _(
        "borrower.renew.no_answer",
        "⚠️ <b>{title}</b>: no answer from the library, so it may or may not be renewed – check "
        "/loans, and renew it again only if its due date has not moved",
    ),
    _(
        "borrower.renew.not_done",
        "⚠️ <b>{title}</b>: not renewed – the library could not handle the request just now; "
        "try again later",
    ),
    # The card's login ran out partway through "renew all": this loan was not renewed
    _(
        "borrower.renew.lapsed",
        "🔑 <b>{title}</b>: not renewed – the login expired partway through; log in again to "
        "renew it",
    ),
    _(
        "borrower.renew.fault",
        "⚠️ <b>{title}</b>: not renewed – the bot sent the library a request it could not "
        "accept. The fault is ours and has been logged; try again later",
    ),
    _(
        "borrower.renew.already",
        "That loan has already been renewed or tried today. /loans shows its due date.",
    ),
    _(
        "borrower.renew.all_already",
        "Those loans have already been renewed or tried today. /loans shows their due dates.",
    ),
    _("borrower.renew.reason.unknown", "the library gave no reason"),
    _("borrower.renew.reason.max", "it has been renewed the most times allowed"),
    _("borrower.renew.reason.reserved", "reserved by another patron"),
    _("borrower.renew.reason.too_early", "it is too early to renew it"),
    _("borrower.renew.reason.not_renewable", "this material may not be renewed"),
    _("borrower.renew.reason.debt", "you have unpaid fees"),
    _("borrower.renew.reason.not_found", "the loan no longer exists"),
    _("borrower.renew.reason.refused", "the library refused to renew it"),
    _("borrower.renew.reason.code", "the library said “{code}”"),
)
