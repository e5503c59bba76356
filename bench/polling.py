"""Smart polling, simulated: platform calls per card per day, planned against naive daily, with
every reminder checked against an oracle that knows each card's truth every day.

The clock is the benchmark's: day 0 is a fixed date and each simulated day is one step.
Each day runs (1) the sweep, then (2) the day's changes at the library (so a change on day d is
first visible to the sweep of day d + 1, for the oracle and the plan alike):

- the oracle asks `bot.jobs.sweep.candidates` about every card every day (the naive
sweep) and
  notes the day each reminder key first became due;
- the plan checks a card only on the day `bot.rules.checks.next_check` planned from the
last status
  it saw (every card on day 0), and counts a platform call for each check. A loan reminder the
  oracle sends on a day the plan does not check the card is late (or missed); a hold-ready
  notice more than one day after the hold became ready is late.

Population on day 0 (`--cards`): 45 % with loans only (1-4 loans), 15 % with waiting holds (1-2,
half of them with loans too), 40 % idle. Loan periods: 7 days (10 % of loans), 14 (20 %), 30
(70 %). Daily rates, after the sweep:

- borrowing: an idle card 2.2 %, a card with loans 1.2 % (1-2 new loans; due after the period);
- returns: a loan before its due date 3 %, on or after it 40 % a day;
- renewals (at the library or its website): a loan within 3 days of its due date 15 % a day,
  due again a loan period after the renewal day;
- holds: every card places one 0.8 % a day, half with /order in the bot (which plans the card
  for the next sweep), half elsewhere; a waiting hold becomes ready 5 % a day, but a hold placed
  elsewhere not before its third day (transport between branches); a ready hold is picked up
  35 % a day (it becomes a 30-day loan) and kept for 7 days at most.

Reminder thresholds 3, 1 and 0 days (the default `REMINDER_DAYS`), shortest loan period
`POLL_MIN_LOAN_DAYS` 7. The first `--warm-up` days (default 7) are not counted in the calls: on
day 0 every card is checked, as after the upgrade that adds the plan, once.

After the three lines the issue asks for, it prints the floor (`Floor`): the calls of a plan
that obeys the same rules but is told every return and renewal for free, so checks only on the
days the rules force; no plan can go below it on this population.

`--real N` also runs the same model for N cards through the real sweep
(`bot.jobs.sweep.sweep`
with its `today`) against the library sandbox over loopback, the Telegram stand-in and a SQLite
store: each day's truth is written into the sandbox's patrons before the sweep, and the
platform calls and sent reminders are read from the sandbox and the store.

`python -m bench.polling` runs 20,000 cards x 60 days in process and 300 cards x 30 days through
the real sweep; `--full` runs 100,000 cards x 60 days.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from bot.library.models import BorrowerStatus, Hold, Loan
from bot.rules.checks import DEFAULT_MIN_LOAN_DAYS, next_check
from bot.rules.reminders import candidates
from bot.runtime import loop

START = date(2027, 1, 4)
DAYS = (3, 1, 0)
CARDS = 20_000
FULL_CARDS = 100_000
SIM_DAYS = 60
WARM_UP = 7
REAL_CARDS = 300
REAL_DAYS = 30
PERIODS = ((7, 0.10), (14, 0.20), (30, 0.70))
PICK_UP_DAYS = 7
# Daily rates (see the module docstring).
BORROW_IDLE = 0.022
BORROW_MORE = 0.012
RETURN_EARLY = 0.03
RETURN_DUE = 0.40
RENEW_NEAR = 0.15
NEW_HOLD = 0.008
HOLD_BY_BOT = 0.5
HOLD_READY = 0.05
HOLD_MIN_WAIT = 3
PICK_UP = 0.35
# The target: the plan's calls within this share above the floor (no plan can go below it).
FLOOR_MARGIN = 0.05


@dataclass
class Card:
    """One card's truth at the library. Holds: id -> day placed (waiting) or day ready."""

    loans: dict[str, date] = field(default_factory=dict)
    waiting: dict[str, int] = field(default_factory=dict)  # id -> first day it may be ready
    ready: dict[str, int] = field(default_factory=dict)  # id -> day it became ready
    cached: BorrowerStatus | None = None

    def status(self) -> BorrowerStatus:
        """The status `/v3/user` would answer, built only after a change."""
        if self.cached is None:
            loans = [
                Loan.model_construct(loan_id=loan_id, due_date=due, title="", creator="")
                for loan_id, due in self.loans.items()
            ]
            holds = [
                Hold.model_construct(order_id=hold_id, status="Reserved", title="", creator="")
                for hold_id in self.waiting
            ] + [
                Hold.model_construct(
                    order_id=hold_id,
                    status="Available for pickup",
                    pick_up_expiry_date=START + timedelta(days=ready + PICK_UP_DAYS),
                    title="",
                    creator="",
                )
                for hold_id, ready in self.ready.items()
            ]
            self.cached = BorrowerStatus.model_construct(loans=loans, orders=holds, debt=[])
        return self.cached

    @property
    def empty(self) -> bool:
        return not (self.loans or self.waiting or self.ready)


