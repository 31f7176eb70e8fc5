"""A synthetic payments API with Stripe's shape: `payments_spec()` is an OpenAPI 3.0 document of ~470
operations over ~400 component schemas, deterministic (no randomness: the same call, the same bytes).

What makes Stripe's spec hard is kept: resources point at each other through *expandable* fields
(`anyOf: [{type: string}, {$ref: Customer}]`, the id or the object), often nullable, plus arrays of
refs and list envelopes (`{object: "list", data: [...], has_more, url}`), so that the closure of
nearly every schema is most of the API. Request bodies are form-encoded, as Stripe's are.

Run `python -m harness.synthetic OUT.json` (from tests/) to write it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

RESOURCES = 95  # x 5 operations (list, create, retrieve, update, delete) = 475 operations
PARTS = 2  # sub-object schemas per resource (e.g. `charge_billing_details`), each with its own refs

_WORDS = (
    "account application balance bank card charge checkout coupon credit customer discount dispute event "
    "file invoice item line mandate order payment payout person plan price product promotion quote refund "
    "review session setup source subscription tax token topup transfer usage webhook"
).split()


def _names() -> list[str]:
    names = list(_WORDS)
    for first in _WORDS:
        for second in _WORDS:
            if len(names) >= RESOURCES:
                return names
            if first != second:
                names.append(f"{first}_{second}")
    return names


def _expandable(target: str, *, nullable: bool, description: str) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "anyOf": [{"maxLength": 5000, "type": "string"}, {"$ref": f"#/components/schemas/{target}"}],
        "description": description,
        "x-expansionResources": {"oneOf": [{"$ref": f"#/components/schemas/{target}"}]},
    }
    if nullable:
        schema["nullable"] = True
    return schema


def _list_envelope(target: str, url: str) -> dict[str, Any]:
    return {
        "description": f"A list of {target} objects.",
        "properties": {
            "data": {"items": {"$ref": f"#/components/schemas/{target}"}, "type": "array"},
            "has_more": {"description": "True if this list has another page of items.", "type": "boolean"},
            "object": {"enum": ["list"], "type": "string"},
            "url": {"maxLength": 5000, "pattern": f"^{url}", "type": "string"},
        },
        "required": ["data", "has_more", "object", "url"],
        "type": "object",
    }


def _resource(index: int, names: list[str]) -> dict[str, Any]:
    name = names[index]
    count = len(names)
    props: dict[str, Any] = {
        "id": {"description": "Unique identifier for the object.", "maxLength": 5000, "type": "string"},
        "object": {"enum": [name], "type": "string"},
        "created": {"format": "unix-time", "type": "integer"},
        "livemode": {"type": "boolean"},
        "amount": {"type": "integer"},
        "currency": {"format": "currency", "type": "string"},
        "description": {"maxLength": 40000, "nullable": True, "type": "string"},
        "metadata": {"additionalProperties": {"maxLength": 500, "type": "string"}, "nullable": True, "type": "object"},
        "status": {"enum": ["active", "canceled", "pending"], "type": "string"},
    }
    # Expandable references to resources spread over the whole API: every closure reaches most schemas.
    for step, offset in enumerate((1, 7, 19, 43)):
        target = names[(index + offset) % count]
        props[f"{target}_ref"] = _expandable(target, nullable=step % 2 == 1, description=f"The {target} this concerns.")
    props["related"] = {
        "items": {
            "anyOf": [
                {"maxLength": 5000, "type": "string"},
                {"$ref": f"#/components/schemas/{names[(index + 3) % count]}"},
            ]
        },
        "type": "array",
    }
    props["history"] = _list_envelope(names[(index + 11) % count], f"/v1/{name}s")
    for part in range(PARTS):
        props[f"details_{part}"] = {
            "anyOf": [{"$ref": f"#/components/schemas/{name}_details_{part}"}],
            "nullable": True,
            "description": "Details, when there are some.",
        }
    return {
        "description": f"A {name} object.",
        "properties": props,
        "required": ["id", "object", "created", "livemode", "status"],
        "title": name.replace("_", " ").title(),
        "type": "object",
        "x-expandableFields": [key for key in props if key.endswith("_ref")],
        "x-resourceId": name,
    }


def _part(index: int, part: int, names: list[str]) -> dict[str, Any]:
    count = len(names)
    target = names[(index + 5 + part * 13) % count]
    return {
        "description": f"Details of a {names[index]}.",
        "properties": {
            "city": {"maxLength": 5000, "nullable": True, "type": "string"},
            "line1": {"maxLength": 5000, "nullable": True, "type": "string"},
            "kind": {"enum": ["a", "b", "c"], "type": "string"},
            "source": _expandable(target, nullable=True, description="Where it came from."),
            "items": {"items": {"$ref": f"#/components/schemas/{names[(index + 29) % count]}"}, "type": "array"},
        },
        "required": ["kind"],
        "type": "object",
    }


def _deleted(name: str) -> dict[str, Any]:
    return {
        "properties": {
            "deleted": {"enum": [True], "type": "boolean"},
            "id": {"maxLength": 5000, "type": "string"},
            "object": {"enum": [name], "type": "string"},
        },
        "required": ["deleted", "id", "object"],
        "type": "object",
    }


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}, "description": "Successful response."}


_ERROR = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/error"}}}, "description": "Error."}


def _form(name: str, names: list[str], index: int) -> dict[str, Any]:
    return {
        "content": {
            "application/x-www-form-urlencoded": {
                "schema": {
                    "additionalProperties": False,
                    "properties": {
                        "amount": {"type": "integer"},
                        "currency": {"format": "currency", "type": "string"},
                        "description": {"maxLength": 5000, "type": "string"},
                        "expand": {"items": {"maxLength": 5000, "type": "string"}, "type": "array"},
                        "metadata": {"additionalProperties": {"type": "string"}, "type": "object"},
                        names[(index + 1) % len(names)]: {"maxLength": 5000, "type": "string"},
                    },
                    "type": "object",
                }
            }
        },
        "required": False,
    }


def payments_spec(resources: int = RESOURCES) -> dict[str, Any]:
    """The synthetic payments API (`resources` x 5 operations)."""
    names = _names()[:resources]
    schemas: dict[str, Any] = {
        "error": {
            "properties": {
                "error": {
                    "properties": {"message": {"type": "string"}, "type": {"type": "string"}},
                    "required": ["type"],
                    "type": "object",
                }
            },
            "required": ["error"],
            "type": "object",
        }
    }
    paths: dict[str, Any] = {}
    expand = {
        "description": "Specifies which fields in the response should be expanded.",
        "explode": True,
        "in": "query",
        "name": "expand",
        "required": False,
        "schema": {"items": {"maxLength": 5000, "type": "string"}, "type": "array"},
        "style": "deepObject",
    }
    for index, name in enumerate(names):
        schemas[name] = _resource(index, names)
        for part in range(PARTS):
            schemas[f"{name}_details_{part}"] = _part(index, part, names)
        schemas[f"deleted_{name}"] = _deleted(name)
        ref = {"$ref": f"#/components/schemas/{name}"}
        ident = {"in": "path", "name": name, "required": True, "schema": {"maxLength": 5000, "type": "string"}}
        paths[f"/v1/{name}s"] = {
            "get": {
                "operationId": f"Get{name.title().replace('_', '')}s",
                "description": f"Returns a list of {name} objects.",
                "parameters": [
                    expand,
                    {"in": "query", "name": "limit", "required": False, "schema": {"type": "integer"}},
                    {"in": "query", "name": "starting_after", "required": False, "schema": {"type": "string"}},
                ],
                "responses": {"200": _json(_list_envelope(name, f"/v1/{name}s")), "default": _ERROR},
            },
            "post": {
                "operationId": f"Post{name.title().replace('_', '')}s",
                "description": f"Creates a {name}.",
                "requestBody": _form(name, names, index),
                "responses": {"200": _json(ref), "default": _ERROR},
            },
        }
        paths[f"/v1/{name}s/{{{name}}}"] = {
            "get": {
                "operationId": f"Get{name.title().replace('_', '')}s{name.title().replace('_', '')}",
                "description": f"Retrieves a {name}.",
                "parameters": [ident, expand],
                "responses": {"200": _json(ref), "default": _ERROR},
            },
            "post": {
                "operationId": f"Post{name.title().replace('_', '')}s{name.title().replace('_', '')}",
                "description": f"Updates a {name}.",
                "parameters": [ident],
                "requestBody": _form(name, names, index),
                "responses": {"200": _json(ref), "default": _ERROR},
            },
            "delete": {
                "operationId": f"Delete{name.title().replace('_', '')}s{name.title().replace('_', '')}",
                "description": f"Deletes a {name}.",
                "parameters": [ident],
                "responses": {"200": _json({"$ref": f"#/components/schemas/deleted_{name}"}), "default": _ERROR},
            },
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Synthetic Payments API", "version": "2024-06-20"},
        "servers": [{"url": "https://api.payments.example"}],
        "security": [{"basicAuth": []}],
        "components": {"schemas": schemas, "securitySchemes": {"basicAuth": {"scheme": "basic", "type": "http"}}},
        "paths": paths,
    }


if __name__ == "__main__":
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        json.dump(payments_spec(), out, indent=1, sort_keys=True)
        out.write("\n")
