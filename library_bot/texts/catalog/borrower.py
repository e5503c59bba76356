"""Texts of the borrower commands: /loans, /holds, /debt, /search, /order, /renew, cancel."""

from __future__ import annotations

DA: dict[str, str] = {
    # /loans
    "borrower.loans.header": "📚 <b>Dine lån</b> ({count})",
    "borrower.loans.empty": "📚 Du har ingen lån lige nu.",
    # /holds
    "borrower.holds.header": "📌 <b>Dine reserveringer</b> ({count})",
    "borrower.holds.ready": "<b>Klar til afhentning</b>",
    "borrower.holds.waiting": "<b>Venter</b>",
    "borrower.holds.empty": "📌 Du har ingen reserveringer lige nu.",
    "borrower.holds.footer": "Tryk på en knap for at annullere en reservering.",
    "borrower.holds.cancel_button": "✖ Annullér: {title}",
    # cancelling a hold
    "borrower.cancel.confirm": "Vil du annullere din reservering af <b>{title}</b>?",
    "borrower.cancel.yes": "✖ Ja, annullér den",
    "borrower.cancel.no": "Nej, behold den",
    "borrower.cancel.done": "✅ Din reservering af <b>{title}</b> er annulleret.",
    "borrower.cancel.kept": "👍 Din reservering af <b>{title}</b> er beholdt.",
    "borrower.cancel.not_done": (
        "Reserveringen af <b>{title}</b> blev ikke annulleret. Se /holds for at tjekke den."
    ),
    "borrower.cancel.refused": (
        "Biblioteket ville ikke annullere reserveringen af <b>{title}</b>: {reason}"
    ),
    "borrower.cancel.already": "Den reservering er allerede behandlet. Se /holds.",
    "borrower.cancel.gone": (
        "Reserveringen af <b>{title}</b> findes ikke længere – den er måske hentet eller "
        "allerede annulleret. Se /holds."
    ),
    "borrower.cancel.maybe": (
        "⚠️ Biblioteket svarede ikke, så reserveringen af <b>{title}</b> kan være annulleret "
        "eller ej. Se /holds om lidt, før du prøver igen."
    ),
    # /debt
    "borrower.debt.none": "💚 Du skylder ikke biblioteket noget.",
    "borrower.debt.header": "💰 <b>Det skylder du biblioteket</b>",
    # /search
    "borrower.search.usage": (
        "Skriv, hvad du leder efter, efter kommandoen, fx <code>/search Karen Blixen</code>."
    ),
    "borrower.search.too_long": (
        "Din søgning er for lang. Brug højst {limit} tegn, fx en titel eller et forfatternavn."
    ),
    "borrower.search.none": "🔎 Ingen resultater for »{query}«. Prøv med andre ord.",
    "borrower.search.header": "🔎 <b>{count} resultater</b> for »{query}«",
    "borrower.search.header_more": (
        "🔎 <b>{count} resultater</b> for »{query}« – her er de første {shown}"
    ),
    "borrower.search.footer": "Tryk på en knap for at bestille.",
    "borrower.search.button": "📥 Bestil {number}: {title}",
    # /order
    "borrower.order.usage": (
        "Skriv materialets id efter kommandoen, og evt. afhentningsbibliotek, fx "
        "<code>/order 870970-basis:12345678 DK-710100</code>. "
        "Du kan også finde materialer med /search."
    ),
    "borrower.order.bad_id": (
        "»{pid}« ligner ikke et materiale-id. Det ser ud som "
        "<code>870970-basis:12345678</code>; find det med /search."
    ),
    "borrower.order.bad_branch": (
        "»{branch}« ligner ikke et bibliotek. Skriv det som <code>DK-710100</code> "
        "eller <code>761500</code>."
    ),
    "borrower.order.not_found": "Jeg kan ikke finde materialet <code>{pid}</code>.",
    "borrower.order.no_branch": (
        "Jeg ved ikke, hvor du vil hente materialet. Skriv biblioteket efter id'et, fx "
        "<code>/order {pid} DK-710100</code>."
    ),
    "borrower.order.confirm": (
        "Vil du bestille <b>{title}</b>{creator}?\nAfhentes på <b>{branch}</b>.\n"
        "<i>Et andet bibliotek: <code>/order {pid} DK-</code>… (bibliotekets id)</i>"
    ),
    "borrower.order.creator": " af {creator}",
    "borrower.order.yes": "📥 Ja, bestil",
    "borrower.order.no": "Nej",
    "borrower.order.placed": (
        "✅ <b>{title}</b> er bestilt til afhentning på <b>{branch}</b>.\n"
        "Bestillingsnummer: <code>{ors_id}</code>. Den dukker op under /holds om lidt."
    ),
    "borrower.order.placed_no_id": (
        "✅ <b>{title}</b> er bestilt til afhentning på <b>{branch}</b>. "
        "Den dukker op under /holds om lidt."
    ),
    "borrower.order.aborted": "👍 Intet bestilt.",
    "borrower.order.already": "Det er allerede bestilt. Se /holds.",
    "borrower.order.owned": (
        "<b>{branch}</b> har selv <b>{title}</b> på hylden, så det kan ikke bestilles "
        "gennem mig. Reservér det i det biblioteks egen katalog, eller vælg et andet "
        "afhentningssted: <code>/order {pid} &lt;bibliotek&gt;</code>."
    ),
    "borrower.order.catalogue": "Bibliotekets katalog: {url}",
    "borrower.order.wrong_medium": (
        "<b>{title}</b> er en type materiale, der ikke kan bestilles til afhentning (fx en "
        "netlydbog eller e-bog). Find det i bibliotekets digitale tilbud, eller søg efter en "
        "anden udgave med /search."
    ),
    "borrower.order.no_lender": (
        "Intet bibliotek kan låne <b>{title}</b> ud. Søg efter en anden udgave med /search, "
        "eller spørg dit bibliotek."
    ),
    "borrower.order.unknown_branch": (
        "Afhentningsstedet <code>{branch}</code> findes ikke hos bibliotekerne, så intet er "
        "bestilt. Vælg et andet, fx <code>/order {pid} DK-710100</code>."
    ),
    "borrower.order.branch_unknown": (
        "Jeg kan ikke finde afhentningsstedet <code>{branch}</code> hos bibliotekerne, så jeg "
        "har hverken bestilt eller gemt det. Skriv et andet, fx "
        "<code>/order {pid} DK-710100</code>."
    ),
    "borrower.order.branch_no_pickup": (
        "<b>{branch}</b> tager ikke imod afhentninger, så jeg har ikke gemt det. Vælg et andet "
        "afhentningssted, fx <code>/order {pid} DK-710100</code>."
    ),
    "borrower.order.unknown_user": (
        "Biblioteket kender dig ikke som låner til den bestilling, så <b>{title}</b> blev ikke "
        "bestilt. Kontakt dit bibliotek, eller log ind igen med /login."
    ),
    "borrower.order.invalid": (
        "Bestillingssystemet afviste bestillingen af <b>{title}</b> som ugyldig. Prøv igen, "
        "eller bestil den på dit biblioteks hjemmeside."
    ),
    "borrower.order.ors_error": (
        "Bestillingssystemet fejlede, så <b>{title}</b> blev ikke bestilt. Prøv igen senere."
    ),
    "borrower.order.auth_error": (
        "Bestillingssystemet kunne ikke bekræfte, hvem du er, så <b>{title}</b> blev ikke "
        "bestilt. Log ind igen med /login, og prøv igen."
    ),
    "borrower.order.accepted": (
        "Bestillingssystemet tog imod bestillingen af <b>{title}</b> (<code>{code}</code>). "
        "Den dukker op under /holds om lidt."
    ),
    "borrower.order.missing_branch": (
        "Biblioteket skal vide, hvor du vil hente materialet. Prøv igen med et bibliotek, fx "
        "<code>/order {pid} DK-710100</code>."
    ),
    "borrower.order.system_down": (
        "⚠️ Bibliotekernes bestillingssystem er nede lige nu, så <b>{title}</b> blev ikke "
        "bestilt. Prøv igen senere."
    ),
    "borrower.order.not_placed": (
        "Biblioteket kunne ikke bestille <b>{title}</b>. Prøv igen senere, eller spørg dit "
        "bibliotek."
    ),
    "borrower.order.refused": (
        "Biblioteket afviste bestillingen af <b>{title}</b> med begrundelsen "
        "»<code>{code}</code>«. Prøv igen senere, eller spørg dit bibliotek."
    ),
    "borrower.order.maybe": (
        "Bestillingen kan være gået igennem alligevel. Se /holds om lidt, før du prøver igen."
    ),
    # /renew
    "borrower.renew.header": (
        "🔄 <b>Forny lån</b> ({count})\nTryk på et lån for at forny det, eller forny dem alle."
    ),
    "borrower.renew.empty": "🔄 Du har ingen lån at forny.",
    "borrower.renew.button": "🔄 {title} · {due}",
    "borrower.renew.all": "🔄 Forny alle",
    "borrower.renew.results": "🔄 <b>Fornyelse</b>",
    "borrower.renew.ok": "✅ <b>{title}</b>: ny afleveringsdato {date}",
    "borrower.renew.ok_no_date": "✅ <b>{title}</b>: fornyet",
    "borrower.renew.refused": "⛔ <b>{title}</b>: kan ikke fornys – {reason}",
    "borrower.renew.cannot": "⛔ kan ikke fornys: {reason}",
    "borrower.renew.button_ok": "✅ {title} · {date}",
    "borrower.renew.button_ok_no_date": "✅ {title}",
    "borrower.renew.button_refused": "⛔ {title}: {reason}",
    "borrower.renew.button_unknown": "⚠️ {title}: intet svar",
    "borrower.renew.left_alone": (
        "⏭ {count} lån blev ikke fornyet, fordi de først skal afleveres om mere end {days} "
        "dage: {titles}"
    ),
    "borrower.renew.left_unreadable": (
        "⏭ <b>{title}</b>: ikke fornyet – afleveringsdatoen »{date}« kunne ikke læses"
    ),
    "borrower.renew.tried_here": "↩️ <b>{title}</b>: allerede forsøgt fra denne besked",
    "borrower.renew.nothing_due": (
        "🔄 Ingen lån skal afleveres inden for {days} dage, så intet er fornyet. "
        "Tryk på et lån i /renew for at forny det alligevel."
    ),
    "borrower.renew.no_answer": (
        "⚠️ <b>{title}</b>: intet svar fra biblioteket – se /loans om lidt"
    ),
    "borrower.renew.already": "Det lån er allerede forsøgt fornyet. Se /loans.",
    "borrower.renew.reason.unknown": "biblioteket gav ingen grund",
    "borrower.renew.reason.max": "det er fornyet det største antal gange",
    "borrower.renew.reason.reserved": "reserveret af en anden låner",
    "borrower.renew.reason.too_early": "det er for tidligt at forny",
    "borrower.renew.reason.not_renewable": "det kan ikke fornys",
    "borrower.renew.reason.debt": "du har ubetalte gebyrer",
    "borrower.renew.reason.not_found": "lånet findes ikke længere",
    "borrower.renew.reason.refused": "biblioteket afviste fornyelsen",
    "borrower.renew.reason.code": "biblioteket svarede »{code}«",
}

