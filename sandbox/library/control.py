"""The control endpoints every host of the sandbox serves, so another process can drive it.

`GET|POST /_sandbox/faults` (JSON with the fields of `Faults`; fields present are replaced),
`POST /_sandbox/reset` (clears faults and call counts) and `GET /_sandbox/calls`.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from aiohttp import web

from sandbox.library.faults import Faults
from sandbox.library.responses import json_response

CONTROL = "/_sandbox"


def add_routes(
    app: web.Application, faults: Callable[[], Faults], calls: collections.Counter[str]
) -> None:
    async def get_faults(request: web.Request) -> web.Response:
        return json_response(faults().to_json())

    async def set_faults(request: web.Request) -> web.Response:
        try:
            changes: Any = await request.json()
            if not isinstance(changes, dict):
                raise ValueError("the body must be a JSON object")
            faults().update(changes)
        except (ValueError, TypeError) as exc:
            return json_response({"error": str(exc)}, 400)
        return json_response(faults().to_json())

    async def reset(request: web.Request) -> web.Response:
        faults().clear()
        calls.clear()
        return json_response({"reset": True})

    async def get_calls(request: web.Request) -> web.Response:
        return json_response(dict(calls))

    app.router.add_get(f"{CONTROL}/faults", get_faults)
    app.router.add_post(f"{CONTROL}/faults", set_faults)
    app.router.add_post(f"{CONTROL}/reset", reset)
    app.router.add_get(f"{CONTROL}/calls", get_calls)