class Library:
    """Every card's truth and the daily changes, from one seeded generator."""

    def __init__(self, cards: int, seed: int, periods: tuple[tuple[int, float], ...]) -> None:
        self.random = random.Random(seed)
        self.periods = [p for p, _ in periods]
        self.weights = [w for _, w in periods]
        self.next_id = 1
        self.cards: list[Card] = []
        self.by_bot: list[int] = []  # cards that placed a hold with /order today
        for _ in range(cards):
            card = Card()
            draw = self.random.random()
            if draw < 0.45 or (draw < 0.60 and self.random.random() < 0.5):
                for _ in range(self.random.randint(1, 4)):
                    period = self.period()
                    self.add_loan(card, START + timedelta(days=self.random.randint(1, period)))
            if 0.45 <= draw < 0.60:
                for _ in range(self.random.randint(1, 2)):
                    card.waiting[self.new_id("H")] = 0
            self.cards.append(card)

    def new_id(self, prefix: str) -> str:
        self.next_id += 1
        return f"{prefix}{self.next_id}"

    def period(self) -> int:
        return self.random.choices(self.periods, self.weights)[0]

    def add_loan(self, card: Card, due: date) -> None:
        card.loans[self.new_id("L")] = due

    def mix(self) -> tuple[float, float, float]:
        """Shares of cards with loans only, with waiting holds, idle."""
        n = len(self.cards)
        holds = sum(1 for c in self.cards if c.waiting)
        loans = sum(1 for c in self.cards if c.loans and not c.waiting)
        return loans / n, holds / n, (n - holds - loans) / n

    def change(self, today: int) -> Counter[str]:
        """One day's changes after the sweep; counts them by kind."""
        rnd = self.random.random
        day = START + timedelta(days=today)
        counts: Counter[str] = Counter()
        self.by_bot = []
        for index, card in enumerate(self.cards):
            changed = False
            if rnd() < (BORROW_MORE if card.loans else BORROW_IDLE):
                for _ in range(self.random.randint(1, 2)):
                    self.add_loan(card, day + timedelta(days=self.period()))
                    counts["borrowed"] += 1
                changed = True
            for loan_id, due in list(card.loans.items()):
                if rnd() < (RETURN_DUE if due <= day else RETURN_EARLY):
                    del card.loans[loan_id]
                    counts["returned"] += 1
                    changed = True
                elif (due - day).days <= 3 and rnd() < RENEW_NEAR:
                    card.loans[loan_id] = day + timedelta(days=self.period())
                    counts["renewed"] += 1
                    changed = True
            for hold_id, earliest in list(card.waiting.items()):
                if today >= earliest and rnd() < HOLD_READY:
                    del card.waiting[hold_id]
                    card.ready[hold_id] = today
                    counts["ready"] += 1
                    changed = True
            for hold_id, ready in list(card.ready.items()):
                if rnd() < PICK_UP:
                    del card.ready[hold_id]
                    self.add_loan(card, day + timedelta(days=30))
                    counts["picked up"] += 1
                    changed = True
                elif today >= ready + PICK_UP_DAYS:
                    del card.ready[hold_id]
                    counts["expired"] += 1
                    changed = True
            if rnd() < NEW_HOLD:
                bot = rnd() < HOLD_BY_BOT
                card.waiting[self.new_id("H")] = today if bot else today + HOLD_MIN_WAIT
                if bot:
                    self.by_bot.append(index)
                counts["held"] += 1
                changed = True
            if changed:
                card.cached = None
        return counts