EN: dict[str, str] = {
    # /loans
    "borrower.loans.header": "📚 <b>Your loans</b> ({count})",
    "borrower.loans.empty": "📚 You have no loans right now.",
    # /holds
    "borrower.holds.header": "📌 <b>Your holds</b> ({count})",
    "borrower.holds.ready": "<b>Ready for pick-up</b>",
    "borrower.holds.waiting": "<b>Waiting</b>",
    "borrower.holds.empty": "📌 You have no holds right now.",
    "borrower.holds.footer": "Tap a button to cancel a hold.",
    "borrower.holds.cancel_button": "✖ Cancel: {title}",
    # cancelling a hold
    "borrower.cancel.confirm": "Do you want to cancel your hold on <b>{title}</b>?",
    "borrower.cancel.yes": "✖ Yes, cancel it",
    "borrower.cancel.no": "No, keep it",
    "borrower.cancel.done": "✅ Your hold on <b>{title}</b> is cancelled.",
    "borrower.cancel.kept": "👍 Your hold on <b>{title}</b> is kept.",
    "borrower.cancel.not_done": (
        "The hold on <b>{title}</b> was not cancelled. Check it with /holds."
    ),
    "borrower.cancel.refused": "The library would not cancel the hold on <b>{title}</b>: {reason}",
    "borrower.cancel.already": "That hold has already been dealt with. See /holds.",
    "borrower.cancel.gone": (
        "The hold on <b>{title}</b> no longer exists – perhaps it was collected or already "
        "cancelled. See /holds."
    ),
    "borrower.cancel.maybe": (
        "⚠️ The library did not answer, so the hold on <b>{title}</b> may or may not be "
        "cancelled. Check /holds in a little while before trying again."
    ),
    # /debt
    "borrower.debt.none": "💚 You owe the library nothing.",
    "borrower.debt.header": "💰 <b>What you owe the library</b>",
    # /search
    "borrower.search.usage": (
        "Write what you are looking for after the command, e.g. <code>/search Karen Blixen</code>."
    ),
    "borrower.search.too_long": (
        "Your search is too long. Use at most {limit} characters, e.g. a title or an author."
    ),
    "borrower.search.none": "🔎 No results for “{query}”. Try other words.",
    "borrower.search.header": "🔎 <b>{count} results</b> for “{query}”",
    "borrower.search.header_more": (
        "🔎 <b>{count} results</b> for “{query}” – here are the first {shown}"
    ),
    "borrower.search.footer": "Tap a button to order.",
    "borrower.search.button": "📥 Order {number}: {title}",
    # /order
    "borrower.order.usage": (
        "Write the material's id after the command, and optionally the pick-up library, e.g. "
        "<code>/order 870970-basis:12345678 DK-710100</code>. "
        "You can find materials with /search."
    ),
    "borrower.order.bad_id": (
        "“{pid}” does not look like a material id. It looks like "
        "<code>870970-basis:12345678</code>; find it with /search."
    ),
    "borrower.order.bad_branch": (
        "“{branch}” does not look like a library. Write it as <code>DK-710100</code> "
        "or <code>761500</code>."
    ),
    "borrower.order.not_found": "I cannot find the material <code>{pid}</code>.",
    "borrower.order.no_branch": (
        "I don't know where you want to pick it up. Add the library after the id, e.g. "
        "<code>/order {pid} DK-710100</code>."
    ),
    "borrower.order.confirm": (
        "Do you want to order <b>{title}</b>{creator}?\nPick-up at <b>{branch}</b>.\n"
        "<i>Another library: <code>/order {pid} DK-</code>… (the library's id)</i>"
    ),
    "borrower.order.creator": " by {creator}",
    "borrower.order.yes": "📥 Yes, order it",
    "borrower.order.no": "No",
    "borrower.order.placed": (
        "✅ <b>{title}</b> is ordered for pick-up at <b>{branch}</b>.\n"
        "Order number: <code>{ors_id}</code>. It will show up under /holds shortly."
    ),
    "borrower.order.placed_no_id": (
        "✅ <b>{title}</b> is ordered for pick-up at <b>{branch}</b>. "
        "It will show up under /holds shortly."
    ),
    "borrower.order.aborted": "👍 Nothing ordered.",
    "borrower.order.already": "That is already ordered. See /holds.",
    "borrower.order.owned": (
        "<b>{branch}</b> has <b>{title}</b> on its own shelves, so it cannot be ordered "
        "through me. Reserve it in that library's own catalogue, or choose another pick-up "
        "branch: <code>/order {pid} &lt;library&gt;</code>."
    ),
    "borrower.order.catalogue": "The library's catalogue: {url}",
    "borrower.order.wrong_medium": (
        "<b>{title}</b> is a kind of material that cannot be ordered for pick-up (e.g. a net "
        "audiobook or an e-book). Find it in the library's digital services, or search for "
        "another edition with /search."
    ),
    "borrower.order.no_lender": (
        "No library can lend <b>{title}</b> to you. Search for another edition with /search, "
        "or ask your library."
    ),
    "borrower.order.unknown_branch": (
        "The pick-up branch <code>{branch}</code> does not exist at the libraries, so nothing "
        "was ordered. Choose another, e.g. <code>/order {pid} DK-710100</code>."
    ),
    "borrower.order.branch_unknown": (
        "I cannot find the pick-up branch <code>{branch}</code> at the libraries, so I have "
        "neither ordered nor saved it. Give another, e.g. <code>/order {pid} DK-710100</code>."
    ),
    "borrower.order.branch_no_pickup": (
        "<b>{branch}</b> does not take pick-ups, so I have not saved it. Choose another "
        "pick-up branch, e.g. <code>/order {pid} DK-710100</code>."
    ),
    "borrower.order.unknown_user": (
        "The library does not know you as a patron for this order, so <b>{title}</b> was not "
        "ordered. Contact your library, or log in again with /login."
    ),
    "borrower.order.invalid": (
        "The order system rejected the order of <b>{title}</b> as invalid. Try again, or "
        "order it on your library's website."
    ),
    "borrower.order.ors_error": (
        "The order system failed, so <b>{title}</b> was not ordered. Try again later."
    ),
    "borrower.order.auth_error": (
        "The order system could not confirm who you are, so <b>{title}</b> was not ordered. "
        "Log in again with /login and try again."
    ),
    "borrower.order.accepted": (
        "The order system accepted the order of <b>{title}</b> (<code>{code}</code>). "
        "It will show up under /holds shortly."
    ),
    "borrower.order.missing_branch": (
        "The library needs to know where you will pick it up. Try again with a library, e.g. "
        "<code>/order {pid} DK-710100</code>."
    ),
    "borrower.order.system_down": (
        "⚠️ The libraries' order system is down right now, so <b>{title}</b> was not ordered. "
        "Try again later."
    ),
    "borrower.order.not_placed": (
        "The library could not order <b>{title}</b>. Try again later, or ask your library."
    ),
    "borrower.order.refused": (
        "The library refused to order <b>{title}</b>, saying “<code>{code}</code>”. "
        "Try again later, or ask your library."
    ),
    "borrower.order.maybe": (
        "The order may have gone through anyway. Check /holds in a little while before "
        "trying again."
    ),
    # /renew
    "borrower.renew.header": (
        "🔄 <b>Renew loans</b> ({count})\nTap a loan to renew it, or renew them all."
    ),
    "borrower.renew.empty": "🔄 You have no loans to renew.",
    "borrower.renew.button": "🔄 {title} · {due}",
    "borrower.renew.all": "🔄 Renew all",
    "borrower.renew.results": "🔄 <b>Renewal</b>",
    "borrower.renew.ok": "✅ <b>{title}</b>: new due date {date}",
    "borrower.renew.ok_no_date": "✅ <b>{title}</b>: renewed",
    "borrower.renew.refused": "⛔ <b>{title}</b>: can't be renewed – {reason}",
    "borrower.renew.cannot": "⛔ can't be renewed: {reason}",
    "borrower.renew.button_ok": "✅ {title} · {date}",
    "borrower.renew.button_ok_no_date": "✅ {title}",
    "borrower.renew.button_refused": "⛔ {title}: {reason}",
    "borrower.renew.button_unknown": "⚠️ {title}: no answer",
    "borrower.renew.left_alone": (
        "⏭ {count} loans were left alone, as they are not due within {days} days: {titles}"
    ),
    "borrower.renew.left_unreadable": (
        "⏭ <b>{title}</b>: not renewed – its due date “{date}” could not be read"
    ),
    "borrower.renew.tried_here": "↩️ <b>{title}</b>: already tried from this message",
    "borrower.renew.nothing_due": (
        "🔄 No loan is due within {days} days, so nothing was renewed. "
        "Tap a loan in /renew to renew it anyway."
    ),
    "borrower.renew.no_answer": (
        "⚠️ <b>{title}</b>: no answer from the library – check /loans shortly"
    ),
    "borrower.renew.already": "That loan has already been tried. See /loans.",
    "borrower.renew.reason.unknown": "the library gave no reason",
    "borrower.renew.reason.max": "it has been renewed the most times allowed",
    "borrower.renew.reason.reserved": "reserved by another patron",
    "borrower.renew.reason.too_early": "it is too early to renew it",
    "borrower.renew.reason.not_renewable": "it cannot be renewed",
    "borrower.renew.reason.debt": "you have unpaid fees",
    "borrower.renew.reason.not_found": "the loan no longer exists",
    "borrower.renew.reason.refused": "the library refused to renew it",
    "borrower.renew.reason.code": "the library said “{code}”",
}
