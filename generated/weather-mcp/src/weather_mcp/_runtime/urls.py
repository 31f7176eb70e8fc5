"""URLs as the runtime judges and names them, for the upstream API's credentials (`credentials.py`, `http.py`)
and for the OAuth resource server of `--auth oauth` (`introspection.py`) alike."""

from __future__ import annotations

import ipaddress

import httpx2


def token_url_allowed(url: str) -> bool:
    """https, or http to a loopback address (a local token service)."""
    try:
        parsed = httpx2.URL(url)
    except httpx2.InvalidURL:
        return False
    if parsed.scheme == "https" and parsed.host:
        return True
    if parsed.scheme != "http":
        return False
    if parsed.host == "localhost":
        return True
    try:
        return ipaddress.ip_address(parsed.host).is_loopback
    except ValueError:
        return False


def origin(url: httpx2.URL) -> str:
    """`scheme://host[:port]`: where a request goes, without its path, query or user info."""
    return f"{url.scheme}://{url.host}" + (f":{url.port}" if url.port else "")