@dataclass
class Figures:
    cards: int
    days: int
    warm_up: int
    planned_calls: int = 0
    naive_calls: int = 0
    late_reminders: int = 0
    reminders: int = 0
    messages: int = 0  # card-days with something new: one digest each
    late_holds: int = 0
    hold_notices: int = 0
    max_hold_delay: int = 0
    changes: Counter[str] = field(default_factory=Counter)
    mix_start: tuple[float, float, float] = (0.0, 0.0, 0.0)
    mix_end: tuple[float, float, float] = (0.0, 0.0, 0.0)
    seconds: float = 0.0
    label: str = "in process"
    min_loan_days: int = DEFAULT_MIN_LOAN_DAYS
    floor: Counter[str] = field(default_factory=Counter)  # the floor's calls, by what forced them

    @property
    def counted_days(self) -> int:
        return self.days - self.warm_up

    @property
    def planned(self) -> float:
        return self.planned_calls / (self.cards * self.counted_days)

    @property
    def naive(self) -> float:
        return self.naive_calls / (self.cards * self.counted_days)

    @property
    def lowest(self) -> float:
        """The floor: calls per card per day that any plan obeying the rules makes."""
        return sum(self.floor.values()) / (self.cards * self.counted_days)

    @property
    def met(self) -> bool:
        return self.near_floor and not self.late_reminders and not self.late_holds

    @property
    def near_floor(self) -> bool:
        return self.planned <= self.lowest * (1 + FLOOR_MARGIN)

    def lines(self) -> list[str]:
        per_day = ", ".join(
            f"{kind} {n / (self.cards * self.days):.2%}" for kind, n in sorted(self.changes.items())
        )
        mix = "/".join(f"{share:.0%}" for share in self.mix_start)
        end = "/".join(f"{share:.0%}" for share in self.mix_end)
        per_card_day = self.cards * self.counted_days
        floor = self.lowest
        above = f"{(self.planned / floor - 1) * 100:+.1f} %" if floor else "no floor"
        forced = ", ".join(
            f"{reason} {self.floor[reason] / per_card_day:.3f}" for reason in FLOOR_REASONS
        )
        return [
            f"polling ({self.label}): {self.cards:,} cards x {self.days} days "
            f"({self.warm_up} warm-up days not counted in calls), {self.seconds:.0f} s",
            f"  mix loans only/waiting holds/idle: day 0 {mix}, last day {end}",
            f"  changes per card per day: {per_day}",
            f"platform calls per card per day: {self.planned:.3f} (naive {self.naive:.3f})",
            f"missed or late reminders: {self.late_reminders}",
            f"hold-ready notices late: {self.late_holds}",
            f"floor for any plan obeying the rules: {floor:.3f} calls per card per day ({forced})",
            f"  of {self.reminders:,} reminders and {self.hold_notices:,} hold-ready notices "
            f"in {self.messages:,} digests ({self.messages / (self.cards * self.days):.4f} per "
            f"card per day); longest hold-ready delay {self.max_hold_delay} day(s)",
            f"  target calls within {FLOOR_MARGIN * 100:g} % of the floor: "
            f"{'met' if self.near_floor else 'NOT met'} ({above}); "
            f"the plan makes {self.planned - floor:.3f} more than the floor (mostly checks on the "
            "threshold days of loans returned or renewed since the last check, which only a call "
            "can tell)",
        ]


class Tally:
    """The oracle's and the plan's view of one card's reminders."""

    __slots__ = ("noticed", "oracle")

    def __init__(self) -> None:
        self.oracle: set[str] = set()  # keys the daily sweep has sent
        self.noticed: set[str] = set()  # hold-ready keys the planned sweep has sent


