"""The bundle's `manifest.json` (MCPB manifest 0.4), from what the generated package says of itself:
`typed-mcp.json` (names, version, the environment it reads), `pyproject.toml` (description) and
`catalog.json` (the tools, listed for the host's display)."""

from __future__ import annotations

from typing import Any

MANIFEST_VERSION = "0.4"
ENTRY_POINT = "server/main.py"
LIB = "server/lib"
PLATFORMS = {"darwin": "darwin", "win32": "win32", "linux": "linux"}  # sys.platform -> MCPB platform


def user_config_key(env_prefix: str, name: str) -> str:
    """`WEATHER_MCP_BASE_URL` -> `base_url`: the user_config key of an environment variable."""
    return name.removeprefix(f"{env_prefix}_").lower()


def user_config(env_prefix: str, environment: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One string field per variable, `sensitive` for secrets. A field the package can run without
    gets a default (the spec's base URL, else empty), because a host substitutes nothing for an
    unset field without one and the literal `${user_config.x}` would become the variable's value;
    the runtime reads an empty variable as unset."""
    fields: dict[str, dict[str, Any]] = {}
    for var in environment:
        about = str(var["about"])
        field: dict[str, Any] = {
            "type": "string",
            "title": about[:1].upper() + about[1:],
            "description": f"Sets {var['name']}.",
        }
        if var.get("required"):  # the base URL when the spec names no server: nothing to call without it
            field["required"] = True
        else:
            field["required"] = False
            field["default"] = str(var.get("default", ""))
        if var.get("secret"):
            field["sensitive"] = True
        fields[user_config_key(env_prefix, var["name"])] = field
    return fields


def bundle_manifest(
    meta: dict[str, Any],
    description: str,
    tools: list[dict[str, Any]],
    *,
    author: str,
    python: tuple[int, int],
    platform: str,
) -> dict[str, Any]:
    """The manifest for `meta` (typed-mcp.json) whose lib/ was built for `python` on `platform`:
    compiled dependencies (pydantic-core) bind the bundle to both, so the manifest says so."""
    env_prefix = meta["module"].upper()
    environment = meta.get("environment") or []
    env = {"PYTHONPATH": "${__dirname}/" + LIB}
    for var in environment:
        env[var["name"]] = "${user_config." + user_config_key(env_prefix, var["name"]) + "}"
    major, minor = python
    return {
        "manifest_version": MANIFEST_VERSION,
        "name": meta["package"],
        "display_name": meta["api"]["title"],
        "version": meta["version"],
        "description": description,
        "author": {"name": author},
        "server": {
            "type": "python",
            "entry_point": ENTRY_POINT,
            "mcp_config": {
                "command": "python" if platform == "win32" else "python3",
                "args": ["${__dirname}/" + ENTRY_POINT],
                "env": env,
            },
        },
        "user_config": user_config(env_prefix, environment),
        "tools": [{"name": tool["name"], "description": tool_summary(tool)} for tool in tools],
        "compatibility": {
            "platforms": [PLATFORMS[platform]],
            "runtimes": {"python": f">={major}.{minor} <{major}.{minor + 1}"},
        },
    }


def tool_summary(tool: dict[str, Any]) -> str:
    """A tool's title, else the first line of its description (the host shows one line)."""
    text = tool.get("title") or (tool.get("description") or "").strip().split("\n", 1)[0]
    return text or tool["name"]
