"""`server.json`: the package's entry in the official MCP Registry (schema 2025-12-11), written when
the config's `[registry]` gives a name. The package is the PyPI distribution, run over stdio with
`uvx` (as the README's client setups run it), with every environment variable it reads; a hosted
deployment's URL is a streamable HTTP remote. Built as data and dumped with `json`: spec text can
only ever be a JSON string value here."""

from __future__ import annotations

import json
from typing import Any

from typed_mcp.plan.ir import ApiPlan, Icon

SERVER_JSON = "server.json"
SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
PYPI = "pypi"


def icons(found: tuple[Icon, ...]) -> list[dict[str, str]]:
    """Icons as MCP and the registry write them (`src`, `mimeType`)."""
    return [{"src": i.src, **({"mimeType": i.mime_type} if i.mime_type else {})} for i in found]


def environment_variable(var: dict[str, Any]) -> dict[str, Any]:
    """One of the package's variables (`ApiPlan.variables`) as the registry describes an input."""
    about = str(var["about"])
    entry: dict[str, Any] = {
        "name": var["name"],
        "description": about[:1].upper() + about[1:],
        "isRequired": bool(var.get("required")),
        "isSecret": bool(var.get("secret")),
    }
    if "default" in var:
        entry["default"] = str(var["default"])
    return entry


def server_json(plan: ApiPlan, version: str, environment: list[dict[str, Any]]) -> str | None:
    """The file's text, or None when the config names no registry entry."""
    listing = plan.listing
    if listing.registry_name is None:
        return None
    server: dict[str, Any] = {"$schema": SCHEMA, "name": listing.registry_name}
    if listing.title:
        server["title"] = listing.title
    server["description"] = listing.description
    server["version"] = version
    if listing.website_url:
        server["websiteUrl"] = listing.website_url
    if listing.icons:
        server["icons"] = icons(listing.icons)
    package: dict[str, Any] = {
        "registryType": PYPI,
        "identifier": plan.package_name,
        "version": version,
        "runtimeHint": "uvx",
        "transport": {"type": "stdio"},
        "environmentVariables": [environment_variable(var) for var in environment],
    }
    server["packages"] = [package]
    if listing.remote_url:
        remote: dict[str, Any] = {"type": "streamable-http", "url": listing.remote_url}
        if listing.remote_auth == "forwarded":  # the deployment runs --auth forwarded: the API's credential
            remote["headers"] = [
                {
                    "name": "Authorization",
                    "description": "The API's own credential (e.g. Bearer TOKEN), sent upstream as is",
                    "isRequired": False,
                    "isSecret": True,
                }
            ]
        server["remotes"] = [remote]
    return json.dumps(server, indent=2, ensure_ascii=False) + "\n"
