"""How the data platform reads a request, as its published source does.

serviceprovider's `src/provider.js` merges a JSON body (or a posted form) with the query, a
query value winning; every query value goes through `JSON.parse`, and one that is not JSON is
split at its commas (empty parts dropped) when it has any, else kept as it is; a lone query value
is wrapped in a list where the spec says list, and a lone `fields` wherever it comes from. Then
`src/validate.js` checks the whole against the endpoint's properties in `doc/spec.yaml`, plus
the default ones, with no other property allowed. A failure is HTTP 400 with jsonschema's
(1.2.4) messages, `instance` cut off the front of each, one per line.

`PARAMETERS` is the sandbox's own table of the endpoints it serves, written from `doc/spec.yaml`.
Where the source is looser than this (qs's `name[]=` and `a[b]=` keys), the sandbox refuses:
see `docs/service-behaviour.md`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from aiohttp import web
from multidict import MultiMapping

from sandbox.library.parsing import FORM_TYPE

JSON_TYPE = "application/json"
Kind = Literal["string", "integer", "boolean", "array", "object"]


@dataclass(frozen=True)
class Param:
    """One property of an endpoint's request schema."""

    kind: Kind
    minimum: int | None = None
    maximum: int | None = None
    max_items: int | None = None


@dataclass(frozen=True)
class Schema:
    properties: Mapping[str, Param]
    required: tuple[str, ...] = ()
    _all: Mapping[str, Param] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_all", MappingProxyType({**DEFAULTS, **self.properties}))

    @property
    def all(self) -> Mapping[str, Param]:
        """The default properties first, then the endpoint's (the validator's order)."""
        return self._all


STRING = Param("string")
BOOLEAN = Param("boolean")
OBJECT = Param("object")
STRINGS = Param("array")
PIDS_20 = Param("array", max_items=20)
LIMIT = Param("integer", minimum=1)
OFFSET = Param("integer", minimum=0)

# `defaultProperties` of doc/spec.yaml: every endpoint takes these.
DEFAULTS: Mapping[str, Param] = MappingProxyType(
    {
        "fields": STRINGS,
        "access_token": STRING,
        "pretty": BOOLEAN,
        "timings": BOOLEAN,
        "createTest": STRING,
        "callback": STRING,
    }
)

_CMS = {"agency": STRING, "nids": STRINGS, "limit": LIMIT, "offset": OFFSET}

# doc/spec.yaml's `api` section, for the endpoints the sandbox serves.
PARAMETERS: Mapping[str, Schema] = MappingProxyType(
    {
        "user": Schema({"userinfo": STRINGS}),
        "order": Schema(
            {
                "orderId": STRING,
                "orderType": STRING,
                "pids": STRINGS,
                "pickUpBranch": STRING,
                "name": STRING,
                "address": STRING,
                "email": STRING,
                "phone": STRING,
                "expires": STRING,
                "delete": BOOLEAN,
            }
        ),
        "renew": Schema({"loanId": STRING}, required=("loanId",)),
        "work": Schema({"pids": PIDS_20}),
        "search": Schema(
            {
                "q": STRING,
                "offset": OFFSET,
                "limit": Param("integer", minimum=1, maximum=50),
                "sort": STRING,
                "profile": STRING,
            },
            required=("q",),
        ),
        "libraries": Schema({"agencyIds": STRINGS, "branchIds": STRINGS}),
        "library": Schema(_CMS),
        "events": Schema(_CMS),
        "news": Schema(_CMS),
        "recommend": Schema(
            {
                "like": STRINGS,
                "ignore": STRINGS,
                "limit": LIMIT,
                "offset": OFFSET,
                "filters": OBJECT,
                "boosters": OBJECT,
            },
            required=("like",),
        ),
        "availability": Schema({"pids": STRINGS}, required=("pids",)),
        "holdingsitems": Schema({"agency": STRING, "item_id": STRING, "pids": PIDS_20}),
    }
)


