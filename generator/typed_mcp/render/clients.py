"""The generated README's copy-paste client setups: each client's own config format, the package's
real name and the environment variables it reads (base URL, then each credential), run with `uvx`
straight from the package index. Built as data and dumped with `json`, so every snippet parses (a
test runs each one's command through a real client), and every one-click install link is that very
JSON, encoded as the client reads it (a test decodes each link and compares)."""

from __future__ import annotations

import base64
import json
import re
import shlex
from dataclasses import dataclass
from urllib.parse import quote

from typed_mcp.plan.ir import ApiPlan

HOSTED_URL = "https://mcp.example.com/mcp"  # where the README's hosted examples say the server runs
# Cursor's install deeplink, and the web page that opens it (GitHub and PyPI render no cursor: link):
# `config` is the base64 of the server entry's JSON (cursor.com/docs, MCP install links).
CURSOR_LINK = "cursor://anysphere.cursor-deeplink/mcp/install"
CURSOR_WEB_LINK = "https://cursor.com/en/install-mcp"
# VS Code's URL handler reads the URL-encoded JSON of `--add-mcp` (name, the server entry, inputs);
# its redirect page opens it from a web page (code.visualstudio.com, MCP developer guide).
VSCODE_LINK = "vscode:mcp/install?"
VSCODE_WEB_LINK = "https://insiders.vscode.dev/redirect?url="
# The spec's server URL is untrusted text: shown only when it cannot end a Markdown code fence or a line.
_PLAIN_URL = re.compile(r"^https?://[A-Za-z0-9._~:/?#@!$&'()*+,;=%\[\]-]+$")


@dataclass(frozen=True)
class ClientSetups:
    env: list[tuple[str, str, bool]]  # (variable, example value, is a credential)
    claude_desktop: str  # claude_desktop_config.json
    claude_code: str  # `claude mcp add ...`
    cursor: str  # .cursor/mcp.json
    vscode: str  # .vscode/mcp.json
    claude_code_hosted: str
    cursor_hosted: str
    vscode_hosted: str
    hosted_url: str
    cursor_link: str  # cursor://...: the entry of `cursor`, base64 JSON
    cursor_web_link: str  # the same query on Cursor's web page
    vscode_add: str  # the JSON `code --add-mcp` and VS Code's install link take
    vscode_link: str  # vscode:mcp/install?<vscode_add, URL-encoded>
    vscode_web_link: str  # the redirect page that opens vscode_link
    code_add_mcp: str  # `code --add-mcp '<vscode_add>'`
    claude_code_project: str  # a project's .mcp.json: each variable from the environment Claude Code runs in


def _environment(plan: ApiPlan) -> list[tuple[str, str, bool]]:
    base = plan.default_base_url if plan.default_base_url and _PLAIN_URL.match(plan.default_base_url) else None
    env = [(f"{plan.env_prefix}_BASE_URL", base or "https://api.example.com", False)]
    for scheme in plan.schemes.values():
        for var in (*scheme.env_vars, *scheme.client_env):
            env.append((var, "...", True))
    return env


def _input_id(var: str) -> str:
    return var.lower().replace("_", "-")


def _dump(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def client_setups(plan: ApiPlan) -> ClientSetups:
    name = plan.package_name
    env = _environment(plan)
    stdio = {"command": "uvx", "args": [name], "env": {var: value for var, value, _ in env}}
    # VS Code asks for each credential once and stores it (`inputs`): no secret in the file.
    vscode_env = {var: f"${{input:{_input_id(var)}}}" if secret else value for var, value, secret in env}
    inputs = [
        {"type": "promptString", "id": _input_id(var), "description": var, "password": True}
        for var, _, secret in env
        if secret
    ]
    vscode_entry = {"type": "stdio", **stdio, "env": vscode_env}
    vscode: dict[str, object] = {"servers": {name: vscode_entry}}
    if inputs:
        vscode["inputs"] = inputs
    code = ["claude", "mcp", "add", "--transport", "stdio"]
    code += [part for var, value, _ in env for part in ("--env", f"{var}={value}")]
    code += [name, "--", "uvx", name]
    # --add-mcp and the install link: the server's name, its .vscode/mcp.json entry and the inputs it asks for.
    add = {"name": name, **vscode_entry, **({"inputs": inputs} if inputs else {})}
    compact = _compact(add)
    vscode_link = VSCODE_LINK + quote(compact, safe="")
    cursor_query = f"?name={quote(name, safe='')}&config={quote(base64.b64encode(_compact(stdio).encode()), safe='')}"
    # Claude Code expands ${VAR} and ${VAR:-default} in .mcp.json: an unset variable becomes empty,
    # which the package reads as unset (the spec's base URL, no credential), never a literal "${...}".
    project_env = {var: f"${{{var}:-}}" for var, _, _ in env}
    project = {"mcpServers": {name: {"type": "stdio", "command": "uvx", "args": [name], "env": project_env}}}
    header = "Bearer ..."
    hosted = {"url": HOSTED_URL, "headers": {"Authorization": header}}
    code_hosted = ["claude", "mcp", "add", "--transport", "http", name, HOSTED_URL]
    code_hosted += ["--header", f"Authorization: {header}"]
    return ClientSetups(
        env=env,
        claude_desktop=_dump({"mcpServers": {name: stdio}}),
        claude_code=_shell(code),
        cursor=_dump({"mcpServers": {name: stdio}}),
        vscode=_dump(vscode),
        claude_code_hosted=_shell(code_hosted),
        cursor_hosted=_dump({"mcpServers": {name: hosted}}),
        vscode_hosted=_dump({"servers": {name: {"type": "http", **hosted}}}),
        hosted_url=HOSTED_URL,
        cursor_link=CURSOR_LINK + cursor_query,
        cursor_web_link=CURSOR_WEB_LINK + cursor_query,
        vscode_add=_dump(add),
        vscode_link=vscode_link,
        vscode_web_link=VSCODE_WEB_LINK + quote(vscode_link, safe=""),
        code_add_mcp=shlex.join(["code", "--add-mcp", compact]),
        claude_code_project=_dump(project),
    )


def _compact(value: object) -> str:
    """JSON on one line, as a link or a command line carries it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _shell(words: list[str]) -> str:
    """One command line, continued over lines before each option so it stays readable."""
    line = shlex.join(words[:5])
    rest = words[5:]
    parts: list[str] = []
    while rest:
        if rest[0].startswith("--") and len(rest) > 1 and rest[0] != "--":
            parts.append(shlex.join(rest[:2]))
            rest = rest[2:]
        else:
            parts.append(shlex.join(rest))
            break
    return " \\\n    ".join([line, *parts])
