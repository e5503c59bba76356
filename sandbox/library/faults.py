"""Fault injection: latency, outages, refused connections, random errors, malformed bodies.

Every field is keyed by service name (`oauth`, `auth`, `login`, `platform`) or `*` for all;
a service's own entry wins over `*`. `fail_next` is keyed by request path (e.g. `/v3/order`).
The extra name `orders` in `down` takes only the order system down: `/v3/order` answers 503
`service_unavailable` while the rest of the platform works. `culr` takes the national user
register down: userinfo then has no `uniqueId`, a null `municipality` and `serviceStatus.culr`
`error`, with HTTP 200, as hejmdal answers.

`drop` and `lose_answer` hold service names or request paths (`/v3/order`): `drop` reads the
whole request and closes the connection without handling it; `lose_answer` handles the request
(an order is placed, a loan renewed) and then closes the connection before the answer is sent.
Either way the client sees the same thing, a connection closed with no answer, and cannot know
whether its request took effect. `drop_next` and `lose_next` are lists of paths that do the
same once: each entry is used up by the next request to its path.

`hold_next` maps a path to an event: the next request to it waits (after it is counted) until
the event is set, so a test can do something while a call is in flight (a login racing it).

`refuse_orders` is a queue of order-system reasons (`unknown_user`, `ORS_error`, ...): each new
order takes the first one and is refused with it (503 for `service_unavailable`, else 500).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

SERVICES = ("oauth", "auth", "login", "platform")
ALL = "*"


@dataclass
class Faults:
    latency: dict[str, float] = field(default_factory=dict)
    down: set[str] = field(default_factory=set)
    refuse_connections: set[str] = field(default_factory=set)
    error_rate: dict[str, float] = field(default_factory=dict)
    malformed: set[str] = field(default_factory=set)
    drop: set[str] = field(default_factory=set)
    lose_answer: set[str] = field(default_factory=set)
    drop_next: list[str] = field(default_factory=list)
    lose_next: list[str] = field(default_factory=list)
    fail_next: dict[str, list[int]] = field(default_factory=dict)
    refuse_orders: list[str] = field(default_factory=list)
    hold_next: dict[str, asyncio.Event] = field(default_factory=dict)

    def clear(self) -> None:
        self.latency.clear()
        self.down.clear()
        self.refuse_connections.clear()
        self.error_rate.clear()
        self.malformed.clear()
        self.drop.clear()
        self.lose_answer.clear()
        self.drop_next.clear()
        self.lose_next.clear()
        self.fail_next.clear()
        self.refuse_orders.clear()
        for gate in self.hold_next.values():
            gate.set()
        self.hold_next.clear()

    def delay(self, service: str) -> float:
        return float(self.latency.get(service, self.latency.get(ALL, 0.0)))

    def rate(self, service: str) -> float:
        return float(self.error_rate.get(service, self.error_rate.get(ALL, 0.0)))

    def is_down(self, service: str) -> bool:
        return service in self.down or ALL in self.down

    def refuses(self, service: str) -> bool:
        return service in self.refuse_connections or ALL in self.refuse_connections

    def is_malformed(self, service: str) -> bool:
        return service in self.malformed or ALL in self.malformed

    def drops(self, service: str, path: str) -> bool:
        return bool({service, path, ALL} & self.drop) or _take(self.drop_next, path)

    def loses_answer(self, service: str, path: str) -> bool:
        return bool({service, path, ALL} & self.lose_answer) or _take(self.lose_next, path)

    def pop_failure(self, path: str) -> int | None:
        queue = self.fail_next.get(path)
        if not queue:
            return None
        status = queue.pop(0)
        if not queue:
            del self.fail_next[path]
        return status

    def update(self, changes: dict[str, Any]) -> None:
        """Replace the fields present in `changes` (the JSON of `POST /_sandbox/faults`)."""
        unknown = set(changes) - set(self.to_json())
        if unknown:
            raise ValueError(f"unknown fault fields: {', '.join(sorted(unknown))}")
        if "latency" in changes:
            self.latency = {str(k): float(v) for k, v in dict(changes["latency"]).items()}
        if "error_rate" in changes:
            rates = {str(k): float(v) for k, v in dict(changes["error_rate"]).items()}
            if any(not 0.0 <= v <= 1.0 for v in rates.values()):
                raise ValueError("error_rate values are fractions between 0 and 1")
            self.error_rate = rates
        for name in ("down", "refuse_connections", "malformed", "drop", "lose_answer"):
            if name in changes:
                setattr(self, name, {str(v) for v in list(changes[name])})
        for name in ("drop_next", "lose_next"):
            if name in changes:
                setattr(self, name, [str(v) for v in list(changes[name])])
        if "refuse_orders" in changes:
            self.refuse_orders = [str(v) for v in list(changes["refuse_orders"])]
        if "fail_next" in changes:
            self.fail_next = {
                str(k): [int(s) for s in list(v)] for k, v in dict(changes["fail_next"]).items()
            }

    def to_json(self) -> dict[str, Any]:
        return {
            "latency": dict(self.latency),
            "down": sorted(self.down),
            "refuse_connections": sorted(self.refuse_connections),
            "error_rate": dict(self.error_rate),
            "malformed": sorted(self.malformed),
            "drop": sorted(self.drop),
            "lose_answer": sorted(self.lose_answer),
            "fail_next": {k: list(v) for k, v in self.fail_next.items()},
            "refuse_orders": list(self.refuse_orders),
            "drop_next": list(self.drop_next),
            "lose_next": list(self.lose_next),
        }


def _take(queue: list[str], path: str) -> bool:
    """Use up one entry for `path`, if there is one."""
    if path in queue:
        queue.remove(path)
        return True
    return False
