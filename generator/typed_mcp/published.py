"""What may be published in a server's info and its MCP Registry entry (`server.json`): a plain
http(s) URL, a registry name, a one-line description. The config's `[registry]` values are checked
against these rules when the config is read (config.py), and the spec's own when the listing is
planned (plan/listing.py)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

DESCRIPTION_CHARS = 100  # server.json's maxLength for description (and title)
ICON_URL_CHARS = 255  # server.json's maxLength for an icon's src
URL_CHARS = 2000
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
# The registry's pattern (`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`, 3 to 200 characters), with the namespace
# read as reverse DNS (two labels at least, as io.github.OWNER or com.example) the way it authenticates it.
_REGISTRY_NAME = re.compile(rf"^(?=.{{3,200}}$){_LABEL}(?:\.{_LABEL})+/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def registry_name_problem(name: str) -> str | None:
    if _REGISTRY_NAME.match(name):
        return None
    return (
        f"{name!r} is not an MCP Registry name: use the reverse-DNS form io.github.OWNER/NAME"
        " (or com.example/NAME for a domain you own)"
    )


def url_problem(url: str, *, https_only: bool, limit: int = URL_CHARS) -> str | None:
    """Why `url` cannot be published (None when it can): an absolute http(s) URL with a host, no user
    info and no whitespace or control characters, at most `limit` characters."""
    if len(url) > limit:
        return f"longer than {limit} characters"
    if CONTROL.search(url) or any(c.isspace() for c in url):
        return "holds whitespace or control characters"
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return "not a URL"
    schemes = ("https",) if https_only else ("http", "https")
    if parts.scheme not in schemes or not host:
        return f"not an absolute {' or '.join(schemes)} URL"
    if parts.username is not None or parts.password is not None:
        return "holds user info (a credential would be published)"
    return None


def description_problem(text: str) -> str | None:
    if not text.strip():
        return "empty"
    if CONTROL.search(text):
        return "holds control characters"
    if len(text.strip()) > DESCRIPTION_CHARS:
        return f"longer than {DESCRIPTION_CHARS} characters (the MCP Registry's limit)"
    return None