def oracle_day(
    library: Library, tallies: list[Tally], today: int, figures: Figures
) -> list[set[str]]:
    """The naive sweep: the keys each card gets today (new ones only)."""
    day = START + timedelta(days=today)
    new: list[set[str]] = []
    for card, tally in zip(library.cards, tallies, strict=True):
        if card.empty:
            new.append(set())
            continue
        keys = {key for key, _ in candidates(card.status(), day, DAYS)} - tally.oracle
        tally.oracle |= keys
        figures.reminders += sum(1 for key in keys if key.startswith("loan:"))
        figures.messages += 1 if keys else 0
        new.append(keys)
    return new


FLOOR_REASONS = ("reminder or notice days", "waiting holds", "new-loan bound")


class Floor:
    """The fewest calls any plan obeying the rules makes on this population.

    The floor plan is told every return and renewal for free: it checks a card only on a day
    that the rules force, given what its own checks saw, and as late as they allow:
    - a reminder or hold-ready notice is due that day (the oracle's new keys): skipping the
      day makes it late;
    - its last check saw a waiting hold (it may have become ready since), or a hold placed
      with /order the day before yesterday may be ready (it can become ready from the day after
      it was placed);
    - the card has gone `min_loan_days - largest threshold` days unchecked: a loan of the
      shortest period taken right after the last check has its first reminder today.
    Whatever a plan skips beyond this, some history the rules allow makes a reminder late; the
    plan itself must also check the threshold days of loans it saw, returned or not.
    """

    def __init__(self, cards: int, min_loan_days: int) -> None:
        self.gap = max(1, min_loan_days - DAYS[0])
        self.last = [0] * cards  # day of the floor plan's last check (every card on day 0)
        self.waiting = [False] * cards  # its last check saw a waiting hold
        self.ordered = [-1] * cards  # day a hold placed with /order may first be seen ready

    def day(self, library: Library, new: list[set[str]], today: int, f: Figures) -> None:
        for index, card in enumerate(library.cards):
            if new[index]:
                reason = FLOOR_REASONS[0]
            elif self.waiting[index] or self.ordered[index] == today:
                reason = FLOOR_REASONS[1]
            elif today - self.last[index] >= self.gap or today == 0:
                reason = FLOOR_REASONS[2]
            else:
                continue
            self.last[index] = today
            self.waiting[index] = bool(card.waiting)
            if today >= f.warm_up:
                f.floor[reason] += 1

    def orders(self, cards: list[int], today: int) -> None:
        for index in cards:
            self.ordered[index] = today + 2


def score(
    card: Card, tally: Tally, new: set[str], checked: set[str] | None, today: int, f: Figures
) -> None:
    """Compare a card's day: `checked` is what the planned sweep saw (None: not checked)."""
    seen = checked or set()
    f.late_reminders += sum(1 for key in new if key.startswith("loan:") and key not in seen)
    for key in seen:
        # Hold-ready notices only: a last-pick-up-day nudge (`hold:<id>:lastday:<day>`) is not one.
        if key.startswith("hold:") and key.endswith(":ready") and key not in tally.noticed:
            tally.noticed.add(key)
            hold_id = key.split(":")[1]
            ready = card.ready.get(hold_id, today - 1)
            delay = today - ready
            f.hold_notices += 1
            f.max_hold_delay = max(f.max_hold_delay, delay)
            if delay > 1:
                f.late_holds += 1


