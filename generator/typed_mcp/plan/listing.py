"""How the server presents itself: the description, website and icon it gives in its server info (and
its tools' icons), and its MCP Registry entry (`server.json`: a registry name, a hosted URL).

The spec supplies the defaults (`info.description`'s first sentence, `externalDocs.url` or
`info.contact.url`, the `info.x-logo.url` ReDoc and APIs.guru use); the config's `[registry]` table
overrides each one. Spec text is untrusted: a URL is kept only when it is a plain http(s) URL
(https for icons and remotes, as the registry requires), and the description is one sentence of
plain text, short enough for the registry and for the server info stamped on every 2026-07-28 result.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from typed_mcp.plan import prose
from typed_mcp.plan.ir import Icon, Listing
from typed_mcp.plan.reading import mapping

if TYPE_CHECKING:
    from typed_mcp.plan.curation import RegistryConfig

DESCRIPTION_CHARS = 100  # server.json's maxLength for description (and title)
ICON_URL_CHARS = 255  # server.json's maxLength for an icon's src
URL_CHARS = 2000
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
# The registry's pattern (`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`, 3 to 200 characters), with the namespace
# read as reverse DNS (two labels at least, as io.github.OWNER or com.example) the way it authenticates it.
_REGISTRY_NAME = re.compile(rf"^(?=.{{3,200}}$){_LABEL}(?:\.{_LABEL})+/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_ICON_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".svg": "image/svg+xml",
    ".webp": "image/webp",
}


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
    if _CONTROL.search(url) or any(c.isspace() for c in url):
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
    if _CONTROL.search(text):
        return "holds control characters"
    if len(text.strip()) > DESCRIPTION_CHARS:
        return f"longer than {DESCRIPTION_CHARS} characters (the MCP Registry's limit)"
    return None


def shorten(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """`text` on one line without control characters, cut at a word's end to at most `limit` characters."""
    return prose.clip(" ".join(_CONTROL.sub(" ", text).split()), limit)


# An ATX heading line: a description that opens with `# Introduction` is introduced, not described.
_HEADING = re.compile(r"^[ ]{0,3}#{1,6}(?:[ \t][^\n]*)?$", re.MULTILINE)


def first_sentence(text: str) -> str:
    """The first sentence of a description's first paragraph that is no heading, as plain text (spec
    prose is read by `prose`), at most DESCRIPTION_CHARS characters."""
    return shorten(prose.first_sentence(_HEADING.sub("", text), DESCRIPTION_CHARS))


def _spec_url(node: Any, key: str) -> str | None:
    value = node.get(key) if isinstance(node, dict) else None
    return value.strip() if isinstance(value, str) and value.strip() else None


def icon(src: str) -> Icon:
    """An icon at `src`, its MIME type named when its file extension says it."""
    path = urlsplit(src).path.lower()
    return Icon(src=src, mime_type=next((kind for ext, kind in _ICON_TYPES.items() if path.endswith(ext)), None))


def listing(data: dict[str, Any], title: str, registry: RegistryConfig | None, warnings: list[str]) -> Listing:
    """The listing of the API `data` (the spec document) titled `title`, the config's `[registry]`
    overriding the spec; a spec URL that cannot be published is left out with a warning."""
    info = mapping(data.get("info"))
    config = registry
    description = (config.description.strip() if config and config.description else None) or first_sentence(
        described if isinstance(described := info.get("description"), str) else ""
    )
    website = config.website_url if config and config.website_url else None
    if website is None:
        for where, found in (
            ("externalDocs.url", _spec_url(data.get("externalDocs"), "url")),
            ("info.contact.url", _spec_url(info.get("contact"), "url")),
        ):
            if found is not None:
                problem = url_problem(found, https_only=False)
                if problem is None:
                    website = found
                    break
                warnings.append(f"{where}: {problem}: not given as the server's website")
    logo = config.icon if config and config.icon else None
    if logo is None and (found := _spec_url(info.get("x-logo"), "url")) is not None:
        problem = url_problem(found, https_only=True, limit=ICON_URL_CHARS)
        if problem is None:
            logo = found
        else:
            warnings.append(f"info.x-logo.url: {problem}: no icon")
    return Listing(
        title=shorten(title),
        description=description or shorten(f"Tools for {title}, one per REST operation."),
        website_url=website,
        icons=(icon(logo),) if logo else (),
        registry_name=config.name if config else None,
        remote_url=config.remote_url if config else None,
        remote_auth=config.remote_auth if config else "forwarded",
    )
