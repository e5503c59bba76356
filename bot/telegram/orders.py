"""The chat's words for ordering (`bot.actions.ordering`'s results): why an order cannot be
asked about, what the card has of the title, the order system's reasons, and the order placed
or refused."""

from __future__ import annotations

import datetime as dt

from bot.actions import ordering
from bot.library.errors import BadRequest, ClientFault, LibraryError, Refused
from bot.texts import t
from bot.texts.formatting import format_date, shorten
from bot.texts.render import material_type, render_copies

# Longest id or branch echoed back to the patron when it is refused.
ECHO_LIMIT = 60


def why_not(
    result: ordering.NotOrderable
    | ordering.NoBranches
    | ordering.NoBranch
    | ordering.BranchRefused,
    lang: str,
) -> str:
    """Why the order cannot be asked about, in a sentence."""
    if isinstance(result, ordering.NotOrderable):
        if result.why == "net_only":
            # The type beside the title: a printed edition may share the title.
            kind = material_type(result.kind, lang)
            title = f"{result.title} · {kind}" if kind else result.title
            return t(lang, "borrower.order.wrong_medium", title=title)
        return t(lang, "borrower.order.not_found", pid=result.pid)
    if isinstance(result, ordering.NoBranches):
        return t(lang, "borrower.order.no_branches", pid=result.pid)
    if isinstance(result, ordering.NoBranch):
        return t(lang, "borrower.order.no_branch", pid=result.pid)
    key = "borrower.order.branch_no_pickup" if result.known else "borrower.order.branch_unknown"
    return t(lang, key, branch=result.name, pid=result.pid)


def held_line(held: ordering.OnCard, title: str, lang: str, today: dt.date) -> str:
    """What the card has of the title already, in a line."""
    if held.kind == "loan":
        date = format_date(held.due, lang, today=today)
        return t(lang, "borrower.order.has_loan", title=title, date=date)
    key = "borrower.order.has_ready" if held.kind == "ready" else "borrower.order.has_hold"
    return t(lang, key, title=title, branch=held.branch)


def announced_text(found: ordering.Announced, lang: str) -> str:
    """The order system's announced refusal in words; for a title on the card's library's
    own shelves, where it stands there and the library's catalogue."""
    pid = found.pid
    branch = found.library or found.agency
    text = t(
        lang, ORDER_REASONS[found.reason], title=found.work.title or pid, pid=pid, branch=branch
    )
    if found.reason != "owned_own_catalogue" or not found.agency:
        return text
    lines = render_copies(found.copies, lang)
    if lines:
        text += "\n\n" + "\n".join([t(lang, "shelf.where_it_stands"), *lines])
    if found.url:
        text += "\n" + t(lang, "borrower.order.catalogue", url=found.url)
    return text


# The order system's reasons (OpenOrder, passed on by the platform in `error`) -> the text that
# says what it means and what the patron can do next. See production-notes.md.
ORDER_REASONS: dict[str, str] = {
    "owned_own_catalogue": "borrower.order.owned",
    "owned_wrong_mediumtype": "borrower.order.wrong_medium",
    "not_owned_wrong_ill_mediumtype": "borrower.order.wrong_medium",
    "not_owned_no_ill_loc": "borrower.order.no_lender",
    "unknown_pickupagency": "borrower.order.unknown_branch",
    "unknown_user": "borrower.order.unknown_user",
    "invalid_order": "borrower.order.invalid",
    "ors_error": "borrower.order.ors_error",
    "service_unavailable": "borrower.order.system_down",
    "authentication_error": "borrower.order.auth_error",
    "order not placed": "borrower.order.not_placed",
    # Reasons that mean the order was accepted, should one ever come as an error.
    "owned_accepted": "borrower.order.accepted",
    "not_owned_ill_loc": "borrower.order.accepted",
}


def refusal_text(
    exc: LibraryError,
    lang: str,
    *,
    title: str,
    pid: str,
    branch: str = "",
    branch_name: str = "",
) -> str | None:
    """The sentence for a refusal the patron can act on; None for the generic failures (a
    request the platform refused as malformed among them: the bot's fault, not a refusal)."""
    if isinstance(exc, ClientFault):
        return None
    code = (exc.code or "").strip()
    lowered = code.lower()
    key = ORDER_REASONS.get(lowered)
    if key is not None:
        return t(
            lang,
            key,
            title=title,
            pid=pid,
            branch=branch_name or branch,
            code=shorten(code, ECHO_LIMIT),
        )
    if "pickupbranch" in lowered.replace(" ", "").replace("_", ""):
        return t(lang, "borrower.order.missing_branch", pid=pid)
    if isinstance(exc, Refused | BadRequest):
        if not code:
            return t(lang, "borrower.order.not_placed", title=title)
        return t(lang, "borrower.order.refused", title=title, code=shorten(code, ECHO_LIMIT))
    return None


def failed_text(failed: ordering.OrderFailed, lang: str, catalogue: str | None) -> str | None:
    """An order not placed (or not known to be) in a sentence the patron can act on; None for
    the generic failures. `catalogue`: the pick-up branch's library catalogue, if known."""
    exc, title = failed.error, failed.title
    text = refusal_text(
        exc, lang, title=title, pid=failed.pid, branch=failed.branch, branch_name=failed.branch_name
    )
    if text is not None and (exc.code or "").strip().lower() == "owned_own_catalogue":
        url = exc.url or catalogue
        if url and url.startswith(("https://", "http://")):
            text = f"{text}\n{t(lang, 'borrower.order.catalogue', url=url)}"
    if text is None and failed.maybe:
        # No readable answer: the order may have gone in. One message says what to check
        # and when to order again (a "try again" beside it would contradict it).
        text = t(lang, "borrower.order.maybe", title=title)
    return text


def placed_text(placed: ordering.Placed, lang: str) -> str:
    title, branch = placed.title, placed.branch_name
    if placed.result.ors_id:
        ors_id = placed.result.ors_id
        return t(lang, "borrower.order.placed", title=title, branch=branch, ors_id=ors_id)
    return t(lang, "borrower.order.placed_no_id", title=title, branch=branch)
