"""Security: the spec's schemes this generator can apply (basic, bearer, OAuth2 client credentials
or an out-of-band token, API keys), each with its environment variables, and an operation's
requirements as alternatives of those schemes."""

from __future__ import annotations

from typing import Any

from typed_mcp import names
from typed_mcp.errors import SpecError
from typed_mcp.plan.ir import SecurityScheme
from typed_mcp.plan.reading import nonblank
from typed_mcp.spec.normalize import Document


def security_schemes(doc: Document, prefix: str) -> dict[str, SecurityScheme]:
    """The schemes this generator can apply, by key, with their environment variables under `prefix`;
    one it cannot (mutual TLS, an unknown kind) is left out."""
    raw = ((doc.data.get("components") or {}).get("securitySchemes")) or {}
    raw = raw if isinstance(raw, dict) else {}
    schemes: dict[str, SecurityScheme] = {}
    used_vars: set[str] = set()
    for key, value in raw.items():
        try:
            scheme, _ = doc.deref(value, f"#/components/securitySchemes/{key}")
        except SpecError:
            continue  # as an unknown kind: the operations that need only it are skipped
        if not isinstance(scheme, dict):
            continue
        kind_raw = scheme.get("type")
        base = f"{prefix}_{names.snake_case(key).upper() or names.short_hash(key).upper()}"
        if base in used_vars:
            base = f"{base}_{names.short_hash(key, 4).upper()}"
        used_vars.add(base)
        description = nonblank(scheme.get("description"))
        if kind_raw == "http" and str(scheme.get("scheme", "")).lower() == "basic":
            schemes[key] = SecurityScheme(
                key, "basic", (f"{base}_USERNAME", f"{base}_PASSWORD"), description=description
            )
        elif kind_raw == "http" and str(scheme.get("scheme", "")).lower() == "bearer":
            schemes[key] = SecurityScheme(key, "bearer", (f"{base}_TOKEN",), description=description)
        elif kind_raw == "oauth2" and isinstance(_client_credentials_url(scheme), str):
            # Client credentials: the server fetches (and renews) its own token; a token set directly wins.
            schemes[key] = SecurityScheme(
                key,
                "oauth2",
                (f"{base}_TOKEN",),
                description=description,
                token_url=_client_credentials_url(scheme),
                client_env=(f"{base}_CLIENT_ID", f"{base}_CLIENT_SECRET"),
            )
        elif kind_raw in ("oauth2", "openIdConnect"):
            # An access token obtained out of band is sent as a bearer token.
            schemes[key] = SecurityScheme(key, "bearer", (f"{base}_TOKEN",), description=description)
        elif (
            kind_raw == "apiKey"
            and scheme.get("in") in ("header", "query", "cookie")
            and isinstance(scheme.get("name"), str)
        ):
            schemes[key] = SecurityScheme(
                key,
                "apiKey",
                (f"{base}_KEY",),
                location=scheme["in"],
                param_name=scheme["name"],
                description=description,
            )
    return schemes


def _client_credentials_url(scheme: dict[str, Any]) -> str | None:
    flow = (scheme.get("flows") or {}).get("clientCredentials") if isinstance(scheme.get("flows"), dict) else None
    url = flow.get("tokenUrl") if isinstance(flow, dict) else None
    return url if isinstance(url, str) and url else None


def security_requirements(raw: Any, schemes: dict[str, SecurityScheme]) -> tuple[tuple[str, ...], ...]:
    """An operation's security requirement alternatives, by scheme key: `()` when it needs none, and
    `(("<unsupported>",),)` when it declares some but none this generator can apply."""
    if not isinstance(raw, list):
        return ()
    alternatives: list[tuple[str, ...]] = []
    for requirement in raw:
        if not isinstance(requirement, dict):
            continue
        if any(name not in schemes for name in requirement):
            continue  # a scheme we cannot apply (e.g. mutual TLS): this alternative is unavailable
        alternatives.append(tuple(requirement))
    if raw and not alternatives:
        return (("<unsupported>",),)
    return tuple(alternatives)