class InvalidRequest(Exception):
    """The platform's 400: `message` is the envelope's `error`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _not_json_constant(name: str) -> Any:
    raise ValueError(name)  # JSON.parse knows no NaN or Infinity


def parse_query_value(raw: str) -> Any:
    """A query value as provider.js reads it: JSON, else split at commas, else the text."""
    try:
        return json.loads(raw, parse_constant=_not_json_constant)
    except ValueError:
        return [part for part in raw.split(",") if part] if "," in raw else raw


async def read_body(request: web.Request) -> dict[str, Any]:
    """The body as body-parser reads it: a JSON object (the first of an array), or a form."""
    if request.method != "POST" or not request.can_read_body:
        return {}
    if request.content_type == JSON_TYPE:
        try:
            body = json.loads(await request.read(), parse_constant=_not_json_constant)
        except ValueError:
            raise InvalidRequest("the request body is not JSON") from None
        if isinstance(body, list):  # "legacy transforms": the first item is the request
            body = body[0] if body else {}
        if not isinstance(body, dict):
            raise InvalidRequest("the request body is not a JSON object")
        return body
    if request.content_type == FORM_TYPE:
        form = await request.post()
        return {key: value for key, value in form.items() if isinstance(value, str)}
    return {}


def read_request(
    query: MultiMapping[str], body: Mapping[str, Any], endpoint: str
) -> dict[str, Any]:
    """The parameters as the platform's transform sees them (`body` from `read_body`);
    `InvalidRequest` when the platform's validation refuses them."""
    schema = PARAMETERS[endpoint]
    params = dict(body)
    for key in dict.fromkeys(query.keys()):
        values = query.getall(key)
        if len(values) > 1:
            # qs makes a repeated key a list, which JSON.parse then cannot read: kept as is.
            params[key] = list(values)
            continue
        value = parse_query_value(values[0])
        spec = schema.all.get(key)
        if spec is not None and spec.kind == "array" and not isinstance(value, list):
            value = [value]
        params[key] = value
    if isinstance(params.get("fields"), str):
        params["fields"] = [params["fields"]]
    errors = validate(params, schema)
    if errors:
        raise InvalidRequest("\n".join(errors))
    return params


def _is(kind: Kind, value: Any) -> bool:
    match kind:
        case "string":
            return isinstance(value, str)
        case "boolean":
            return isinstance(value, bool)
        case "integer":
            # A JavaScript number with no fraction: JSON.parse reads 1e2 as 100.
            if isinstance(value, float):
                return value.is_integer()
            return isinstance(value, int) and not isinstance(value, bool)
        case "array":
            return isinstance(value, list)
        case "object":
            return isinstance(value, dict)


def validate(params: Mapping[str, Any], schema: Schema) -> list[str]:
    """jsonschema's errors for `params`, in its order: required, unknown, then each property."""
    errors = [f' requires property "{name}"' for name in schema.required if name not in params]
    errors += [
        f' additionalProperty "{name}" exists in instance when not allowed'
        for name in params
        if name not in schema.all
    ]
    for name, spec in schema.all.items():
        if name not in params:
            continue
        value = params[name]
        if not _is(spec.kind, value):
            errors.append(f"{name} is not of a type(s) {spec.kind}")
            continue
        if spec.minimum is not None and value < spec.minimum:
            errors.append(f"{name} must have a minimum value of {spec.minimum}")
        if spec.maximum is not None and value > spec.maximum:
            errors.append(f"{name} must have a maximum value of {spec.maximum}")
        if spec.kind == "array":
            if spec.max_items is not None and len(value) > spec.max_items:
                errors.append(f"{name} does not meet maximum length of {spec.max_items}")
            errors += [
                f"{name}[{index}] is not of a type(s) string"
                for index, item in enumerate(value)
                if not isinstance(item, str)
            ]
    return errors


def select_fields(data: Any, fields: Any) -> Any:
    """provider.js's `fieldsFilter`: with a `fields` list, only those keys of each object."""
    if not isinstance(fields, list):
        return data
    if isinstance(data, list):
        return [select_fields(item, fields) for item in data]
    if not isinstance(data, dict):
        return data
    return {key: data[key] for key in fields if key in data}
