"""`--auth oauth`: the server as an OAuth 2.1 resource server (the MCP authorization specification).

The MCP SDK does the protocol: Protected Resource Metadata (RFC 9728) at
`/.well-known/oauth-protected-resource<path of the resource URL>`, a 401 with
`WWW-Authenticate: Bearer resource_metadata="..."` for a request without a valid token, a 403 for
one without the required scopes. This module is the SDK's `TokenVerifier`: it asks the user's
authorization server about each token by introspection (RFC 7662) and accepts only an active,
unexpired token issued for this server's resource URL (its audience), by the configured issuer.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from typing import Any

import httpx2
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl

from .options import HostingError
from .results import UpstreamError, parse_json
from .urls import token_url_allowed

logger = logging.getLogger(__name__)
TIMEOUT = 10.0  # seconds for one introspection request


@dataclass(frozen=True)
class OAuthResource:
    """Where tokens are checked and what they must say."""

    resource: str  # this server's URL as clients reach it (the token audience), e.g. https://mcp.example.com/mcp
    issuer: str  # the authorization server, advertised in the metadata
    introspection_url: str
    client_id: str  # this server's own client at the authorization server, for introspection
    client_secret: str
    scopes: tuple[str, ...] = ()  # every one is required

    @classmethod
    def from_options(cls, env: str, **options: str | None) -> OAuthResource:
        """From `--oauth-*` options, else `<PREFIX>_OAUTH_*` variables; the secret only from the
        environment (a command line is visible to every user of the machine)."""
        values = {}
        for key, var in _VARIABLES.items():
            value = options.get(key) if key != "client_secret" else None
            values[key] = (value if value is not None else os.environ.get(f"{env}_{var}", "")).strip()
        missing = [f"{env}_{var}" for key, var in _VARIABLES.items() if key != "scopes" and not values[key]]
        if missing:
            raise HostingError(f"--auth oauth needs {', '.join(missing)} (or the matching --oauth-* options)")
        for key in ("resource", "issuer", "introspection_url"):
            if not token_url_allowed(values[key]):
                raise HostingError(f"{env}_{_VARIABLES[key]} must be an https URL (http only on loopback)")
        scopes = tuple(dict.fromkeys(values.pop("scopes").replace(",", " ").split()))
        return cls(scopes=scopes, **values)

    def settings(self) -> AuthSettings:
        # validate_token_resource: the SDK checks the audience too, after the verifier.
        return AuthSettings(
            issuer_url=AnyHttpUrl(self.issuer),
            resource_server_url=AnyHttpUrl(self.resource),
            required_scopes=list(self.scopes) or None,
            validate_token_resource=True,
        )


_VARIABLES = {
    "resource": "OAUTH_RESOURCE",
    "issuer": "OAUTH_ISSUER",
    "introspection_url": "OAUTH_INTROSPECTION_URL",
    "client_id": "OAUTH_INTROSPECTION_CLIENT",
    "client_secret": "OAUTH_INTROSPECTION_SECRET",
    "scopes": "OAUTH_SCOPES",
}


class IntrospectionVerifier:
    """The SDK's `TokenVerifier` protocol, by RFC 7662 introspection. A token is never cached: a
    revoked one stops working at once (one introspection request per MCP request)."""

    def __init__(self, config: OAuthResource) -> None:
        self.config = config

    async def verify_token(self, token: str) -> AccessToken | None:
        config = self.config
        try:
            # trust_env=False: the client secret and the token go to this URL only, not through
            # a proxy from the environment; no redirect is followed.
            async with httpx2.AsyncClient(timeout=TIMEOUT, trust_env=False) as client:
                response = await client.post(
                    config.introspection_url,
                    data={"token": token, "token_type_hint": "access_token"},
                    auth=(config.client_id, config.client_secret),
                    headers={"accept": "application/json"},
                )
            data = parse_json(response.content) if response.status_code == 200 else None
        except (httpx2.HTTPError, UpstreamError) as exc:
            logger.warning("token introspection failed: %s", type(exc).__name__)
            return None
        if not isinstance(data, dict):
            logger.warning("token introspection answered HTTP %s without a JSON object", response.status_code)
            return None
        reason = _refusal(data, config)
        if reason:
            logger.info("bearer token refused: %s", reason)
            return None
        scope = data.get("scope")
        return AccessToken(
            token=token,
            client_id=str(data.get("client_id") or ""),
            scopes=scope.split() if isinstance(scope, str) else [],
            expires_at=int(data["exp"]) if _number(data.get("exp")) else None,
            resource=config.resource,
            subject=data["sub"] if isinstance(data.get("sub"), str) else None,
            claims={"iss": data["iss"]} if isinstance(data.get("iss"), str) else None,
        )


def _refusal(data: dict[str, Any], config: OAuthResource) -> str | None:
    """Why an introspection answer does not admit the token; None when it does."""
    if data.get("active") is not True:
        return "not active"
    exp = data.get("exp")
    if exp is not None and (not _number(exp) or exp <= time.time()):
        return "expired"
    audience = data.get("aud")
    audiences = [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
    if not any(isinstance(a, str) and _same_url(a, config.resource) for a in audiences):
        return "not issued for this resource (aud)"
    issuer = data.get("iss")
    if issuer is not None and not (isinstance(issuer, str) and _same_url(issuer, config.issuer)):
        return "issued by another issuer (iss)"
    return None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same_url(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")
