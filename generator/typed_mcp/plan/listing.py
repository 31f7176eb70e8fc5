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
from typing import Any
from urllib.parse import urlsplit

from typed_mcp.config import RegistryConfig
from typed_mcp.plan import prose
from typed_mcp.plan.ir import Icon, Listing
from typed_mcp.plan.reading import mapping
from typed_mcp.published import CONTROL, DESCRIPTION_CHARS, ICON_URL_CHARS, url_problem

_ICON_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".svg": "image/svg+xml",
    ".webp": "image/webp",
}


def shorten(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """`text` on one line without control characters, cut at a word's end to at most `limit` characters."""
    return prose.clip(" ".join(CONTROL.sub(" ", text).split()), limit)


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