def simulate(
    cards: int = CARDS,
    days: int = SIM_DAYS,
    *,
    seed: int = 18,
    warm_up: int = WARM_UP,
    min_loan_days: int = DEFAULT_MIN_LOAN_DAYS,
    periods: tuple[tuple[int, float], ...] = PERIODS,
) -> Figures:
    """The in-process simulation with the real plan and the real reminder candidates."""
    started = time.perf_counter()
    library = Library(cards, seed, periods)
    tallies = [Tally() for _ in range(cards)]
    plans = [0] * cards  # day index of each card's next check
    figures = Figures(cards, days, warm_up, mix_start=library.mix(), min_loan_days=min_loan_days)
    floor = Floor(cards, min_loan_days)
    for today in range(days):
        day = START + timedelta(days=today)
        new = oracle_day(library, tallies, today, figures)
        floor.day(library, new, today, figures)
        for index, card in enumerate(library.cards):
            checked: set[str] | None = None
            if plans[index] <= today:
                if today >= warm_up:
                    figures.planned_calls += 1
                found = card.status()
                checked = {key for key, _ in candidates(found, day, DAYS)}
                plan = next_check(found, seen=day, days=DAYS, min_loan_days=min_loan_days)
                plans[index] = (plan - START).days
            score(card, tallies[index], new[index], checked, today, figures)
        if today >= warm_up:
            figures.naive_calls += cards
        figures.changes.update(library.change(today))
        floor.orders(library.by_bot, today)
        for index in library.by_bot:  # /order: `check_soon` plans the next sweep
            plans[index] = min(plans[index], today + 1)
    unseen(library, tallies, days, figures)
    figures.mix_end = library.mix()
    figures.seconds = time.perf_counter() - started
    return figures


def unseen(library: Library, tallies: list[Tally], days: int, figures: Figures) -> None:
    """Holds still ready and never noticed at the end count as late once past a day."""
    for card, tally in zip(library.cards, tallies, strict=True):
        for hold_id, ready in card.ready.items():
            if f"hold:{hold_id}:ready" not in tally.noticed and days - ready > 1:
                figures.late_holds += 1


# --- the same model through the real sweep ------------------------------------------------------


def wire(card: Card) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The card's truth as the platform sends it."""
    loans = [
        {"loanId": loan_id, "dueDate": due.isoformat(), "title": f"Bog {loan_id}", "creator": "A"}
        for loan_id, due in card.loans.items()
    ]
    orders = [
        {"orderId": hold_id, "status": "Reserved", "holdQueuePosition": "3", "title": "Reserveret"}
        for hold_id in card.waiting
    ] + [
        {
            "orderId": hold_id,
            "status": "Available for pickup",
            "pickUpAgency": "DK-710100",
            "pickUpExpiryDate": (START + timedelta(days=ready + PICK_UP_DAYS)).isoformat(),
            "title": "Klar",
        }
        for hold_id, ready in card.ready.items()
    ]
    return loans, orders


async def real(cards: int = REAL_CARDS, days: int = REAL_DAYS, *, seed: int = 18) -> Figures:
    """The model through `bot.jobs.sweep.sweep`, the sandbox, the stand-in and
    SQLite."""
    import secrets

    from sqlalchemy import select
    from telegram import Bot

    from bench.sweep import FIRST_CHAT, insert_cards
    from bot.config.settings import Settings
    from bot.jobs.sweep import sweep
    from bot.library.client import LibraryClient
    from bot.services import Services
    from bot.telegram.deliver import TelegramDeliverer
    from sandbox.library import LibrarySandbox
    from sandbox.telegram import TelegramStandIn
    from storage.migrate import upgrade
    from storage.store import Store
    from storage.tables import REMINDER_LOG

    started = time.perf_counter()
    library = Library(cards, seed, PERIODS)
    tallies = [Tally() for _ in range(cards)]
    figures = Figures(cards, days, 1, mix_start=library.mix(), label="real sweep")
    floor = Floor(cards, DEFAULT_MIN_LOAN_DAYS)
    sent_query = select(REMINDER_LOG.c.chat_id, REMINDER_LOG.c.key).where(
        REMINDER_LOG.c.state == "sent"
    )
    keys = [secrets.token_bytes(32)]
    token = "123456:BENCH-polling"
    async with LibrarySandbox() as sandbox, TelegramStandIn() as telegram:
        telegram.add_bot(token)
        patrons = sandbox.add_patrons(cards, due_every=0)
        chats = [FIRST_CHAT + offset for offset in range(cards)]
        for chat_id in chats:
            telegram.add_chat(chat_id)
        with tempfile.TemporaryDirectory(prefix="bench-polling-") as directory:
            url = f"sqlite+aiosqlite:///{Path(directory) / 'polling.db'}"
            await upgrade(url)
            tokens = [
                (c, sandbox.issue_token(p.user_id)) for c, p in zip(chats, patrons, strict=True)
            ]
            await insert_cards(url, keys, tokens)
            env: dict[str, Any] = {
                **sandbox.env(),
                "TELEGRAM_BOT_TOKEN": token,
                "TELEGRAM_API_URL": telegram.url,
                "DATABASE_URL": url,
                "PUBLIC_URL": "http://127.0.0.1:9",
                "TELEGRAM_SEND_RATE": 0,
            }
            settings = Settings(_env_file=None, **env)
            store = await Store.open(url, keys)
            client = LibraryClient.from_settings(settings)
            bot = Bot(token, base_url=f"{telegram.url}/bot")
            index_of = {chat_id: i for i, chat_id in enumerate(chats)}
            sent_before: set[tuple[int, str]] = set()
            try:
                async with bot:
                    for today in range(days):
                        day = START + timedelta(days=today)
                        for patron, card in zip(patrons, library.cards, strict=True):
                            data = sandbox.patron_data(patron.user_id)
                            data.loans, data.orders = wire(card)
                        new = oracle_day(library, tallies, today, figures)
                        floor.day(library, new, today, figures)
                        calls = sandbox.calls["platform GET /v3/user"]
                        await sweep(
                            store=store,
                            library=client,
                            deliverer=TelegramDeliverer(bot, Services(settings, store, client)),
                            settings=settings,
                            today=day,
                        )
                        if today >= figures.warm_up:
                            figures.planned_calls += sandbox.calls["platform GET /v3/user"] - calls
                            figures.naive_calls += cards
                        rows = await store.database.run(partial(_all, sent_query))
                        sent = {(int(r.chat_id), str(r.key)) for r in rows}
                        today_keys: dict[int, set[str]] = {}
                        for chat_id, key in sent - sent_before:
                            today_keys.setdefault(index_of[chat_id], set()).add(key)
                        sent_before = sent
                        for index, card in enumerate(library.cards):
                            got = today_keys.get(index)
                            score(card, tallies[index], new[index], got, today, figures)
                        figures.changes.update(library.change(today))
                        floor.orders(library.by_bot, today)
                        if library.by_bot:  # /order: `check_soon` plans the next sweep
                            tomorrow = day + timedelta(days=1)
                            await store.sweeps.set_next_checks(
                                {(chats[index], 1): tomorrow for index in library.by_bot}
                            )
            finally:
                await client.aclose()
                await store.close()
    unseen(library, tallies, days, figures)
    figures.mix_end = library.mix()
    figures.seconds = time.perf_counter() - started
    return figures


def _all(query: Any, conn: Any) -> list[Any]:
    return list(conn.execute(query).all())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.polling", description=__doc__)
    parser.add_argument(
        "--full", action="store_true", help=f"{FULL_CARDS:,} cards x {SIM_DAYS} days"
    )
    parser.add_argument("--cards", type=int, default=CARDS)
    parser.add_argument("--days", type=int, default=SIM_DAYS)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument(
        "--min-loan-days",
        type=int,
        default=DEFAULT_MIN_LOAN_DAYS,
        help="POLL_MIN_LOAN_DAYS; loan periods shorter than it are left out of the model",
    )
    parser.add_argument(
        "--real", type=int, default=REAL_CARDS, help="cards through the real sweep (0: none)"
    )
    parser.add_argument("--real-days", type=int, default=REAL_DAYS)
    args = parser.parse_args(argv if argv is not None else [])
    cards = FULL_CARDS if args.full else args.cards
    periods = tuple((p, w) for p, w in PERIODS if p >= args.min_loan_days) or (
        (args.min_loan_days, 1.0),
    )
    figures = simulate(
        cards, args.days, seed=args.seed, min_loan_days=args.min_loan_days, periods=periods
    )
    print("\n".join(figures.lines()), flush=True)
    met = figures.met
    if args.real:
        checked = loop.run(real(args.real, args.real_days, seed=args.seed))
        print("\n".join(checked.lines()), flush=True)
        met = met and not checked.late_reminders and not checked.late_holds
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
